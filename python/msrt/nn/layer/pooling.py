"""Max and average pooling over fixed and adaptive windows (channels first)."""
from ...ops import _op
from ..cell import Cell
from .conv import _data_format, _ints, _padding6

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]


class _PoolNd(Cell):
    """The window (kernel_size, stride, pad_mode) of an n-D pool, and its op on batched or unbatched input."""

    _op_name = ""

    def _init_window(self, nd, kernel_size, stride, pad_mode):
        name = self.cls_name
        self.kernel_size = _ints(kernel_size, nd, "kernel_size", name)
        self.stride = _ints(stride, nd, "stride", name)
        if not isinstance(pad_mode, str) or pad_mode.upper() not in ("VALID", "SAME", "PAD"):
            raise ValueError(f"For '{name}', the argument 'pad_mode' must be one of ['valid', 'same', 'pad'], "
                             f"but got {pad_mode!r}.")
        self.pad_mode = pad_mode.upper()

    def _pool(self, x, unbatched):
        """The pool of x; an unbatched x is pooled as a batch of one."""
        if unbatched:
            x = _op("expand_dims", x, axis=0)
            return _op("squeeze", _op(self._op_name, x, **self._attrs), axis=[0])
        return _op(self._op_name, x, **self._attrs)


class _Pool2d(_PoolNd):
    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, data_format):
        super().__init__()
        name = self.cls_name
        self._init_window(2, kernel_size, stride, pad_mode)
        if self.pad_mode == "PAD" or padding not in (0, (0, 0), (0, 0, 0, 0)) or ceil_mode:
            raise NotImplementedError(
                f"For '{name}', explicit padding (pad_mode='pad', padding, ceil_mode) is not supported by msrt yet; "
                "use pad_mode='valid' or 'same'."
            )
        self.data_format = _data_format(data_format, name)
        self._attrs = {
            "kernel_size": list(self.kernel_size),
            "strides": list(self.stride),
            "pad_mode": self.pad_mode.lower(),
            "data_format": data_format,
        }

    def construct(self, x):
        return self._pool(x, len(x.shape) == 3)  # unbatched (C, H, W), or (H, W, C)

    def extend_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool2d(_Pool2d):
    """Max over kernel_size windows moved by stride (MindSpore 2.x defaults)."""

    _op_name = "max_pool2d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, data_format="NCHW"):
        if dilation not in (1, (1, 1)) or return_indices:
            raise NotImplementedError("For 'MaxPool2d', 'dilation' and 'return_indices' are not supported by msrt yet.")
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)


class AvgPool2d(_Pool2d):
    """Mean over kernel_size windows moved by stride (MindSpore 2.x defaults)."""

    _op_name = "avg_pool2d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None, data_format="NCHW"):
        if divisor_override is not None:
            raise NotImplementedError("For 'AvgPool2d', 'divisor_override' is not supported by msrt yet.")
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)


class _Pool1d(_Pool2d):
    """A 2-D pool over (N, C, 1, L): kernel (1, k), stride (1, s)."""

    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode):
        name = self.cls_name
        for arg, value in (("kernel_size", kernel_size), ("stride", stride)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
            if value <= 0:
                raise ValueError(f"For '{name}', the argument '{arg}' must be positive, but got {value}.")
        super().__init__((1, kernel_size), (1, stride), pad_mode, padding, ceil_mode, "NCHW")
        self.kernel_size, self.stride = kernel_size, stride

    def construct(self, x):
        rank = len(x.shape)
        if rank not in (2, 3):
            raise ValueError(f"For '{self.cls_name}', the input must be (N, C, L) or (C, L), "
                             f"but got shape {x.shape}.")
        x = _op("expand_dims", x, axis=rank - 1)
        if rank == 2:
            x = _op("expand_dims", x, axis=0)
        y = _op(self._op_name, x, **self._attrs)
        return _op("squeeze", y, axis=[0, 2] if rank == 2 else [2])


class MaxPool1d(_Pool1d):
    """Max over kernel_size windows of (N, C, L) moved by stride (MindSpore 2.x defaults)."""

    _op_name = "max_pool2d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        if dilation != 1 or return_indices:
            raise NotImplementedError("For 'MaxPool1d', 'dilation' and 'return_indices' are not supported by msrt yet.")
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)


class AvgPool1d(_Pool1d):
    """Mean over kernel_size windows of (N, C, L) moved by stride (MindSpore 2.x defaults)."""

    _op_name = "avg_pool2d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)


class _Pool3d(_PoolNd):
    """A 3-D pool of (N, C, D, H, W) or (C, D, H, W) input: pad_mode 'same', 'valid' or 'pad' (with
    padding and ceil_mode)."""

    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, extra=None):
        super().__init__()
        name = self.cls_name
        self._init_window(3, kernel_size, stride, pad_mode)
        if isinstance(padding, (tuple, list)) and len(padding) == 1:
            padding = padding[0]
        self.padding = _padding6(tuple(padding) if isinstance(padding, list) else padding, name)
        if self.pad_mode != "PAD" and any(self.padding):
            raise ValueError(f"For '{name}', the 'padding' must be zero when 'pad_mode' is not 'pad', "
                             f"but got padding {padding} with pad_mode {pad_mode!r}.")
        if not isinstance(ceil_mode, bool):
            raise TypeError(f"For '{name}', the argument 'ceil_mode' must be bool, but got {type(ceil_mode).__name__}.")
        self.ceil_mode = ceil_mode
        self._attrs = {"kernel_size": list(self.kernel_size), "strides": list(self.stride),
                       "pad_mode": self.pad_mode.lower(), "pad": list(self.padding), "ceil_mode": ceil_mode,
                       **(extra or {})}

    def construct(self, x):
        rank = len(x.shape)
        if rank not in (4, 5):
            raise ValueError(f"For '{self.cls_name}', the input must be (N, C, D, H, W) or (C, D, H, W), "
                             f"but got shape {x.shape}.")
        return self._pool(x, rank == 4)

    def extend_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, ceil_mode={self.ceil_mode}")


class MaxPool3d(_Pool3d):
    """Max over kernel_size windows of (N, C, D, H, W) moved by stride (MindSpore 2.x defaults)."""

    _op_name = "max_pool3d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        if dilation not in (1, (1,), (1, 1, 1)):
            raise NotImplementedError("For 'MaxPool3d', 'dilation' is not supported by msrt yet.")
        if return_indices:
            raise NotImplementedError("For 'MaxPool3d', 'return_indices' is not supported by msrt yet.")
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)


class AvgPool3d(_Pool3d):
    """Mean over kernel_size windows of (N, C, D, H, W) moved by stride (MindSpore 2.x defaults)."""

    _op_name = "avg_pool3d"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        if divisor_override is not None:
            raise NotImplementedError("For 'AvgPool3d', 'divisor_override' is not supported by msrt yet.")
        if not isinstance(count_include_pad, bool):
            raise TypeError(f"For 'AvgPool3d', the argument 'count_include_pad' must be bool, "
                            f"but got {type(count_include_pad).__name__}.")
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, {"count_include_pad": count_include_pad})
        self.count_include_pad = count_include_pad


def _output_size(value, count, cls_name, allow_none):
    def ok(v):
        return (isinstance(v, int) and not isinstance(v, bool) and v > 0) or (allow_none and v is None)

    if count == 1 and ok(value) and value is not None:
        return value
    if count == 2 and (ok(value) and value is not None):
        return (value, value)
    if count == 2 and isinstance(value, (tuple, list)) and len(value) == 2 and all(ok(v) for v in value):
        return tuple(value)
    raise ValueError(f"For '{cls_name}', the 'output_size' must be a positive int"
                     f"{' or a tuple of two positive ints (or None)' if count == 2 else ''}, but got {value!r}.")


class _AdaptivePool(Cell):
    _op_name = ""
    _count = 2

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _output_size(output_size, self._count, self.cls_name, allow_none=self._count == 2)

    def construct(self, x):
        return _op(self._op_name, x, output_size=self.output_size)

    def extend_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Mean over adaptive windows of the last axis of (N, C, L): the output has `output_size` elements."""

    _op_name = "adaptive_avg_pool1d"
    _count = 1


class AdaptiveAvgPool2d(_AdaptivePool):
    """Mean over adaptive windows of (N, C, H, W) or (C, H, W); None in output_size keeps that axis."""

    _op_name = "adaptive_avg_pool2d"


class AdaptiveMaxPool1d(_AdaptivePool):
    """Max over adaptive windows of the last axis of (N, C, L) or (C, L): the output has `output_size` elements."""

    _op_name = "adaptive_max_pool1d"
    _count = 1


class AdaptiveMaxPool2d(_AdaptivePool):
    """Max over adaptive windows of (N, C, H, W) or (C, H, W); None in output_size keeps that axis."""

    _op_name = "adaptive_max_pool2d"

    def __init__(self, output_size, return_indices=False):
        if return_indices:
            raise NotImplementedError("For 'AdaptiveMaxPool2d', 'return_indices' is not supported by msrt yet.")
        super().__init__(output_size)
