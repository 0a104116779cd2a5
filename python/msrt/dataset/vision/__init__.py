"""Image transforms, as `mindspore.dataset.vision`:

    from msrt.dataset import vision
    ds = ds.map([vision.Resize((32, 32)), vision.Rescale(1 / 255, 0),
                 vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()], "image")
"""
from . import transforms, utils  # mindspore.dataset.vision.transforms and .utils
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
    "transforms",
    "utils",
]
