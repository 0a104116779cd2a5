"""`ops.operations.array_ops`: the Primitives that make, reshape, index and
convert tensors, where MindSpore keeps them."""
from ._primitives import (ArgMaxWithValue, ArgMinWithValue, Argmax, Argmin, BroadcastTo, Cast, Concat, DType,
                          ExpandDims, Fill, Fills, Gather, GatherD, GatherV2, Identity, MaskedFill, Meshgrid, Ones,
                          OnesLike, Rank, Reshape, ScalarToTensor, Select, Shape, Size, Slice, Sort, Split, Squeeze,
                          Stack, StopGradient, StridedSlice, TensorScatterElements, Tile, Transpose, Tril, Triu,
                          TupleToArray, Zeros, ZerosLike)

__all__ = ["ArgMaxWithValue", "ArgMinWithValue", "Argmax", "Argmin", "BroadcastTo", "Cast", "Concat", "DType",
           "ExpandDims", "Fill", "Fills", "Gather", "GatherD", "GatherV2", "Identity", "MaskedFill", "Meshgrid",
           "Ones", "OnesLike", "Rank", "Reshape", "ScalarToTensor", "Select", "Shape", "Size", "Slice", "Sort",
           "Split", "Squeeze", "Stack", "StopGradient", "StridedSlice", "TensorScatterElements", "Tile", "Transpose",
           "Tril", "Triu", "TupleToArray", "Zeros", "ZerosLike"]
