"""Legacy module path of MindSpore 1.x scripts (`mindspore.dataset.vision.c_transforms`)."""
from . import transforms as _transforms
from .transforms import *  # noqa: F401,F403 - the transforms, listed once in transforms.__all__
from .utils import Border, Inter

__all__ = _transforms.__all__ + ["Border", "Inter"]
