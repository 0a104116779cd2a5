"""MindSpore 2.x's functional API for neural networks: products, convolution,
pooling, normalisation, activations and dropout (re-exported by
`ms.ops.functional`)."""
import builtins
import numbers

from .._tensor import _op
from .functional import _bin, _t, cast

def matmul(input, other):  # noqa: A002
    """NumPy's matmul: 1-D operands are promoted and squeezed, batch dims broadcast."""
    a, b = input, other
    na, nb = a.ndim, b.ndim
    if na == 2 and nb == 2:
        return _op("matmul", a, b)
    if na == 0 or nb == 0:
        raise ValueError("For 'matmul', the input tensors can not be 0-d (scalars).")
    squeeze = []
    if na == 1:
        a = _op("expand_dims", a, axis=0)
        squeeze.append(-2)
    if nb == 1:
        b = _op("expand_dims", b, axis=1)
        squeeze.append(-1)
    if a.ndim == 2 and b.ndim == 2:
        out = _op("matmul", a, b)
    else:
        if a.ndim == 2:
            a = _op("expand_dims", a, axis=0)
        if b.ndim == 2:
            b = _op("expand_dims", b, axis=0)
        out = _op("batch_matmul", a, b)
    if squeeze:
        nd = out.ndim
        out = _op("squeeze", out, axis=[nd + s for s in squeeze])
    return out


def mm(input, mat2):  # noqa: A002
    return _op("matmul", input, mat2)


def bmm(input_x, mat2):
    return _op("batch_matmul", input_x, mat2)


def batch_matmul(x, y, transpose_a=False, transpose_b=False):
    return _op("batch_matmul", x, y, transpose_a=transpose_a, transpose_b=transpose_b)


def dense(input, weight, bias=None):  # noqa: A002
    """input @ weight.T + bias (MindSpore 2.3's ops.dense)."""
    if bias is None:
        nd = input.ndim
        if nd == 2:
            return _op("matmul", input, weight, transpose_b=True)
        return matmul(input, _op("transpose", weight, perm=[1, 0]))
    if input.ndim == 2:
        return _op("dense", input, weight, bias)
    lead = list(input.shape[:-1])
    flat = _op("reshape", input, shape=[-1, input.shape[-1]])
    out = _op("dense", flat, weight, bias)
    return _op("reshape", out, shape=lead + [weight.shape[0]])


def bias_add(input_x, bias, data_format="NCHW"):
    if data_format not in ("NCHW", "NCDHW"):
        raise ValueError(f"For 'bias_add', only 'NCHW' data_format is supported by msrt, but got {data_format!r}.")
    return _op("bias_add", input_x, bias)


def _data_format(value, op):
    """The conv and pooling layouts, checked when a layer or primitive is built (the ops check again)."""
    if value not in ("NCHW", "NHWC"):
        raise ValueError(f"For '{op}', the 'data_format' must be 'NCHW' or 'NHWC', but got {value!r}.")
    return value


def _two(value, name, op):
    """An int or a pair → [h, w] (also accepts MindSpore's 4-element (1, 1, h, w))."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value), int(value)]
    if isinstance(value, (list, tuple)):
        if len(value) == 2:
            return [int(v) for v in value]
        if len(value) == 4:
            return [int(value[2]), int(value[3])]
    raise TypeError(f"For '{op}', '{name}' must be an int or a tuple of two ints, but got {value!r}.")


def _four_pad(padding, op):
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return [int(padding)] * 4
    if isinstance(padding, (list, tuple)):
        if len(padding) == 2:  # (pad_h, pad_w)
            return [int(padding[0]), int(padding[0]), int(padding[1]), int(padding[1])]
        if len(padding) == 4:
            return [int(p) for p in padding]
    raise TypeError(f"For '{op}', 'padding' must be an int or a tuple of 2 or 4 ints, but got {padding!r}.")


def _conv_attrs(stride, pad_mode, padding, dilation, groups, op):
    if isinstance(padding, str):
        pad_mode, padding = padding, 0
    pad_mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
    pad = _four_pad(padding, op)
    if pad_mode == "valid" and builtins.any(pad):
        pad_mode = "pad"
    return dict(stride=_two(stride, "stride", op), pad_mode=pad_mode, pad=pad,
                dilation=_two(dilation, "dilation", op), group=int(groups))


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    out = _op("conv2d", input, weight, **_conv_attrs(stride, pad_mode, padding, dilation, groups, "conv2d"))
    if bias is not None:
        out = _op("bias_add", out, bias)
    return out


def _pool_check(op, padding, dilation, ceil_mode):
    if padding not in (0, (0, 0), [0, 0], (0, 0, 0, 0)):
        raise NotImplementedError(f"For '{op}', explicit 'padding' is not supported by msrt; pad the input first.")
    if dilation not in (1, (1, 1), [1, 1]):
        raise NotImplementedError(f"For '{op}', 'dilation' other than 1 is not supported by msrt.")
    if ceil_mode:
        raise NotImplementedError(f"For '{op}', 'ceil_mode=True' is not supported by msrt.")


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
    _pool_check("max_pool2d", padding, dilation, ceil_mode)
    if return_indices:
        raise NotImplementedError("For 'max_pool2d', 'return_indices=True' is not supported by msrt.")
    kernel = _two(kernel_size, "kernel_size", "max_pool2d")
    strides = kernel if stride is None else _two(stride, "stride", "max_pool2d")
    return _op("max_pool2d", x, kernel_size=kernel, strides=strides, pad_mode="valid")


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    _pool_check("avg_pool2d", padding, 1, ceil_mode)
    if divisor_override:
        raise NotImplementedError("For 'avg_pool2d', 'divisor_override' is not supported by msrt.")
    kernel = _two(kernel_size, "kernel_size", "avg_pool2d")
    strides = kernel if stride is None else _two(stride, "stride", "avg_pool2d")
    return _op("avg_pool2d", input_x, kernel_size=kernel, strides=strides, pad_mode="valid")


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-05):
    """Batch normalization over axis 1; in training it also updates the running
    statistics in place (running = (1 - momentum) * running + momentum * batch)."""
    y, _, _ = _op("batch_norm", input_x, weight, bias, running_mean, running_var, is_training=bool(training),
                  epsilon=float(eps), momentum=float(momentum))
    return y


def gelu(input_x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"For 'gelu', 'approximate' must be 'none' or 'tanh', but got {approximate!r}.")
    return _op("gelu", input_x, approximate=approximate == "tanh")


def leaky_relu(input, alpha=0.2):  # noqa: A002
    return _op("select", _op("greater", input, _t(0, input)), input, _bin("mul", input, float(alpha)))


def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    x = input if dtype is None else cast(input, dtype)
    return _op("softmax", x, axis=int(axis))


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """Zeroes elements with probability `p` and scales the rest by 1/(1-p)."""
    if not 0 <= p <= 1:
        raise ValueError(f"For 'dropout', 'p' must be in range [0, 1], but got {p}.")
    if not training or p == 0:
        return input
    if p == 1:
        return _op("zeros_like", input)
    y, _ = _op("dropout", input, keep_prob=1.0 - float(p))
    return y
