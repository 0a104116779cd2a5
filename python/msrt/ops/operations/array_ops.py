"""`ops.operations.array_ops`: the Primitives that make, reshape, index and
convert tensors, where MindSpore keeps them."""
from ._primitives import (ArgMaxWithValue, ArgMinWithValue, Argmax, Argmin, BroadcastTo, Cast, Concat, DType,
                          ExpandDims, Fill, Fills, Gather, GatherV2, Identity, Ones, OnesLike, Rank, Reshape,
                          ScalarToTensor, Select, Shape, Size, Slice, Split, Squeeze, Stack, StopGradient,
                          StridedSlice, Tile, Transpose, TupleToArray, Zeros, ZerosLike)

__all__ = ["ArgMaxWithValue", "ArgMinWithValue", "Argmax", "Argmin", "BroadcastTo", "Cast", "Concat", "DType",
           "ExpandDims", "Fill", "Fills", "Gather", "GatherV2", "Identity", "Ones", "OnesLike", "Rank", "Reshape",
           "ScalarToTensor", "Select", "Shape", "Size", "Slice", "Split", "Squeeze", "Stack", "StopGradient",
           "StridedSlice", "Tile", "Transpose", "TupleToArray", "Zeros", "ZerosLike"]
