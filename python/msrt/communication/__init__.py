"""`mindspore.communication`: collective communication between processes."""
from . import comm_func  # noqa: F401

__all__ = ["comm_func"]
