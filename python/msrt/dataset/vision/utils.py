"""Enums of the vision transforms (as `mindspore.dataset.vision.utils`)."""
from enum import IntEnum


class Inter(IntEnum):
    """Interpolation modes. msrt's Resize implements NEAREST and LINEAR (= BILINEAR)."""

    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5
