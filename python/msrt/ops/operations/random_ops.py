"""`ops.operations.random_ops`: the Primitives that draw random tensors, where MindSpore keeps them."""
from . import _primitives
from .._api import install_module

# The declared ones whose form names this module ("random_ops.Name(...)(...)" in C++).
__all__ = install_module(globals(), "random_ops", vars(_primitives))
