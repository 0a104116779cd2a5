"""`ops.operations.math_ops`: the arithmetic, comparison, logical and reduction
Primitives, where MindSpore keeps them."""
from . import _primitives
from .._api import install_module

# The declared ones whose form names this module ("math_ops.Name(...)(...)" in C++).
__all__ = install_module(globals(), "math_ops", vars(_primitives))
