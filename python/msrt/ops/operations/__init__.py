"""MindSpore's Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`, ...),
and the modules MindSpore keeps them in (`ops.operations.nn_ops`, `math_ops`,
`array_ops`, `other_ops`, `debug_ops`, `random_ops`, `comm_ops`): each declared Primitive
names its module in its form ("nn_ops.ReLU()(x)"), and the module also
holds the hand-written ones MindSpore keeps there."""
from . import array_ops, comm_ops, debug_ops, math_ops, nn_ops, other_ops, random_ops  # noqa: F401
from ._primitives import *  # noqa: F401,F403
from ._primitives import __all__ as _primitives_all

from .comm_ops import ReduceOp

__all__ = list(_primitives_all) + ["ReduceOp"]
