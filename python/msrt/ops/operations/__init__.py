"""MindSpore's Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`, ...),
and the modules MindSpore keeps them in (`ops.operations.nn_ops`, `math_ops`,
`array_ops`, `other_ops`, `debug_ops`, `random_ops`): each declared Primitive
names its module in its form ("nn_ops.ReLU()(x)"), and the module also
holds the hand-written ones MindSpore keeps there."""
from . import array_ops, debug_ops, math_ops, nn_ops, other_ops, random_ops  # noqa: F401 - ops.operations.nn_ops etc.
from ._primitives import *  # noqa: F401,F403
from ._primitives import __all__ as _primitives_all

__all__ = list(_primitives_all)
