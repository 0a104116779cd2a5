"""Legacy module path of MindSpore 1.x scripts (`mindspore.dataset.vision.c_transforms`)."""
from .transforms import HWC2CHW, Normalize, Rescale, Resize
from .utils import Inter

__all__ = ["HWC2CHW", "Inter", "Normalize", "Rescale", "Resize"]
