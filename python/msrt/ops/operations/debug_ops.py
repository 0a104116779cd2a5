"""`ops.operations.debug_ops`: Print and HookBackward, where MindSpore keeps them."""
from ._primitives import HookBackward, Print
from . import _primitives
from .._api import install_module

__all__ = ["HookBackward", "Print"]
# The declared ones whose form names this module ("debug_ops.Name(...)(...)" in C++).
__all__ += install_module(globals(), "debug_ops", vars(_primitives))
