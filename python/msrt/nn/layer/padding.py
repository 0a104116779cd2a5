"""Padding layers, as MindSpore 2.3 has them: ConstantPad1d/2d/3d, ZeroPad2d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d, over the pad op (constant, reflect, replicate). `padding` is an int (every side of
the last N axes) or a tuple of (left, right) pairs from the last axis backwards, at most N pairs; a
negative amount crops. And nn.Pad: (before, after) pairs from the first axis, CONSTANT (zeros), REFLECT
(without the edge) or SYMMETRIC (with it)."""
import numpy as np

from ..._tensor import Tensor
from ...common import dtype as mstype
from ...ops import _op
from ..cell import Cell

__all__ = ["Pad", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
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


class Pad(Cell):
    """Pads with `paddings`, one (before, after) pair of non-negative ints per input axis from the
    first; `mode` "CONSTANT" (zeros), "REFLECT" (a mirror without the edge, at most size - 1 a side)
    or "SYMMETRIC" (a mirror with the edge, at most size a side)."""

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()

        def is_pair(p):
            return isinstance(p, tuple) and len(p) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) for v in p)

        if not isinstance(paddings, tuple) or not all(is_pair(p) for p in paddings):
            raise TypeError(f"For 'Pad', the 'paddings' must be a tuple of (before, after) int pairs, "
                            f"but got {paddings!r}.")
        if any(v < 0 for p in paddings for v in p):
            raise ValueError(f"For 'Pad', the 'paddings' must not be negative, but got {paddings}.")
        if not isinstance(mode, str) or mode.upper() not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'Pad', the 'mode' must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', but got {mode!r}.")
        self.paddings = paddings
        self.mode = mode.upper()

    def construct(self, x):
        shape = x.shape
        if len(self.paddings) != len(shape):
            raise ValueError(f"For 'Pad', the 'paddings' must hold one pair per input axis ({len(shape)}), "
                             f"but got {len(self.paddings)} for shape {shape}.")
        if self.mode == "CONSTANT":
            flat = [v for before, after in reversed(self.paddings) for v in (before, after)]
            return _op("pad", x, padding=flat, mode="constant", value=0.0)
        edge = 0 if self.mode == "SYMMETRIC" else 1  # REFLECT leaves the edge out
        for axis, (before, after) in enumerate(self.paddings):
            size = shape[axis]
            if before + edge > size or after + edge > size:
                raise ValueError(f"For 'Pad', with mode {self.mode} the paddings of axis {axis} must be at most "
                                 f"{size - edge}, but got {(before, after)} for shape {shape}.")
            if before or after:
                # a mirror about the edge element (REFLECT) or the edge itself (SYMMETRIC)
                index = np.concatenate([np.arange(before, 0, -1) - 1 + edge, np.arange(size),
                                        size - 1 - edge - np.arange(after)])
                x = _op("gather", x, Tensor(index.astype(np.int64), mstype.int64), axis=axis)
        return x

    def extend_repr(self):
        return f"paddings={self.paddings}, mode={self.mode}"
