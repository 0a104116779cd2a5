"""`ops.operations.nn_ops`: the neural-network Primitives, where MindSpore keeps them."""
from . import _primitives
from .._api import install_module

# The declared ones whose form names this module ("nn_ops.Name(...)(...)" in C++).
__all__ = install_module(globals(), "nn_ops", vars(_primitives))
