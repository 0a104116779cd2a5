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
from .utils import Border, Inter


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


# --------------------------------------------------------------------------
# Crops and flips

def _check_crop_size(size, name="size"):
    """(height, width) from an int or a sequence of two positive ints."""
    if isinstance(size, int) and not isinstance(size, bool):
        check_value(size, (1, INT32_MAX), name)
        return size, size
    if isinstance(size, (tuple, list)) and len(size) == 2:
        for i, value in enumerate(size):
            type_check(value, (int,), f"{name} at dim {i}")
            check_value(value, (1, INT32_MAX), f"{name} at dim {i}")
        return tuple(size)
    raise TypeError(f"{name} should be a single integer or a list/tuple (h, w) of length 2, got {size!r}.")


def _pad(image, top, bottom, left, right, mode=Border.CONSTANT, fill=0):
    """`image` (<H, W> or <H, W, C>) padded on each side; `fill` is a value or one per channel."""
    if not (top or bottom or left or right):
        return image
    if mode != Border.CONSTANT:
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (image.ndim - 2)
        return np.pad(image, widths, mode=mode.value)
    height, width = image.shape[:2]
    out = np.empty((height + top + bottom, width + left + right) + image.shape[2:], image.dtype)
    fill = np.asarray(fill)
    out[...] = fill if fill.ndim == 0 or (image.ndim == 3 and image.shape[2] == fill.size) else fill.flat[0]
    out[top:top + height, left:left + width] = image
    return out


def _image(array, op_name):
    _image_axes(array, array.ndim, op_name)
    if array.ndim > 3:
        raise RuntimeError(f"{op_name}: the input should be an image of shape <H, W> or <H, W, C>, "
                           f"got shape {list(array.shape)}.")
    return array


def _random_generator(tag):
    """A generator for a random transform: from `config.set_seed`'s seed when one is set."""
    from .. import config
    from ..samplers import _generator

    return _generator(config._iterator_seed(), tag)


class CenterCrop(TensorOperation):
    """Crops the centre of `size` (an int for a square, or (height, width)); an image smaller
    than the crop is first padded with zeros (the extra row or column going to the top/left)."""

    _vectorised = True

    def __init__(self, size):
        self._crop = _check_crop_size(size)
        self.size = size

    def _center(self, array, h_axis):
        crop_h, crop_w = self._crop
        height, width = array.shape[h_axis], array.shape[h_axis + 1]
        pad_h, pad_w = max(0, crop_h - height), max(0, crop_w - width)
        if pad_h or pad_w:
            widths = [(0, 0)] * array.ndim
            widths[array.ndim + h_axis] = ((pad_h + 1) // 2, pad_h // 2)
            widths[array.ndim + h_axis + 1] = ((pad_w + 1) // 2, pad_w // 2)
            array = np.pad(array, widths)
            height, width = array.shape[h_axis], array.shape[h_axis + 1]
        top, left = (height - crop_h + 1) // 2, (width - crop_w + 1) // 2  # std::round of half the excess
        index = [slice(None)] * array.ndim
        index[array.ndim + h_axis] = slice(top, top + crop_h)
        index[array.ndim + h_axis + 1] = slice(left, left + crop_w)
        return np.ascontiguousarray(array[tuple(index)])

    def _apply(self, array):
        return self._center(array, _image_axes(array, array.ndim, "CenterCrop")[0])

    def _apply_rows(self, rows):
        return self._center(rows, _image_axes(rows, rows.ndim - 1, "CenterCrop")[0])


def _check_padding(padding):
    """(top, bottom, left, right) from an int, (left/right, top/bottom) or (left, top, right, bottom)."""
    if padding is None:
        return 0, 0, 0, 0
    if isinstance(padding, int) and not isinstance(padding, bool):
        check_value(padding, (0, INT32_MAX), "padding")
        return padding, padding, padding, padding
    if isinstance(padding, (tuple, list)) and len(padding) in (2, 4):
        for i, value in enumerate(padding):
            type_check(value, (int,), f"padding[{i}]")
            check_value(value, (0, INT32_MAX), f"padding[{i}]")
        if len(padding) == 2:
            return padding[1], padding[1], padding[0], padding[0]
        left, top, right, bottom = padding
        return top, bottom, left, right
    raise TypeError(f"padding should be an int or a list/tuple of 2 or 4 ints, got {padding!r}.")


def _check_fill_value(fill_value):
    if isinstance(fill_value, int) and not isinstance(fill_value, bool):
        check_value(fill_value, (0, 255), "fill_value")
        return fill_value
    if isinstance(fill_value, tuple) and len(fill_value) == 3:
        for i, value in enumerate(fill_value):
            type_check(value, (int,), f"fill_value[{i}]")
            check_value(value, (0, 255), f"fill_value[{i}]")
        return fill_value
    raise TypeError(f"fill_value should be a single integer or a 3-tuple, got {fill_value!r}.")


class RandomCrop(TensorOperation):
    """Crops a random region of `size` after padding the image by `padding` (an int, (left/right,
    top/bottom) or (left, top, right, bottom)); with `pad_if_needed` an image smaller than the
    crop is padded on both sides by the difference. `fill_value` and `padding_mode` say how."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        self._crop = _check_crop_size(size)
        self._padding = _check_padding(padding)
        type_check(pad_if_needed, (bool,), "pad_if_needed")
        self._fill = _check_fill_value(fill_value)
        type_check(padding_mode, (Border,), "padding_mode")
        self.size, self.padding, self.pad_if_needed = size, padding, pad_if_needed
        self.fill_value, self.padding_mode = fill_value, padding_mode
        self._rng = _random_generator(21)

    def _apply(self, array):
        image = _pad(_image(array, "RandomCrop"), *self._padding, self.padding_mode, self._fill)
        crop_h, crop_w = self._crop
        if self.pad_if_needed:
            extra_w, extra_h = max(0, crop_w - image.shape[1]), max(0, crop_h - image.shape[0])
            image = _pad(image, extra_h, extra_h, extra_w, extra_w, self.padding_mode, self._fill)
        height, width = image.shape[:2]
        if crop_h > height or crop_w > width:
            raise RuntimeError(
                f"RandomCrop: invalid crop size, crop size is bigger than the image dimensions, got crop height: "
                f"{crop_h}, crop width: {crop_w}, padded image height: {height}, width: {width}."
            )
        left = int(self._rng.integers(0, width - crop_w + 1))
        top = int(self._rng.integers(0, height - crop_h + 1))
        return np.ascontiguousarray(image[top:top + crop_h, left:left + crop_w])


def _check_range(values, name, lower):
    if not isinstance(values, (tuple, list)) or len(values) != 2:
        raise TypeError(f"{name} should be a list/tuple of length 2, got {values!r}.")
    for i, value in enumerate(values):
        type_check(value, (int, float), f"{name}[{i}]")
    if values[0] < lower or values[0] > values[1]:
        raise ValueError(f"{name} should be in (min, max) format with {lower} <= min <= max, got {values}.")
    return float(values[0]), float(values[1])


class RandomResizedCrop(TensorOperation):
    """Crops a random region, of a random area fraction within `scale` and an aspect ratio
    (width / height) within `ratio` drawn log-uniformly, and resizes it to `size`. After
    `max_attempts` regions that do not fit, the centre region of the nearest allowed ratio."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        self._size = _check_crop_size(size)
        self._scale = _check_range(scale, "scale", 0)
        self._ratio = _check_range(ratio, "ratio", 0)
        if self._ratio[0] <= 0:
            raise ValueError(f"ratio should be positive, got {ratio}.")
        type_check(interpolation, (Inter,), "interpolation")
        if interpolation not in (Inter.NEAREST, Inter.LINEAR):
            raise NotImplementedError(
                f"RandomResizedCrop: msrt implements Inter.LINEAR and Inter.NEAREST, not {interpolation!r}."
            )
        type_check(max_attempts, (int,), "max_attempts")
        check_value(max_attempts, (1, INT32_MAX), "max_attempts")
        self.size, self.scale, self.ratio = size, scale, ratio
        self.interpolation, self.max_attempts = interpolation, max_attempts
        self._rng = _random_generator(22)

    def _crop_box(self, height, width):
        """(top, left, crop height, crop width), MindSpore's RandomCropAndResize sampling."""
        log_low, log_high = np.log(self._ratio[0]), np.log(self._ratio[1])
        for _ in range(self.max_attempts):
            scale = self._rng.uniform(*self._scale)
            aspect = np.exp(self._rng.uniform(log_low, log_high))
            crop_w = int(np.round(np.sqrt(height * width * scale * aspect)))
            crop_h = int(np.round(crop_w / aspect))
            if 0 < crop_w <= width and 0 < crop_h <= height:
                left = int(self._rng.integers(0, width - crop_w + 1))
                top = int(self._rng.integers(0, height - crop_h + 1))
                return top, left, crop_h, crop_w
        aspect = width / height
        crop_h, crop_w = height, width
        if aspect < self._ratio[0]:
            crop_h = int(np.round(width / self._ratio[0]))
        elif aspect > self._ratio[1]:
            crop_w = int(np.round(height * self._ratio[1]))
        crop_h, crop_w = max(1, min(crop_h, height)), max(1, min(crop_w, width))
        return (height - crop_h) // 2, (width - crop_w) // 2, crop_h, crop_w

    def _apply(self, array):
        image = _image(array, "RandomResizedCrop")
        top, left, crop_h, crop_w = self._crop_box(*image.shape[:2])
        return _resize(image[top:top + crop_h, left:left + crop_w], image.ndim, self._size, self.interpolation)


class RandomHorizontalFlip(TensorOperation):
    """Flips the image left to right with probability `prob`."""

    _vectorised = True

    def __init__(self, prob=0.5):
        type_check(prob, (int, float), "prob")
        check_value(prob, (0.0, 1.0), "prob")
        self.prob = prob
        self._rng = _random_generator(23)

    def _apply(self, array):
        w_axis = _image_axes(array, array.ndim, "RandomHorizontalFlip")[1]
        return np.flip(array, w_axis).copy() if self._rng.random() < self.prob else array

    def _apply_rows(self, rows):
        w_axis = _image_axes(rows, rows.ndim - 1, "RandomHorizontalFlip")[1]
        flip = self._rng.random(len(rows)) < self.prob
        out = rows.copy()
        out[flip] = np.flip(rows[flip], w_axis)
        return out


class RandomVerticalFlip(TensorOperation):
    """Flips the image upside down with probability `prob`."""

    _vectorised = True

    def __init__(self, prob=0.5):
        type_check(prob, (int, float), "prob")
        check_value(prob, (0.0, 1.0), "prob")
        self.prob = prob
        self._rng = _random_generator(24)

    def _apply(self, array):
        h_axis = _image_axes(array, array.ndim, "RandomVerticalFlip")[0]
        return np.flip(array, h_axis).copy() if self._rng.random() < self.prob else array

    def _apply_rows(self, rows):
        h_axis = _image_axes(rows, rows.ndim - 1, "RandomVerticalFlip")[0]
        flip = self._rng.random(len(rows)) < self.prob
        out = rows.copy()
        out[flip] = np.flip(rows[flip], h_axis)
        return out


def decode_image(data):
    """The JPEG or PNG image in `data` (bytes, or a 1-D uint8 array of them) as an
    (H, W, 3) uint8 RGB array, decoded in C++ (src/io/image.cc, fuzzed)."""
    from ... import _C

    return _C._decode_image(data)


class Decode(TensorOperation):
    """Decodes a JPEG or PNG image, given as a 1-D uint8 array of its bytes, to an
    <H, W, 3> uint8 RGB array, as `mindspore.dataset.vision.Decode`.

    Grayscale and palette images are expanded to RGB, CMYK JPEGs converted, an alpha
    channel is dropped and 16-bit PNG samples keep their high byte. MindSpore's other formats (BMP,
    TIFF, GIF, WebP) are not decoded by msrt.

    Args:
        to_pil (bool, optional): must be False (the default): msrt has no PIL, and
            to_pil=True raises NotImplementedError.

    Raises:
        TypeError: `to_pil` is not a bool.
        NotImplementedError: to_pil=True.
        RuntimeError (when called): the input is not a 1-D byte array, is not JPEG or
            PNG, or is corrupt or truncated.
    """

    def __init__(self, to_pil=False):
        type_check(to_pil, (bool,), "to_pil")
        if to_pil:
            raise NotImplementedError("Decode(to_pil=True): msrt has no PIL; decode to a NumPy array with "
                                      "to_pil=False (the default).")
        self.to_pil = to_pil

    def _apply(self, array):
        return decode_image(array)


__all__ = ["CenterCrop", "Decode", "HWC2CHW", "Normalize", "RandomCrop", "RandomHorizontalFlip", "RandomResizedCrop",
           "RandomVerticalFlip", "Rescale", "Resize"]
