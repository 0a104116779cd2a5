"""`common.tensor`: `Tensor`, where MindSpore keeps it."""
from .._tensor import Tensor

__all__ = ["Tensor"]
