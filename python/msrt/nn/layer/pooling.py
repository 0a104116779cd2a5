"""MaxPool2d and AvgPool2d (NCHW)."""
from ...ops import _op
from ..cell import Cell
from .conv import _data_format

__all__ = ["MaxPool2d", "AvgPool2d"]


def _pool_pair(value, arg, cls_name):
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if (not isinstance(value, tuple) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be an int or a tuple of two ints, "
                        f"but got {value!r}.")
    if any(v <= 0 for v in value):
        raise ValueError(f"For '{cls_name}', the argument '{arg}' must be positive, but got {value}.")
    return value


class _Pool2d(Cell):
    _op_name = ""

    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, data_format):
        super().__init__()
        name = self.cls_name
        self.kernel_size = _pool_pair(kernel_size, "kernel_size", name)
        self.stride = _pool_pair(stride, "stride", name)
        if not isinstance(pad_mode, str) or pad_mode.upper() not in ("VALID", "SAME", "PAD"):
            raise ValueError(f"For '{name}', the argument 'pad_mode' must be one of ['valid', 'same', 'pad'], "
                             f"but got {pad_mode!r}.")
        self.pad_mode = pad_mode.upper()
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
        if len(x.shape) == 3:  # unbatched (C, H, W), or (H, W, C)
            x = _op("expand_dims", x, axis=0)
            return _op("squeeze", _op(self._op_name, x, **self._attrs), axis=[0])
        return _op(self._op_name, x, **self._attrs)

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
