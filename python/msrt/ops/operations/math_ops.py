"""`ops.operations.math_ops`: the arithmetic, comparison, logical and reduction
Primitives, where MindSpore keeps them."""
from ._primitives import (Abs, Add, AddN, AssignAdd, AssignSub, BatchMatMul, CumProd, CumSum, Div, Einsum, Equal, Exp,
                          Floor, FloorDiv, FloorMod, Greater, GreaterEqual, Less, LessEqual, Log, LogicalAnd,
                          LogicalNot, LogicalOr, LogicalXor, MatMul, Maximum, Minimum, Mul, Neg, NotEqual, Pow,
                          RealDiv, Reciprocal, ReduceAll, ReduceAny, ReduceMax, ReduceMean, ReduceMin, ReduceProd,
                          ReduceSum, Rsqrt, Sign, Sqrt, Square, Sub, TensorAdd)

__all__ = ["Abs", "Add", "AddN", "AssignAdd", "AssignSub", "BatchMatMul", "CumProd", "CumSum", "Div", "Einsum",
           "Equal", "Exp", "Floor", "FloorDiv", "FloorMod", "Greater", "GreaterEqual", "Less", "LessEqual", "Log",
           "LogicalAnd", "LogicalNot", "LogicalOr", "LogicalXor", "MatMul", "Maximum", "Minimum", "Mul", "Neg",
           "NotEqual", "Pow", "RealDiv", "Reciprocal", "ReduceAll", "ReduceAny", "ReduceMax", "ReduceMean",
           "ReduceMin", "ReduceProd", "ReduceSum", "Rsqrt", "Sign", "Sqrt", "Square", "Sub", "TensorAdd"]
