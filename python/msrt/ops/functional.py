"""MindSpore 2.x's functional API (`ms.ops.add`, `ms.ops.conv2d`, ...).

Each function maps its MindSpore signature onto catalogue ops: it converts
arguments (Python scalars, tuples, dtypes) and leaves every check of shapes
and values to the op's C++ definition, whose errors pass through unchanged.
"""
import builtins
import numbers

import numpy as np

from .. import _C
from .._tensor import Tensor, _as_tensor, _binary, _op, _wrap
from ..common import dtype as mstype

__all__ = [  # written here; the declared ones are added below
    "dropout", "flatten", "split",
    "strided_slice", "slice", "one_hot", "tile", "zeros", "ones", "fill", "full", "zeros_like", "ones_like",
    "full_like", "arange", "eye",
    "depend", "stop_gradient", "print_",
    "shape", "rank", "size", "numel", "dtype", "is_tensor", "scalar_to_tensor", "tuple_to_array",
    "partial",
]


def _t(x, like=None):
    """A Tensor for an argument that may be a Python scalar or array."""
    if isinstance(x, Tensor):
        return x
    return _as_tensor(x, like)


def _pair(a, b):
    """Both operands as Tensors; a scalar takes the other's dtype."""
    if isinstance(a, Tensor):
        return a, _t(b, a)
    if isinstance(b, Tensor):
        return _t(a, b), b
    return Tensor(a), Tensor(b)


def _bin(name, a, b):
    if isinstance(a, Tensor):
        out = _binary(name, a, b)
        if out is not NotImplemented:
            return out
    a, b = _pair(a, b)
    return _op(name, a, b)


# --- shapes ------------------------------------------------------------------------


def flatten(input, order="C", *, start_dim=1, end_dim=-1):  # noqa: A002
    if order not in ("C", "F"):
        raise ValueError(f"For 'flatten', 'order' must be 'C' or 'F', but got {order!r}.")
    if order == "F":
        raise NotImplementedError("For 'flatten', order='F' is not supported by msrt.")
    nd = input.ndim
    if nd <= 1:
        return _op("reshape", input, shape=[-1])
    start = start_dim + nd if start_dim < 0 else start_dim
    end = end_dim + nd if end_dim < 0 else end_dim
    if not (0 <= start < nd and 0 <= end < nd):
        raise ValueError(f"For 'flatten', 'start_dim' and 'end_dim' must be in [{-nd}, {nd}), "
                         f"but got {start_dim} and {end_dim}.")
    if start > end:
        raise ValueError(f"For 'flatten', 'start_dim' ({start_dim}) must not come after 'end_dim' ({end_dim}).")
    if start == 1 and end == nd - 1:
        return _op("flatten", input)
    shape = list(input.shape)
    return _op("reshape", input, shape=shape[:start] + [-1] + shape[end + 1:])


def split(tensor, split_size_or_sections, axis=0):
    """Splits into chunks of `split_size_or_sections` (an int: every chunk
    that size, the last smaller) or of the listed sizes."""
    n = tensor.shape[axis]
    if isinstance(split_size_or_sections, numbers.Integral) and not isinstance(split_size_or_sections, bool):
        size = int(split_size_or_sections)
        if size <= 0:
            raise ValueError(f"For 'split', 'split_size_or_sections' must be positive, but got {size}.")
        if n % size == 0:
            parts = _op("split", tensor, axis=int(axis), output_num=n // size)
            return parts if isinstance(parts, tuple) else (parts,)
        sizes = [size] * (n // size) + [n % size]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise ValueError(f"For 'split', the sections {sizes} must add up to the size of axis {axis} ({n}).")
    nd = tensor.ndim
    ax = axis + nd if axis < 0 else axis
    out, start = [], 0
    for s in sizes:
        begin = [0] * nd
        end = list(tensor.shape)
        begin[ax], end[ax] = start, start + s
        out.append(_op("strided_slice", tensor, begin=begin, end=end, strides=[1] * nd))
        start += s
    return tuple(out)


def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0):
    if ellipsis_mask or new_axis_mask:
        raise NotImplementedError("For 'strided_slice', ellipsis_mask and new_axis_mask are not supported by msrt; "
                                  "use Tensor indexing.")
    shape = input_x.shape
    nd = len(shape)
    begin, end, strides = list(begin), list(end), list(strides)
    for i in range(len(begin), nd):
        begin.append(0)
        end.append(shape[i])
        strides.append(1)
    for i in range(nd):
        if begin_mask & (1 << i):
            begin[i] = 0 if strides[i] > 0 else shape[i] - 1
        if end_mask & (1 << i):
            end[i] = shape[i] if strides[i] > 0 else -shape[i] - 1
    out = _op("strided_slice", input_x, begin=begin, end=end, strides=strides)
    if shrink_axis_mask:
        out = _op("squeeze", out, axis=[i for i in range(nd) if shrink_axis_mask & (1 << i)])
    return out


def slice(input_x, begin, size):  # noqa: A001 - MindSpore's name
    shape = input_x.shape
    begin, size = [int(b) for b in begin], [int(s) for s in size]
    if len(begin) != len(shape) or len(size) != len(shape):
        raise ValueError(f"For 'Slice', 'begin' and 'size' must have one entry per dimension of the input "
                         f"{shape}, but got begin={begin} and size={size}.")
    end = []
    for i, (b, s) in enumerate(zip(begin, size)):
        e = shape[i] if s == -1 else b + s
        if not 0 <= b <= e <= shape[i] or s < -1:
            raise ValueError(f"For 'Slice', the slice of dimension {i} must lie in [0, {shape[i]}] "
                             f"(size -1: up to the end), but got begin={b} and size={s}.")
        end.append(e)
    return _op("strided_slice", input_x, begin=list(begin), end=end, strides=[1] * len(begin))


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """One-hot encoding; the output has on_value's dtype (a Python int gives int64, a float float32)."""
    dtype = "int64" if isinstance(on_value, numbers.Integral) and not isinstance(on_value, bool) else "float32"
    if isinstance(on_value, Tensor):
        dtype = on_value._t.dtype_name
        on_value = on_value.item()
    if isinstance(off_value, Tensor):
        off_value = off_value.item()
    return _op("one_hot", _t(indices), depth=int(depth), on_value=float(on_value), off_value=float(off_value),
               axis=int(axis), dtype=dtype)


def tile(input, dims):  # noqa: A002
    dims = [int(d) for d in dims]
    nd = input.ndim
    if len(dims) < nd:
        dims = [1] * (nd - len(dims)) + dims
    return _op("tile", input, multiples=dims)


def _shape_of(size):
    if isinstance(size, numbers.Integral):
        return [int(size)]
    if isinstance(size, Tensor):
        return [int(v) for v in size.asnumpy().reshape(-1)]
    return [int(s) for s in size]


def _dtype_name(dtype, default="float32"):
    return default if dtype is None else mstype._core_name(dtype, "argument 'dtype'")


def fill(type, shape, value):  # noqa: A002 - MindSpore's name
    return _op("fill", shape=_shape_of(shape), value=float(value), dtype=_dtype_name(type))


def full(size, fill_value, *, dtype=None):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = mstype.bool_
        elif isinstance(fill_value, numbers.Integral):
            dtype = mstype.int64
        elif isinstance(fill_value, Tensor):
            dtype = fill_value.dtype
        else:
            dtype = mstype.float32
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _op("fill", shape=_shape_of(size), value=float(value), dtype=_dtype_name(dtype))


def zeros(size, dtype=None):
    return _op("fill", shape=_shape_of(size), value=0.0, dtype=_dtype_name(dtype))


def ones(shape, dtype=None):
    return _op("fill", shape=_shape_of(shape), value=1.0, dtype=_dtype_name(dtype))


def zeros_like(input, *, dtype=None):  # noqa: A002
    out = _op("zeros_like", input)
    return out if dtype is None else _op("cast", out, dtype=_dtype_name(dtype))


def ones_like(input, *, dtype=None):  # noqa: A002
    out = _op("ones_like", input)
    return out if dtype is None else _op("cast", out, dtype=_dtype_name(dtype))


def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    name = input._t.dtype_name if dtype is None else _dtype_name(dtype)
    return _op("fill", shape=list(input.shape), value=float(fill_value), dtype=name)


def arange(start=0, end=None, step=1, *, dtype=None):
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if values[2] == 0:
        raise ValueError(f"For 'arange', the 'step' can not be 0, but got {step!r}.")
    array = np.arange(*values)
    if dtype is None:
        dtype = mstype.float32 if array.dtype.kind == "f" else mstype.int64
    return Tensor(array, dtype)


def eye(n, m=None, dtype=mstype.float32):
    return Tensor(np.eye(n, m), dtype)


# --- in-place and graph helpers ---------------------------------------------------
def depend(value, expr):
    """Returns `value` (eager execution already orders `expr` before it)."""
    return value


def print_(*input_x):
    """Prints Tensors, str, int, float and bool values (tuples and lists are
    printed item by item), one per line, or appends them to print_file_path
    (read back with `ms.parse_print`). Returns an int32 0-d tensor."""
    import sys

    tensors, items = [], []

    def flatten(value):
        if isinstance(value, Tensor):
            tensors.append(value)
            items.append(None)
        elif isinstance(value, (tuple, list)):
            for v in value:
                flatten(v)
        else:
            items.append(value)

    flatten(input_x)
    sys.stdout.flush()  # the op writes to the process's stdout after what Python printed
    return _op("print", *tensors, items=items)


def stop_gradient(value):
    """The same data with no gradient flowing back through it."""
    if isinstance(value, (tuple, list)):
        return type(value)(stop_gradient(v) for v in value)
    if not isinstance(value, Tensor):
        return value
    return _wrap(value._t._reshaped(value._t.shape))


def shape(input_x):
    return _tensor_arg("shape", input_x).shape


def _tensor_arg(name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{name}', the input must be a Tensor, but got {type(value).__name__}.")
    return value


def rank(input_x):
    return _tensor_arg("rank", input_x).ndim


def size(input_x):
    return _tensor_arg("size", input_x).size


def numel(input):  # noqa: A002
    return _tensor_arg("numel", input).size


def dtype(input):  # noqa: A002
    return _tensor_arg("dtype", input).dtype


def is_tensor(obj):
    return isinstance(obj, Tensor)


def scalar_to_tensor(input_x, dtype=mstype.float32):  # noqa: A002
    return Tensor(input_x, dtype)


def tuple_to_array(input_x):
    return Tensor(input_x)


def partial(func, *args):
    """functools.partial, as MindSpore's F.partial."""
    import functools
    return functools.partial(func, *args)


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """Zeroes elements with probability `p` and scales the rest by 1/(1-p) (op
    dropout_ext). Written by hand: when nothing is dropped (not training, or
    p = 0) it returns the input object itself and runs no op, which a declared
    form, a call, cannot."""
    p = p.item() if isinstance(p, np.generic) else p
    attrs = _C.check_attrs("dropout_ext", {"p": p, "training": training})
    if not attrs["training"] or attrs["p"] == 0:
        return input
    return _op("dropout_ext", input, **attrs)


# Every function an op declares (OpDef::api in C++), bound from the declaration.
from ._api import install_functions  # noqa: E402

__all__ += install_functions(globals())
