"""Legacy module path of MindSpore 1.x scripts (`mindspore.dataset.vision.c_transforms`)."""
from .transforms import (
    CenterCrop,
    Decode,
    HWC2CHW,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    RandomResizedCrop,
    Rescale,
    Resize,
)
from .utils import Border, Inter

__all__ = [
    "Border",
    "CenterCrop",
    "Decode",
    "HWC2CHW",
    "Inter",
    "Normalize",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "Rescale",
    "Resize",
]
