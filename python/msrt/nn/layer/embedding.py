"""Embedding: a lookup table of vectors."""
from ..._tensor import Tensor
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell

__all__ = ["Embedding"]


class Embedding(Cell):
    """Looks up rows of `embedding_table` (vocab_size, embedding_size) at integer indices, as MindSpore
    2.3's `nn.Embedding`: 'normal' initialisation (Normal(0.01)) by default, the row at `padding_idx`
    initialised to zeros. `use_one_hot` computes the same values by a table lookup."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=mstype.int32, padding_idx=None):
        super().__init__()
        name = self.cls_name
        for arg, value in (("vocab_size", vocab_size), ("embedding_size", embedding_size)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
            if value < 1:
                raise ValueError(f"For '{name}', the argument '{arg}' must be positive, but got {value}.")
        if not isinstance(use_one_hot, bool):
            raise TypeError(f"For '{name}', the argument 'use_one_hot' must be bool, "
                            f"but got {type(use_one_hot).__name__}.")
        if dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{name}', the argument 'dtype' must be mindspore.int32 or mindspore.int64, "
                            f"but got {dtype}.")
        if padding_idx is not None:
            if not isinstance(padding_idx, int) or isinstance(padding_idx, bool):
                raise TypeError(f"For '{name}', the argument 'padding_idx' must be int or None, "
                                f"but got {type(padding_idx).__name__}.")
            if not -vocab_size <= padding_idx < vocab_size:
                raise ValueError(f"For '{name}', the 'padding_idx' must be in range [{-vocab_size}, {vocab_size}), "
                                 f"but got {padding_idx}.")
            padding_idx %= vocab_size
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.use_one_hot = use_one_hot
        self.dtype = dtype
        self.padding_idx = padding_idx
        table = initializer(embedding_table, [vocab_size, embedding_size], mstype.float32)
        if padding_idx is not None:
            values = table.asnumpy().copy()
            values[padding_idx] = 0
            table = Tensor(values)
        self.embedding_table = Parameter(table, name="embedding_table")

    def construct(self, ids):
        return _op("embedding", ids, self.embedding_table)

    def extend_repr(self):
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table}, dtype={self.dtype}, "
                f"padding_idx={self.padding_idx}")
