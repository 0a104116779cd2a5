"""Legacy module path of MindSpore 1.x scripts (`mindspore.dataset.transforms.c_transforms`)."""
from .transforms import Compose, Concatenate, Fill, OneHot, PadEnd, Slice, TypeCast

__all__ = ["Compose", "Concatenate", "Fill", "OneHot", "PadEnd", "Slice", "TypeCast"]
