"""Conv1d, Conv2d, Conv3d, Conv1dTranspose, Conv2dTranspose and Conv3dTranspose (channels first)."""
import math

from ..._tensor import Tensor
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell

__all__ = ["Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose"]


def _data_format(value, cls_name):
    """The conv and pooling layouts, checked when a layer is built (nn.Conv2d, nn.MaxPool2d), in
    MindSpore's words; the ops check again at the call."""
    if value not in ("NCHW", "NHWC"):
        raise ValueError(f"For '{cls_name}', the 'data_format' must be 'NCHW' or 'NHWC', but got {value!r}.")
    return value


_COUNT_WORDS = {2: "two", 3: "three"}


def _ints(value, n, arg, cls_name, allow_zero=False):
    """An n-tuple of positive (or, with allow_zero, non-negative) ints from an int or an n-tuple."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * n
    if (not isinstance(value, tuple) or len(value) != n
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be an int or a tuple of {_COUNT_WORDS[n]} ints, "
                        f"but got {value!r}.")
    low = 0 if allow_zero else 1
    if any(v < low for v in value):
        kind = "non-negative" if allow_zero else "positive"
        raise ValueError(f"For '{cls_name}', the argument '{arg}' must be {kind}, but got {value}.")
    return value


def _pair(value, arg, cls_name, allow_zero=False):
    """(h, w) from an int or a tuple of 2 ints."""
    return _ints(value, 2, arg, cls_name, allow_zero)


def _triple(value, arg, cls_name, allow_zero=False):
    """(d, h, w) from an int or a tuple of 3 ints."""
    return _ints(value, 3, arg, cls_name, allow_zero)


def _padding_pairs(padding, n, cls_name):
    """(before, after) for each of n spatial axes from an int, one int per axis or the 2n-tuple itself."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        padding = (padding,) * (2 * n)
    elif isinstance(padding, tuple) and len(padding) == n:
        padding = tuple(p for p in padding for _ in range(2))
    if (not isinstance(padding, tuple) or len(padding) != 2 * n
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in padding)):
        raise TypeError(f"For '{cls_name}', the argument 'padding' must be an int or a tuple of {n} or {2 * n} ints, "
                        f"but got {padding!r}.")
    if any(v < 0 for v in padding):
        raise ValueError(f"For '{cls_name}', the argument 'padding' must be non-negative, but got {padding}.")
    return padding


def _padding4(padding, cls_name):
    """(top, bottom, left, right) from an int, (pad_h, pad_w) or a 4-tuple."""
    return _padding_pairs(padding, 2, cls_name)


def _padding6(padding, cls_name):
    """(front, back, top, bottom, left, right) from an int, (pad_d, pad_h, pad_w) or a 6-tuple."""
    return _padding_pairs(padding, 3, cls_name)


def _check_channels(cls_name, in_channels, out_channels, group):
    for arg, value in (("in_channels", in_channels), ("out_channels", out_channels), ("group", group)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"For '{cls_name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
        if value <= 0:
            raise ValueError(f"For '{cls_name}', the argument '{arg}' must be positive, but got {value}.")
    if in_channels % group or out_channels % group:
        raise ValueError(f"For '{cls_name}', the 'in_channels' and 'out_channels' must be divisible by 'group', "
                         f"but got in_channels {in_channels}, out_channels {out_channels}, group {group}.")


def _check_pad_mode(pad_mode, padding, cls_name):
    if not isinstance(pad_mode, str) or pad_mode.lower() not in ("same", "valid", "pad"):
        raise ValueError(f"For '{cls_name}', the 'pad_mode' must be one of ['same', 'valid', 'pad'], "
                         f"but got {pad_mode!r}.")
    pad_mode = pad_mode.lower()
    if pad_mode != "pad" and any(padding):
        raise ValueError(f"For '{cls_name}', the 'padding' must be zero when 'pad_mode' is not 'pad', "
                         f"but got padding {padding} with pad_mode {pad_mode!r}.")
    return pad_mode


def _int(value, arg, cls_name, low=1):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
    if value < low:
        raise ValueError(f"For '{cls_name}', the argument '{arg}' must be at least {low}, but got {value}.")
    return value


def _padding2(padding, cls_name):
    """(left, right) from an int or a 2-tuple (1-D layers)."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        padding = (padding, padding)
    if (not isinstance(padding, tuple) or len(padding) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in padding)):
        raise TypeError(f"For '{cls_name}', the argument 'padding' must be an int or a tuple of 2 ints, "
                        f"but got {padding!r}.")
    if any(v < 0 for v in padding):
        raise ValueError(f"For '{cls_name}', the argument 'padding' must be non-negative, but got {padding}.")
    return padding


class _ConvNd(Cell):
    """Parameters shared by the conv layers: a 4-D or 5-D weight (1-D layers keep MindSpore's
    (out, in // group, 1, k)), HeUniform(sqrt(5)) by default, and a bias Uniform(1/sqrt(fan_in)); the argument
    checks of the n-D layers (_init_geometry, _check_output_padding) and their conv attributes."""

    def _init_geometry(self, nd, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                       output_padding=None):
        """Checks and keeps the channels, window, padding (and, for transposed layers, output_padding) of an
        nd-D layer."""
        name = self.cls_name
        _check_channels(name, in_channels, out_channels, group)
        self.in_channels, self.out_channels, self.group = in_channels, out_channels, group
        self.kernel_size = _ints(kernel_size, nd, "kernel_size", name)
        self.stride = _ints(stride, nd, "stride", name)
        self.dilation = _ints(dilation, nd, "dilation", name)
        self.padding = _padding_pairs(padding, nd, name)
        if output_padding is not None:
            self.output_padding = _ints(output_padding, nd, "output_padding", name, allow_zero=True)
        self.pad_mode = _check_pad_mode(pad_mode, self.padding, name)

    def _check_output_padding(self):
        name = self.cls_name
        if self.pad_mode != "pad" and any(self.output_padding):
            raise ValueError(f"For '{name}', the 'output_padding' must be zero when 'pad_mode' is not 'pad', "
                             f"but got {self.output_padding}.")
        for op_, s, d in zip(self.output_padding, self.stride, self.dilation):
            if op_ >= max(s, d):
                raise ValueError(f"For '{name}', the 'output_padding' must be smaller than 'stride' or "
                                 f"'dilation', but got output_padding {self.output_padding}, stride {self.stride} "
                                 f"and dilation {self.dilation}.")

    def _conv_attrs(self):
        return {"stride": list(self.stride), "pad_mode": self.pad_mode, "pad": list(self.padding),
                "dilation": list(self.dilation), "group": self.group}

    def _add_bias(self, out):
        return out if self.bias is None else _op("bias_add", out, self.bias)

    def extend_repr(self):
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, has_bias={self.has_bias}")

    def _make_params(self, shape, has_bias, bias_size, weight_init, bias_init, dtype):
        name = self.cls_name
        if not isinstance(has_bias, bool):
            raise TypeError(f"For '{name}', the argument 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        if isinstance(weight_init, Tensor) and list(weight_init.shape) != shape:
            raise ValueError(f"For '{name}', the shape of 'weight_init' must be {tuple(shape)}, "
                             f"but got {tuple(weight_init.shape)}.")
        self.has_bias = has_bias
        self.weight_init = HeUniform(math.sqrt(5)) if weight_init is None else weight_init
        self.bias_init = bias_init
        self.weight = Parameter(initializer(self.weight_init, shape, dtype), name="weight")
        self.bias = None
        if has_bias:
            if bias_init is None:
                bias_init = Uniform(1.0 / math.sqrt(math.prod(shape[1:])))
            self.bias = Parameter(initializer(bias_init, [bias_size], dtype), name="bias")


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) input, as MindSpore 2.3's `nn.Conv1d`: a conv2d over (N, C, 1, L)
    with weight (out_channels, in_channels // group, 1, kernel_size)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        super().__init__()
        name = self.cls_name
        _check_channels(name, in_channels, out_channels, group)
        self.in_channels, self.out_channels, self.group = in_channels, out_channels, group
        self.kernel_size = _int(kernel_size, "kernel_size", name)
        self.stride = _int(stride, "stride", name)
        self.dilation = _int(dilation, "dilation", name)
        self.padding = _padding2(padding, name)
        self.pad_mode = _check_pad_mode(pad_mode, self.padding, name)
        self._make_params([out_channels, in_channels // group, 1, self.kernel_size], has_bias, out_channels,
                          weight_init, bias_init, dtype)
        self._attrs = {"stride": [1, self.stride], "pad_mode": self.pad_mode,
                       "pad": [0, 0, self.padding[0], self.padding[1]], "dilation": [1, self.dilation],
                       "group": group}

    def construct(self, x):
        if len(x.shape) != 3:
            raise ValueError(f"For '{self.cls_name}', the input must be 3-D (N, C, L), but got shape {x.shape}.")
        out = self._add_bias(_op("conv2d", _op("expand_dims", x, axis=2), self.weight, **self._attrs))
        return _op("squeeze", out, axis=[2])


class Conv2d(_ConvNd):
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
        _check_channels(name, in_channels, out_channels, group)
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
        self.in_channels, self.out_channels, self.group = in_channels, out_channels, group
        self.data_format = data_format
        self._make_params([out_channels, in_channels // group, *self.kernel_size], has_bias, out_channels,
                          weight_init, bias_init, dtype)
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
            out = _op("bias_add", out, self.bias, data_format=self.data_format)
        return out

    def extend_repr(self):
        return (f"{super().extend_repr()}, "
                f"weight_init={self.weight_init}, bias_init={self.bias_init}, format={self.data_format}")


def _transposed_size(size, kernel, stride, dilation, pad_mode, pad_before, pad_after, output_padding):
    """The output size of a transposed convolution along one axis (MindSpore's rules)."""
    extent = dilation * (kernel - 1) + 1
    if pad_mode == "same":
        return size * stride
    if pad_mode == "valid":
        return size * stride + max(extent - stride, 0)
    return (size - 1) * stride - pad_before - pad_after + extent + output_padding


class Conv2dTranspose(_ConvNd):
    """2-D transposed convolution over NCHW input, as MindSpore 2.3's `nn.Conv2dTranspose`: the gradient of a
    conv2d with respect to its input (conv2d_backprop_input), weight (in_channels, out_channels // group, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 output_padding=0, dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 dtype=mstype.float32):
        super().__init__()
        self._init_geometry(2, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                            output_padding)
        self._check_output_padding()
        self._make_params([in_channels, out_channels // group, *self.kernel_size], has_bias, out_channels,
                          weight_init, bias_init, dtype)
        self._attrs = self._conv_attrs()

    def _output_shape(self, shape):
        n, _, h, w = shape
        top, bottom, left, right = self.padding
        oh = _transposed_size(h, self.kernel_size[0], self.stride[0], self.dilation[0], self.pad_mode, top, bottom,
                              self.output_padding[0])
        ow = _transposed_size(w, self.kernel_size[1], self.stride[1], self.dilation[1], self.pad_mode, left, right,
                              self.output_padding[1])
        return [n, self.out_channels, oh, ow]

    def construct(self, x):
        if len(x.shape) != 4:
            raise ValueError(f"For '{self.cls_name}', the input must be 4-D (N, C, H, W), but got shape {x.shape}.")
        out = _op("conv2d_backprop_input", x, self.weight, input_shape=self._output_shape(x.shape), **self._attrs)
        return self._add_bias(out)


class Conv1dTranspose(Conv2dTranspose):
    """1-D transposed convolution over (N, C, L) input, as MindSpore 2.3's `nn.Conv1dTranspose`; weight
    (in_channels, out_channels // group, 1, kernel_size)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        name = "Conv1dTranspose"
        kernel_size = _int(kernel_size, "kernel_size", name)
        stride = _int(stride, "stride", name)
        dilation = _int(dilation, "dilation", name)
        left, right = _padding2(padding, name)
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode, (0, 0, left, right), 0,
                         (1, dilation), group, has_bias, weight_init, bias_init, dtype)

    def construct(self, x):
        if len(x.shape) != 3:
            raise ValueError(f"For '{self.cls_name}', the input must be 3-D (N, C, L), but got shape {x.shape}.")
        return _op("squeeze", super().construct(_op("expand_dims", x, axis=2)), axis=[2])


def _check_ncdhw(data_format, cls_name):
    if data_format != "NCDHW":
        raise ValueError(f"For '{cls_name}', the 'data_format' must be 'NCDHW', but got {data_format!r}.")


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) input, as MindSpore 2.3's `nn.Conv3d`; weight
    (out_channels, in_channels // group, kd, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        super().__init__()
        self._init_geometry(3, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group)
        _check_ncdhw(data_format, self.cls_name)
        self.data_format = data_format
        self._make_params([out_channels, in_channels // group, *self.kernel_size], has_bias, out_channels,
                          weight_init, bias_init, dtype)
        self._attrs = self._conv_attrs()

    def construct(self, x):
        return self._add_bias(_op("conv3d", x, self.weight, **self._attrs))

    def extend_repr(self):
        return (f"{super().extend_repr()}, "
                f"weight_init={self.weight_init}, bias_init={self.bias_init}, format={self.data_format}")


class Conv3dTranspose(_ConvNd):
    """3-D transposed convolution over (N, C, D, H, W) input, as MindSpore 2.3's `nn.Conv3dTranspose`: the
    gradient of a conv3d with respect to its input (conv3d_backprop_input), weight
    (in_channels, out_channels // group, kd, kh, kw)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, output_padding=0, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        super().__init__()
        self._init_geometry(3, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                            output_padding)
        _check_ncdhw(data_format, self.cls_name)
        self.data_format = data_format
        self._check_output_padding()
        self._make_params([in_channels, out_channels // group, *self.kernel_size], has_bias, out_channels,
                          weight_init, bias_init, dtype)
        self._attrs = self._conv_attrs()

    def _output_shape(self, shape):
        n = shape[0]
        sizes = [_transposed_size(shape[2 + i], self.kernel_size[i], self.stride[i], self.dilation[i],
                                  self.pad_mode, self.padding[2 * i], self.padding[2 * i + 1],
                                  self.output_padding[i]) for i in range(3)]
        return [n, self.out_channels, *sizes]

    def construct(self, x):
        if len(x.shape) != 5:
            raise ValueError(f"For '{self.cls_name}', the input must be 5-D (N, C, D, H, W), "
                             f"but got shape {x.shape}.")
        out = _op("conv3d_backprop_input", x, self.weight, input_shape=self._output_shape(x.shape), **self._attrs)
        return self._add_bias(out)
