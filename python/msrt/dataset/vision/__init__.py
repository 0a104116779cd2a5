"""Image transforms, as `mindspore.dataset.vision`:

    from msrt.dataset import vision
    ds = ds.map([vision.Resize((32, 32)), vision.Rescale(1 / 255, 0),
                 vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()], "image")
"""
from . import transforms, utils  # mindspore.dataset.vision.transforms and .utils
from .transforms import *  # noqa: F401,F403 - the transforms, listed once in transforms.__all__
from .utils import Border, Inter

__all__ = transforms.__all__ + ["Border", "Inter", "transforms", "utils"]
