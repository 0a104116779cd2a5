"""Padding layers, as MindSpore 2.3 has them: ConstantPad1d/2d/3d, ZeroPad2d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d, over the pad op (constant, reflect, replicate). `padding` is an int (every side of
the last N axes) or a tuple of (left, right) pairs from the last axis backwards, at most N pairs; a
negative amount crops."""
from ...ops import _op
from ..cell import Cell

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]


class _PadNd(Cell):
    _axes = 1  # the N of the name
    _mode = "constant"

    def __init__(self, padding, value=None):
        super().__init__()
        name = self.cls_name
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * (2 * self._axes)
        elif isinstance(padding, (tuple, list)) and all(isinstance(p, int) and not isinstance(p, bool)
                                                        for p in padding):
            padding = tuple(padding)
            if not padding or len(padding) % 2 or len(padding) > 2 * self._axes:
                raise ValueError(f"For '{name}', the length of 'padding' must be even and at most {2 * self._axes}, "
                                 f"but got {len(padding)}.")
        else:
            raise TypeError(f"For '{name}', the argument 'padding' must be int or a tuple of ints, "
                            f"but got {padding!r}.")
        if self._mode == "reflect" and any(p < 0 for p in padding):
            raise ValueError(f"For '{name}', the 'padding' must not be negative, but got {padding}.")
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            raise TypeError(f"For '{name}', the argument 'value' must be int or float, but got {type(value).__name__}.")
        self.padding = padding
        self.value = value

    def construct(self, x):
        rank = len(x.shape)
        if rank not in (self._axes + 1, self._axes + 2):
            raise ValueError(f"For '{self.cls_name}', the input must be {self._axes + 1}-D or {self._axes + 2}-D, "
                             f"but got shape {x.shape}.")
        if self._mode == "constant":
            return _op("pad", x, padding=list(self.padding), mode="constant", value=float(self.value or 0))
        return _op("pad", x, padding=list(self.padding), mode=self._mode)

    def extend_repr(self):
        return f"padding={self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


class ConstantPad1d(_PadNd):
    """Pads the last axis of (C, W) or (N, C, W) with `value`."""

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(_PadNd):
    """Pads the last two axes of (C, H, W) or (N, C, H, W) with `value`."""

    _axes = 2

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad3d(_PadNd):
    """Pads the last three axes of (C, D, H, W) or (N, C, D, H, W) with `value`."""

    _axes = 3

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ZeroPad2d(_PadNd):
    """Pads the last two axes of (C, H, W) or (N, C, H, W) with zeros."""

    _axes = 2

    def __init__(self, padding):
        super().__init__(padding, 0)


class ReflectionPad1d(_PadNd):
    """Pads the last axis by reflection (without repeating the edge)."""

    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad2d(ReflectionPad1d):
    """Pads the last two axes by reflection (without repeating the edge)."""

    _axes = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pads the last three axes by reflection (without repeating the edge)."""

    _axes = 3


class ReplicationPad1d(_PadNd):
    """Pads the last axis by repeating the edge."""

    _mode = "replicate"

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad2d(ReplicationPad1d):
    """Pads the last two axes by repeating the edge."""

    _axes = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pads the last three axes by repeating the edge."""

    _axes = 3
