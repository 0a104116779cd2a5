"""Runnable examples: `python -m msrt.examples.lenet --help`."""
