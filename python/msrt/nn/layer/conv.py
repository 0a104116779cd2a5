"""Conv2d (NCHW)."""
import math

from ..._tensor import Tensor
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell

__all__ = ["Conv2d"]


def _data_format(value, cls_name):
    """The conv and pooling layouts, checked when a layer is built (nn.Conv2d, nn.MaxPool2d), in
    MindSpore's words; the ops check again at the call."""
    if value not in ("NCHW", "NHWC"):
        raise ValueError(f"For '{cls_name}', the 'data_format' must be 'NCHW' or 'NHWC', but got {value!r}.")
    return value


def _pair(value, arg, cls_name, allow_zero=False):
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if (not isinstance(value, tuple) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be an int or a tuple of two ints, "
                        f"but got {value!r}.")
    low = 0 if allow_zero else 1
    if any(v < low for v in value):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"For '{cls_name}', the argument '{arg}' must be {kind}, "
                         f"but got {value}.")
    return value


def _padding4(padding, cls_name):
    """(top, bottom, left, right) from an int, (pad_h, pad_w) or a 4-tuple."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        padding = (padding,) * 4
    elif isinstance(padding, tuple) and len(padding) == 2:
        padding = (padding[0], padding[0], padding[1], padding[1])
    if (not isinstance(padding, tuple) or len(padding) != 4
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in padding)):
        raise TypeError(f"For '{cls_name}', the argument 'padding' must be an int or a tuple of 2 or 4 ints, "
                        f"but got {padding!r}.")
    if any(v < 0 for v in padding):
        raise ValueError(f"For '{cls_name}', the argument 'padding' must be non-negative, but got {padding}.")
    return padding


class Conv2d(Cell):
    """2-D convolution over NCHW (or, with data_format="NHWC", channels-last) input, as MindSpore 2.3's
    `nn.Conv2d`.

    weight: (out_channels, in_channels // group, kh, kw), HeUniform(sqrt(5))
    by default; bias (when has_bias) Uniform(1/sqrt(fan_in)) by default.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCHW",
                 dtype=mstype.float32):
        super().__init__()
        name = "Conv2d"
        for arg, value in (("in_channels", in_channels), ("out_channels", out_channels), ("group", group)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For '{name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
            if value <= 0:
                raise ValueError(f"For '{name}', the argument '{arg}' must be positive, but got {value}.")
        if in_channels % group or out_channels % group:
            raise ValueError(f"For '{name}', the 'in_channels' and 'out_channels' must be divisible by 'group', "
                             f"but got in_channels {in_channels}, out_channels {out_channels}, group {group}.")
        self.kernel_size = _pair(kernel_size, "kernel_size", name)
        self.stride = _pair(stride, "stride", name)
        self.dilation = _pair(dilation, "dilation", name)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
            raise ValueError(f"For '{name}', the argument 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                             f"but got {pad_mode!r}.")
        self.pad_mode = pad_mode.lower()
        self.padding = padding
        pad = _padding4(padding, name)
        if self.pad_mode != "pad" and any(pad):
            raise ValueError(f"For '{name}', the 'padding' must be zero when 'pad_mode' is not equal to 'pad', "
                             f"but got 'padding': {padding}, 'pad_mode': {pad_mode}.")
        _data_format(data_format, name)
        if not isinstance(has_bias, bool):
            raise TypeError(f"For '{name}', the argument 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.group = group
        self.has_bias = has_bias
        self.data_format = data_format
        shape = [out_channels, in_channels // group, *self.kernel_size]
        if isinstance(weight_init, Tensor) and list(weight_init.shape) != shape:
            raise ValueError(f"For '{name}', the shape of 'weight_init' must be {tuple(shape)}, "
                             f"but got {tuple(weight_init.shape)}.")
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight_init = weight_init
        self.bias_init = bias_init
        self.weight = Parameter(initializer(weight_init, shape, dtype), name="weight")
        self.bias = None
        if has_bias:
            if bias_init is None:
                fan_in = shape[1] * shape[2] * shape[3]
                bias_init = Uniform(1.0 / math.sqrt(fan_in))
            self.bias = Parameter(initializer(bias_init, [out_channels], dtype), name="bias")
        self._attrs = {
            "stride": list(self.stride),
            "pad_mode": self.pad_mode,
            "pad": list(pad),
            "dilation": list(self.dilation),
            "group": group,
            "data_format": data_format,
        }

    def construct(self, x):
        out = _op("conv2d", x, self.weight, **self._attrs)
        if self.bias is not None:
            # NHWC keeps channels last, where a (C,) bias broadcasts.
            out = _op("bias_add", out, self.bias) if self.data_format == "NCHW" else out + self.bias
        return out

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}, "
                f"weight_init={self.weight_init}, bias_init={self.bias_init}, format={self.data_format}")
