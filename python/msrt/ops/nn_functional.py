"""MindSpore 2.x's functional API for neural networks (re-exported by
`ms.ops.functional`).

The ops declare their forms in C++ (OpDef::api: mm, bmm, batch_matmul,
leaky_relu, the NN Primitive classes). What stays here are the functions whose
op calls tests/python/ops/test_functional.py pins one by one (which op, with
which attributes in canonical form): a composite op would hide its inner calls
in C++. Each is a call or two; the op's AttrTypes (`_C.check_attrs`) parse and
check every attribute.
"""
from .. import _C
from .._tensor import _op
from ..common import dtype as mstype


def matmul(input, other):  # noqa: A002
    """NumPy's matmul: 1-D operands are promoted and squeezed, batch dims broadcast
    (2-D operands call matmul, others batch_matmul)."""
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


def dense(input, weight, bias=None):  # noqa: A002
    """input @ weight.T + bias (MindSpore 2.3's ops.dense); the dense op takes any rank."""
    if bias is not None:
        return _op("dense", input, weight, bias)
    if input.ndim == 2:
        return _op("matmul", input, weight, transpose_b=True)
    return matmul(input, _op("transpose", weight, perm=[1, 0]))


def bias_add(input_x, bias, data_format="NCHW"):
    """The op adds along axis 1 at any rank, so MindSpore's 'NCDHW' is the same call."""
    if data_format not in ("NCHW", "NCDHW"):
        raise ValueError(f"For 'bias_add', only 'NCHW' data_format is supported by msrt, but got {data_format!r}.")
    return _op("bias_add", input_x, bias)


def _data_format(value, op):
    """The conv and pooling layouts, checked when a layer is built (nn.Conv2d, nn.MaxPool2d; the ops check again)."""
    if value not in ("NCHW", "NHWC"):
        raise ValueError(f"For '{op}', the 'data_format' must be 'NCHW' or 'NHWC', but got {value!r}.")
    return value


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """MindSpore's functional conv2d: `padding` may name the pad mode or be (h, w), and
    explicit padding means pad_mode 'pad'; a bias is a second op, bias_add."""
    if isinstance(padding, str):
        pad_mode, padding = padding, 0
    if isinstance(padding, (tuple, list)) and len(padding) == 2:  # (h, w): the op takes 4 sides
        padding = (padding[0], padding[0], padding[1], padding[1])
    attrs = _C.check_attrs("conv2d", {"stride": stride, "pad": padding, "dilation": dilation, "group": groups})
    mode = _C.check_attrs("conv2d", {"pad_mode": pad_mode})["pad_mode"]
    attrs["pad_mode"] = "pad" if mode == "valid" and any(attrs["pad"]) else mode
    out = _op("conv2d", input, weight, **attrs)
    if bias is not None:
        out = _op("bias_add", out, bias)
    return out


def _pool(op, x, kernel_size, stride, padding, dilation, ceil_mode, unsupported):
    """MindSpore's functional pooling: no padding, dilation or ceil mode in msrt;
    the stride defaults to the window."""
    if padding not in (0, (0, 0), [0, 0], (0, 0, 0, 0)):
        raise NotImplementedError(f"For '{op}', explicit 'padding' is not supported by msrt; pad the input first.")
    if dilation not in (1, (1, 1), [1, 1]):
        raise NotImplementedError(f"For '{op}', 'dilation' other than 1 is not supported by msrt.")
    if ceil_mode or unsupported:
        name = "ceil_mode=True" if ceil_mode else unsupported
        raise NotImplementedError(f"For '{op}', '{name}' is not supported by msrt.")
    attrs = _C.check_attrs(op, {"kernel_size": kernel_size, "strides": kernel_size if stride is None else stride})
    return _op(op, x, pad_mode="valid", **attrs)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
    return _pool("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode,
                 "return_indices=True" if return_indices else None)


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _pool("avg_pool2d", input_x, kernel_size, stride, padding, 1, ceil_mode,
                 "divisor_override" if divisor_override else None)


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-05):
    """Batch normalization over axis 1; in training it also updates the running
    statistics in place (running = (1 - momentum) * running + momentum * batch).
    Returns y alone (the op also returns the batch statistics)."""
    y, _, _ = _op("batch_norm", input_x, weight, bias, running_mean, running_var, is_training=bool(training),
                  epsilon=float(eps), momentum=float(momentum))
    return y


def gelu(input_x, approximate="none"):
    """MindSpore names the approximation ('none' or 'tanh'); the op takes a bool."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"For 'gelu', 'approximate' must be 'none' or 'tanh', but got {approximate!r}.")
    return _op("gelu", input_x, approximate=approximate == "tanh")


def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    """Casts first when a dtype is given (a second op)."""
    x = input if dtype is None else _op("cast", input, dtype=mstype._core_name(dtype, "argument 'dtype'"))
    return _op("softmax", x, axis=int(axis))


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """Zeroes elements with probability `p` and scales the rest by 1/(1-p); returns
    the input itself when not training (no op runs)."""
    if not 0 <= p <= 1:
        raise ValueError(f"For 'dropout', 'p' must be in range [0, 1], but got {p}.")
    if not training or p == 0:
        return input
    if p == 1:
        return _op("zeros_like", input)
    y, _ = _op("dropout", input, keep_prob=1.0 - float(p))
    return y
