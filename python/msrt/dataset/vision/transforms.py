"""Image transforms (`msrt.dataset.vision`, as `mindspore.dataset.vision`).

Images are NumPy arrays <H, W> or <H, W, C> (HWC, as MindSpore's C++ ops take
them). Each transform here works on one image when called and has a
vectorised path over a stack of images that `map` uses (see
`msrt.dataset.transforms.transforms`).
"""
import functools
import numbers

import numpy as np

from .._validate import FLOAT_MAX_INTEGER, FLOAT_MIN_INTEGER, INT32_MAX, check_value, type_check
from ..transforms.transforms import TensorOperation
from .utils import Inter


def _image_axes(array, row_ndim, op_name):
    """(H axis, W axis) of images with `row_ndim` dimensions each, stored in `array`."""
    if row_ndim < 2:
        raise RuntimeError(
            f"{op_name}: the input should be an image of shape <H, W> or <H, W, C>, "
            f"got shape {list(array.shape[array.ndim - row_ndim:])}."
        )
    return (-2, -1) if row_ndim == 2 else (-3, -2)


# --------------------------------------------------------------------------
# Resize

@functools.lru_cache(maxsize=64)
def _linear_weights(src, dst, dtype):
    """(dst, src) matrix of bilinear weights, OpenCV's INTER_LINEAR convention.

    Output pixel d samples the source at (d + 0.5) * src / dst - 0.5 (pixel
    centres aligned), clamped to [0, src - 1]; the two neighbours are weighted
    by the distance, computed in float32 as OpenCV does.
    """
    d = np.arange(dst, dtype=np.float64)
    position = ((d + 0.5) * (src / dst) - 0.5).astype(np.float32)
    left = np.floor(position).astype(np.int64)
    fraction = position - left.astype(np.float32)
    below = left < 0
    left[below], fraction[below] = 0, 0
    above = left >= src - 1
    left[above], fraction[above] = src - 1, 0
    right = np.minimum(left + 1, src - 1)
    weights = np.zeros((dst, src), np.float64)
    rows = np.arange(dst)
    np.add.at(weights, (rows, left), (np.float32(1) - fraction).astype(np.float64))
    np.add.at(weights, (rows, right), fraction.astype(np.float64))
    weights = weights.astype(dtype)
    weights.setflags(write=False)
    return weights


@functools.lru_cache(maxsize=64)
def _nearest_indices(src, dst):
    """Source index of each output pixel, OpenCV's INTER_NEAREST: floor(d * src / dst)."""
    inverse_scale = 1.0 / (dst / src)
    indices = np.minimum(np.floor(np.arange(dst) * inverse_scale).astype(np.int64), src - 1)
    indices.setflags(write=False)
    return indices


def _resize_linear(array, h_axis, out_h, out_w, work):
    """Bilinear resize of images whose H axis is `h_axis` (W follows it, then C if any).

    Per image, out = Wy @ image @ Wx^T with the (out, in) weight matrices, as
    NumPy matmuls broadcast over the stack of images. Each product is small,
    so BLAS runs it in the calling thread: no worker threads to spin on a
    busy machine.
    """
    lead = array.shape[:array.ndim + h_axis]
    src_h, src_w = array.shape[h_axis], array.shape[h_axis + 1]
    channels = array.shape[array.ndim + h_axis + 2:]  # () or (C,)
    result = array.astype(work).reshape(lead + (src_h, src_w * int(np.prod(channels))))
    if out_h != src_h:
        result = np.matmul(_linear_weights(src_h, out_h, work), result)
    if out_w != src_w:
        weights = _linear_weights(src_w, out_w, work)
        if not channels or channels == (1,):
            result = np.matmul(result, weights.T)
        else:  # contract W with C kept last: Wx @ (W, C) per image row
            result = np.matmul(weights, result.reshape(lead + (out_h, src_w) + channels))
    return np.ascontiguousarray(result).reshape(lead + (out_h, out_w) + channels)


def _output_size(size, height, width):
    if len(size) == 2:
        return size
    # One number: the shorter edge becomes `size`, keeping the aspect ratio (float32, as MindSpore).
    if height < width:
        return size[0], int(np.floor(np.float32(width) / np.float32(height) * np.float32(size[0])))
    return int(np.floor(np.float32(height) / np.float32(width) * np.float32(size[0]))), size[0]


def _resize(array, row_ndim, size, interpolation):
    h_axis, w_axis = _image_axes(array, row_ndim, "Resize")
    if array.dtype == np.bool_ or array.dtype.kind not in "uif":
        raise RuntimeError(f"Resize: unsupported image dtype {array.dtype}.")
    src_h, src_w = array.shape[h_axis], array.shape[w_axis]
    if src_h == 0 or src_w == 0:
        raise RuntimeError(f"Resize: the input image is empty, shape {list(array.shape)}.")
    out_h, out_w = _output_size(size, src_h, src_w)
    if interpolation == Inter.NEAREST:
        result = np.take(array, _nearest_indices(src_h, out_h), axis=h_axis)
        return np.take(result, _nearest_indices(src_w, out_w), axis=w_axis)
    work = np.float64 if array.dtype == np.float64 else np.float32
    result = _resize_linear(array, h_axis, out_h, out_w, work)
    if array.dtype.kind in "ui":
        # Round half up (OpenCV's fixed-point rounding); the cast truncates, which
        # for non-negative values is the floor.
        result += 0.5
        if array.dtype.kind == "i":
            np.floor(result, out=result)
    return result.astype(array.dtype, copy=False)


def _check_resize_size(size):
    if isinstance(size, int) and not isinstance(size, bool):
        check_value(size, (1, FLOAT_MAX_INTEGER))
        return (size,)
    if isinstance(size, (tuple, list)) and len(size) == 2:
        for i, value in enumerate(size):
            type_check(value, (int,), f"size at dim {i}")
            check_value(value, (1, INT32_MAX), f"size at dim {i}")
        return tuple(size)
    raise TypeError("Size should be a single integer or a list/tuple (h, w) of length 2.")


class Resize(TensorOperation):
    """Resizes images to `size`: (height, width), or an int for the shorter edge (keeping
    the aspect ratio). Inter.LINEAR (bilinear, pixel centres aligned as OpenCV's
    INTER_LINEAR) or Inter.NEAREST (OpenCV's INTER_NEAREST). Keeps the dtype; integer
    images are rounded half up."""

    _vectorised = True

    def __init__(self, size, interpolation=Inter.LINEAR):
        self._size = _check_resize_size(size)
        if interpolation is None:
            raise KeyError("Interpolation should not be None")
        type_check(interpolation, (Inter,), "interpolation")
        if interpolation not in (Inter.NEAREST, Inter.LINEAR):
            raise NotImplementedError(
                f"Resize: msrt implements Inter.LINEAR and Inter.NEAREST, not {interpolation!r}."
            )
        self.size = size
        self.interpolation = interpolation

    def _apply(self, array):
        return _resize(array, array.ndim, self._size, self.interpolation)

    def _apply_rows(self, rows):
        return _resize(rows, rows.ndim - 1, self._size, self.interpolation)


# --------------------------------------------------------------------------
# Rescale, Normalize, HWC2CHW

class Rescale(TensorOperation):
    """output = image * rescale + shift, as float32."""

    _vectorised = True

    def __init__(self, rescale, shift):
        type_check(rescale, (numbers.Number,), "rescale")
        type_check(shift, (numbers.Number,), "shift")
        check_value(rescale, (FLOAT_MIN_INTEGER, FLOAT_MAX_INTEGER), "rescale")
        check_value(shift, (FLOAT_MIN_INTEGER, FLOAT_MAX_INTEGER), "shift")
        self.rescale = rescale
        self.shift = shift
        self._scale, self._offset = np.float32(rescale), np.float32(shift)

    def _apply(self, array):
        result = np.multiply(array, self._scale, dtype=np.float32)
        result += self._offset
        return result

    _apply_rows = _apply


def _check_mean_std(mean, std):
    type_check(mean, (list, tuple), "mean")
    type_check(std, (list, tuple), "std")
    if len(mean) != len(std):
        raise ValueError("Length of mean and std must be equal.")
    if not mean:
        raise ValueError("mean and std should not be empty.")
    for i, value in enumerate(mean):
        type_check(value, (int, float), f"mean[{i}]")
        check_value(value, (0, 255), f"mean[{i}]")
    for i, value in enumerate(std):
        type_check(value, (int, float), f"std[{i}]")
        check_value(value, (0, 255), f"std[{i}]", left_open=True)


class Normalize(TensorOperation):
    """output = (image - mean) / std per channel, as float32. Channels are the last axis
    (`is_hwc`) or the first of <C, H, W>; one mean/std value applies to every channel."""

    _vectorised = True

    def __init__(self, mean, std, is_hwc=True):
        _check_mean_std(mean, std)
        type_check(is_hwc, (bool,), "is_hwc")
        self.mean = mean
        self.std = std
        self.is_hwc = is_hwc
        self._mean = np.asarray(mean, np.float32)
        self._std = np.asarray(std, np.float32)

    def _normalize(self, array, row_ndim):
        _image_axes(array, row_ndim, "Normalize")
        count = len(self._mean)
        if row_ndim == 2:
            channels, shape = 1, ()
        else:
            channels = array.shape[-1 if self.is_hwc else -3]
            shape = (count,) if self.is_hwc else (count, 1, 1)
        if count not in (1, channels):
            raise RuntimeError(
                f"Normalize: number of channels does not match the size of mean and std vectors, "
                f"got channels: {channels}, size of mean: {count}."
            )
        if count == 1:
            shape = ()
        result = np.subtract(array, self._mean.reshape(shape), dtype=np.float32)
        result /= self._std.reshape(shape)
        return result

    def _apply(self, array):
        return self._normalize(array, array.ndim)

    def _apply_rows(self, rows):
        return self._normalize(rows, rows.ndim - 1)


class HWC2CHW(TensorOperation):
    """<H, W, C> to <C, H, W>; an <H, W> image is returned unchanged."""

    _vectorised = True

    def _transpose(self, array, row_ndim):
        _image_axes(array, row_ndim, "HWC2CHW")
        if row_ndim == 2:
            return array
        return np.ascontiguousarray(np.moveaxis(array, -1, -3))

    def _apply(self, array):
        return self._transpose(array, array.ndim)

    def _apply_rows(self, rows):
        return self._transpose(rows, rows.ndim - 1)
