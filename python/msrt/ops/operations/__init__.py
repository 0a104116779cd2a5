"""MindSpore's Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`, ...),
and the modules MindSpore keeps them in (`ops.operations.nn_ops`, `math_ops`,
`array_ops`, `other_ops`, `debug_ops`), each re-exporting by name the ones
MindSpore keeps there. A declared Primitive none of them names is still in
`ops` and `ops.operations`."""
from . import array_ops, debug_ops, math_ops, nn_ops, other_ops  # noqa: F401 - ops.operations.nn_ops etc.
from ._primitives import *  # noqa: F401,F403
from ._primitives import __all__ as _primitives_all

__all__ = list(_primitives_all)
