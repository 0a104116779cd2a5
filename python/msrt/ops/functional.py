"""MindSpore 2.x's functional API (`ms.ops.add`, `ms.ops.conv2d`, ...).

Every function an op declares (OpDef::api in C++) is generated from the
declaration at the end of this module. The few written here are Python by
nature: they answer from Python objects (shape, rank, dtype, is_tensor,
partial), walk Python structures (print_, stop_gradient), return an input
object itself (depend, dropout when not training) or take their dtype from a
Tensor argument (full). grad, value_and_grad and vmap are here too, as in
MindSpore's `ops.functional`.
"""
import numbers

import numpy as np

from .. import _C
from .._grad import grad, value_and_grad
from .._vmap import vmap
from .._tensor import Tensor, _op, _wrap
from ..common import dtype as mstype

__all__ = [  # written here; the declared ones are added below
    "dropout", "full",
    "depend", "stop_gradient", "print_",
    "shape", "rank", "size", "numel", "dtype", "is_tensor", "scalar_to_tensor", "tuple_to_array",
    "partial", "grad", "value_and_grad", "vmap",
]


# --- creation ---------------------------------------------------------------------
# full stays here: with a Tensor fill value its dtype is the Tensor's, which a
# scalar attribute (AttrType::kScalar) does not carry.
def _shape_of(size):
    if isinstance(size, numbers.Integral):
        return [int(size)]
    if isinstance(size, Tensor):
        return [int(v) for v in size.asnumpy().reshape(-1)]
    return [int(s) for s in size]


def _dtype_name(dtype, default="float32"):
    return default if dtype is None else mstype._core_name(dtype, "argument 'dtype'")


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
