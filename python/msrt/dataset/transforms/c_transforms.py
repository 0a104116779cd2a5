"""Legacy module path of MindSpore 1.x scripts (`mindspore.dataset.transforms.c_transforms`)."""
from .transforms import Compose, TypeCast

__all__ = ["Compose", "TypeCast"]
