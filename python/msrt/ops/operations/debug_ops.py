"""`ops.operations.debug_ops`: Print, where MindSpore keeps it."""
from ._primitives import Print
from . import _primitives
from .._api import install_module

__all__ = ["Print"]
# The declared ones whose form names this module ("debug_ops.Name(...)(...)" in C++).
__all__ += install_module(globals(), "debug_ops", vars(_primitives))
