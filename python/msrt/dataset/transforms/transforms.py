"""General transforms (`msrt.dataset.transforms`, as `mindspore.dataset.transforms`).

Every transform is a callable on NumPy arrays. One with a vectorised path sets
`_vectorised = True` and implements `_apply_rows(rows)`: `rows` stacks several
inputs along a new first axis, and the result stacks the outputs the same way,
equal to calling the transform on each row. `map` uses it on whole blocks.
"""
import abc

import numpy as np


def _as_array(value, op_name):
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (np.generic, int, float, bool)):
        return np.asarray(value)
    if type(value).__module__.startswith("PIL."):
        return np.asarray(value)
    raise TypeError(f"{op_name}: input should be a NumPy array, got {type(value)}.")


class TensorOperation(abc.ABC):
    """Base of the transforms: one input array, one output array."""

    _vectorised = False

    def __call__(self, *args):
        if len(args) != 1:
            raise TypeError(f"{type(self).__name__} takes 1 input array, got {len(args)}.")
        return self._apply(_as_array(args[0], type(self).__name__))

    @abc.abstractmethod
    def _apply(self, array):
        """The transform of one input."""

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


_REJECTED_KINDS = {"O": "object", "V": "void", "M": "datetime", "m": "timedelta"}


def _msrt_type_to_numpy(data_type):
    """The NumPy type of an msrt dtype (`msrt.int32`), or None if `data_type` is not one."""
    try:
        from msrt.common import dtype as mstype
    except ImportError:  # built without the tensor layer
        return None
    if not isinstance(data_type, mstype.Type):
        return None
    try:
        return mstype.dtype_to_nptype(data_type)
    except KeyError:
        raise TypeError(f"TypeCast cannot cast to {data_type}: it has no NumPy equivalent.") from None


def _numpy_dtype(data_type):
    """The NumPy dtype a TypeCast target names.

    Accepts msrt dtypes (`msrt.int32`), NumPy dtypes and scalar types
    (np.float32), their names ("int32"), and any object with a `to_numpy()`
    method returning one of those. Raises TypeError for anything else.
    """
    if isinstance(data_type, np.dtype):
        dtype = data_type
    else:
        to_numpy = getattr(data_type, "to_numpy", None)
        target = to_numpy() if callable(to_numpy) else _msrt_type_to_numpy(data_type)
        if target is None:
            target = data_type
        try:
            if target is None or isinstance(target, bool):
                raise TypeError
            dtype = np.dtype(target)
        except (TypeError, ValueError):
            raise TypeError(
                f"Argument data_type with value {data_type!r} is not of type [msrt dtype, numpy.dtype], "
                f"but got {type(data_type)}."
            ) from None
    if dtype.kind in _REJECTED_KINDS:
        raise TypeError(f"TypeCast cannot cast to {_REJECTED_KINDS[dtype.kind]} dtype {dtype}.")
    return dtype


class TypeCast(TensorOperation):
    """Casts the input to `data_type` (an msrt dtype, a NumPy dtype or type, or its name).

    Float to integer truncates toward zero, as a C++ static_cast does.
    """

    _vectorised = True

    def __init__(self, data_type):
        self.data_type = data_type
        self._dtype = _numpy_dtype(data_type)

    def _apply(self, array):
        return np.asarray(array).astype(self._dtype)

    def _apply_rows(self, rows):
        return rows.astype(self._dtype)


class Compose(TensorOperation):
    """Applies `transforms` in order; a tuple result feeds the next transform as several inputs."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)):
            raise TypeError(f"Argument transforms with value {transforms!r} is not of type [list, tuple].")
        if not transforms:
            raise ValueError("transforms list is empty.")
        for i, op in enumerate(transforms):
            if not callable(op):
                raise TypeError(f"transforms[{i}] is neither a transform nor a callable Python function: {op!r}.")
        self.transforms = list(transforms)

    @property
    def _vectorised(self):
        return all(getattr(op, "_vectorised", False) for op in self.transforms)

    def __call__(self, *args):
        values = args
        for op in self.transforms:
            result = op(*values)
            values = result if isinstance(result, tuple) else (result,)
        return values[0] if len(values) == 1 else tuple(values)

    def _apply(self, array):
        return self(array)

    def _apply_rows(self, rows):
        for op in self.transforms:
            rows = op._apply_rows(rows)
        return rows


class OneHot(TensorOperation):
    """One-hot encodes integer labels: a scalar becomes (num_classes,), a 1-D array (n, num_classes).

    The output keeps the input's integer dtype; with `smoothing_rate` it is float32,
    1 - smoothing_rate + smoothing_rate / num_classes at the label and
    smoothing_rate / num_classes elsewhere.
    """

    _vectorised = True

    def __init__(self, num_classes, smoothing_rate=0.0):
        from .._validate import INT32_MAX, check_value, type_check

        type_check(num_classes, (int,), "num_classes")
        check_value(num_classes, (1, INT32_MAX), "num_classes")
        type_check(smoothing_rate, (int, float), "smoothing_rate")
        check_value(smoothing_rate, (0.0, 1.0), "smoothing_rate")
        self.num_classes = num_classes
        self.smoothing_rate = smoothing_rate

    def _encode(self, labels, row_ndim):
        if labels.dtype.kind not in "iu" or labels.dtype == np.bool_:
            raise RuntimeError(f"OneHot: OneHot only supports input of int type, but got: {labels.dtype}.")
        if row_ndim > 1:
            raise RuntimeError(f"OneHot: OneHot only supports scalars or 1-D input, but got shape "
                               f"{list(labels.shape[labels.ndim - row_ndim:])}.")
        bad = (labels < 0) | (labels >= self.num_classes)
        if bad.any():
            raise RuntimeError(f"OneHot: labels should lie in [0, {self.num_classes}) for num_classes "
                               f"{self.num_classes}, got {labels[bad].flat[0]}.")
        hot = labels[..., None] == np.arange(self.num_classes)
        if not self.smoothing_rate:
            return hot.astype(labels.dtype)
        rate = np.float32(self.smoothing_rate)
        off = rate / np.float32(self.num_classes)
        return np.where(hot, np.float32(1) - rate + off, off).astype(np.float32)

    def _apply(self, array):
        return self._encode(array, array.ndim)

    def _apply_rows(self, rows):
        return self._encode(rows, rows.ndim - 1)
