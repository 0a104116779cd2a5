"""`ops.operations.array_ops`: the Primitives that make, reshape, index and
convert tensors, where MindSpore keeps them."""
from ._primitives import DType, Rank, ScalarToTensor, Shape, Size, StopGradient, TupleToArray
from . import _primitives
from .._api import install_module

__all__ = ["DType", "Rank", "ScalarToTensor", "Shape", "Size", "StopGradient", "TupleToArray"]
# The declared ones whose form names this module ("array_ops.Name(...)(...)" in C++).
__all__ += install_module(globals(), "array_ops", vars(_primitives))
