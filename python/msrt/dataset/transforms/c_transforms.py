"""Legacy module path of MindSpore 1.x scripts (`mindspore.dataset.transforms.c_transforms`)."""
from .transforms import Compose, OneHot, TypeCast

__all__ = ["Compose", "OneHot", "TypeCast"]
