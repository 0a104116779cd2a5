"""Image transforms, as `mindspore.dataset.vision`:

    from msrt.dataset import vision
    ds = ds.map([vision.Resize((32, 32)), vision.Rescale(1 / 255, 0),
                 vision.Normalize(mean=(0.1307,), std=(0.3081,)), vision.HWC2CHW()], "image")
"""
from . import transforms, utils  # mindspore.dataset.vision.transforms and .utils
from .transforms import HWC2CHW, Normalize, Rescale, Resize
from .utils import Inter

__all__ = ["HWC2CHW", "Inter", "Normalize", "Rescale", "Resize", "transforms", "utils"]
