"""Every registered op has an op-parity test."""
import importlib
import pathlib

import msrt

from . import harness


def test_every_op_has_a_parity_test():
    here = pathlib.Path(__file__).parent
    for path in sorted(here.glob("test_*.py")):
        if path.stem != "test_coverage":
            importlib.import_module(f"{__package__}.{path.stem}")
    missing = sorted(set(msrt._C.op_names()) - harness.COVERED)
    assert not missing, f"ops without a parity test: {missing}"
