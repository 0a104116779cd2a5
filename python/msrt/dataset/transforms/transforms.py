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


def _is_string(array):
    return array.dtype.kind in "US"


class PadEnd(TensorOperation):
    """Pads the end of each dimension to `pad_shape` with `pad_value` (0 for
    numbers, "" for strings when None); a dimension given as None keeps its
    size, a smaller size truncates. The rank must equal len(pad_shape)."""

    def __init__(self, pad_shape, pad_value=None):
        from .._validate import INT32_MAX, check_value, type_check

        type_check(pad_shape, (list,), "pad_shape")
        for i, size in enumerate(pad_shape):
            if size is not None:
                type_check(size, (int,), f"pad_shape[{i}]")
                check_value(size, (1, INT32_MAX), f"pad_shape[{i}]")
        if pad_value is not None:
            type_check(pad_value, (str, bytes, int, float, bool), "pad_value")
        self.pad_shape = list(pad_shape)
        self.pad_value = pad_value

    def _apply(self, array):
        if array.ndim != len(self.pad_shape):
            raise RuntimeError(f"PadEnd: invalid pad shape, as rank of input is: {array.ndim}, and rank of "
                               f"pad value: {len(self.pad_shape)}.")
        target = tuple(d if size is None else size for d, size in zip(array.shape, self.pad_shape))
        value = self.pad_value
        if _is_string(array):
            if value is None:
                value = ""
            elif not isinstance(value, (str, bytes)):
                raise RuntimeError(f"PadEnd: pad_value {value!r} should be a string for a string input.")
            if isinstance(value, bytes) and array.dtype.kind == "U":
                value = value.decode("utf-8")
            dtype = np.result_type(array.dtype, np.asarray(value).dtype)
        else:
            if value is None:
                value = 0
            elif isinstance(value, (str, bytes)):
                raise RuntimeError(f"PadEnd: pad_value {value!r} should be a number for a numeric input of "
                                   f"dtype {array.dtype}.")
            dtype = array.dtype
        out = np.full(target, value, dtype)
        common = tuple(slice(0, min(d, t)) for d, t in zip(array.shape, target))
        out[common] = array[common]
        return out


class Fill(TensorOperation):
    """An array of the input's shape and dtype with every element `fill_value`."""

    _vectorised = True

    def __init__(self, fill_value):
        from .._validate import type_check

        type_check(fill_value, (str, bytes, int, float, bool), "fill_value")
        self.fill_value = fill_value

    def _fill(self, array):
        value = self.fill_value
        if _is_string(array) != isinstance(value, (str, bytes)):
            raise RuntimeError(f"Fill: fill_value {value!r} and the input of dtype {array.dtype} should both be "
                               f"strings or both be numbers.")
        if _is_string(array):
            if isinstance(value, bytes) and array.dtype.kind == "U":
                value = value.decode("utf-8")
            return np.full(array.shape, value, np.result_type(array.dtype, np.asarray(value).dtype))
        return np.full(array.shape, value, array.dtype)

    def _apply(self, array):
        return self._fill(array)

    def _apply_rows(self, rows):
        return self._fill(rows)


def _slice_index(index, arg_name):
    """One dimension of a Slice: an int, a list of ints, a slice, None or Ellipsis."""
    if index is None or index is Ellipsis or isinstance(index, slice):
        return index
    if isinstance(index, bool):
        raise TypeError(f"Argument {arg_name} with value {index!r} is not of type [int, list, slice, None, "
                        f"Ellipsis], but got {type(index)}.")
    if isinstance(index, int):
        return index
    if isinstance(index, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in index):
        return list(index)
    raise TypeError(f"Argument {arg_name} with value {index!r} is not of type [int, list of int, slice, None, "
                    f"Ellipsis], but got {type(index)}.")


class Slice(TensorOperation):
    """Selects, per dimension, an int index (the dimension stays, of size 1), a
    list of indices, a slice, or all (None); one Ellipsis stands for the
    dimensions not named. An index outside the dimension raises RuntimeError."""

    def __init__(self, *slices):
        if not slices:
            raise ValueError("Slice: slices should not be empty.")
        self.slices = [_slice_index(s, f"slices[{i}]") for i, s in enumerate(slices)]
        if sum(s is Ellipsis for s in self.slices) > 1:
            raise ValueError("Slice: only one Ellipsis is allowed in slices.")

    def _apply(self, array):
        slices = list(self.slices)
        if Ellipsis in slices:
            at = slices.index(Ellipsis)
            slices[at:at + 1] = [None] * max(array.ndim - len(slices) + 1, 0)
        if len(slices) > array.ndim:
            raise RuntimeError(f"Slice: the number of slices {len(slices)} is more than the rank of the input, "
                               f"{array.ndim}.")
        out = array
        for axis, index in enumerate(slices):
            if index is None:
                continue
            if isinstance(index, slice):
                out = out[(slice(None),) * axis + (index,)]
                continue
            indices = [index] if isinstance(index, int) else index
            size = array.shape[axis]
            for i in indices:
                if not -size <= i < size:
                    raise RuntimeError(f"Slice: index {i} is out of bounds for dimension {axis} of size {size}.")
            out = np.take(out, np.asarray(indices, np.int64).reshape(-1), axis=axis)
        return out


class Concatenate(TensorOperation):
    """Joins `prepend`, the 1-D input and `append` (NumPy arrays) along axis 0."""

    def __init__(self, axis=0, prepend=None, append=None):
        from .._validate import type_check

        type_check(axis, (int,), "axis")
        for name, value in (("prepend", prepend), ("append", append)):
            if value is not None:
                type_check(value, (np.ndarray,), name)
                if value.ndim != 1:
                    raise ValueError(f"Concatenate: {name} should be 1-D, but got shape {list(value.shape)}.")
        self.axis = axis
        self.prepend = prepend
        self.append = append

    def _apply(self, array):
        if array.ndim != 1:
            raise RuntimeError(f"Concatenate: only 1D input supported, but got {array.ndim}D.")
        if self.axis not in (0, -1):
            raise RuntimeError(f"Concatenate: only axis=0 or -1 is supported, but got {self.axis}.")
        parts = [p for p in (self.prepend, array, self.append) if p is not None]
        for part in parts:
            if _is_string(part) != _is_string(array) or (
                    not _is_string(array) and part.dtype != array.dtype):
                raise RuntimeError(f"Concatenate: the input of dtype {array.dtype} and the prepend/append of "
                                   f"dtype {part.dtype} should have the same type.")
        return np.concatenate(parts)
