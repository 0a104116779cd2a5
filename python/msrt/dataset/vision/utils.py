"""Enums of the vision transforms (as `mindspore.dataset.vision.utils`)."""
from enum import Enum, IntEnum


class Inter(IntEnum):
    """Interpolation modes. msrt's Resize implements NEAREST and LINEAR (= BILINEAR)."""

    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, Enum):
    """How padding fills new pixels: a constant, the edge pixel, a reflection without or with
    the edge pixel repeated."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"
