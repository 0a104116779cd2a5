"""Tensor indexing (`x[...]`, `x[...] = v`) with NumPy's rules, built on ops.

Basic indexing (ints, slices with steps, None, Ellipsis, negative indices)
becomes one strided_slice plus a reshape; integer arrays, lists and tensors
(advanced indexing) become a gather; boolean masks become integer indices.
Gradients flow through all of them. Assignment computes the new contents with
ops (gather + select) and writes them in place with assign.
"""
import numpy as np

from . import _C
from ._tensor import Tensor, _as_tensor, _call1, _new, _op, _scalar_base, _wrap

# Note [Host shortcuts] in src/runtime/eager.h: x[i] and x[a:b] as views of
# the rows, x[i] = v as a fill in place, when that is the ops' result.
_first_axis = _C.first_axis
_fill_first_axis = _C.fill_first_axis

_INT_KINDS = "iu"


def _is_int(e):
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))


def _is_advanced(e):
    return isinstance(e, (Tensor, np.ndarray, list)) or isinstance(e, (bool, np.bool_))


def _host_index(e):
    """An advanced index entry as a NumPy array (bool or integer)."""
    if isinstance(e, Tensor):
        return np.asarray(e.asnumpy())
    array = np.asarray(e)
    if array.dtype.kind not in _INT_KINDS and array.dtype.kind != "b":
        if array.size == 0:
            return array.astype(np.int64)
        raise IndexError(f"Tensor indices must be integers, slices, None, Ellipsis, bools or integer/bool "
                         f"tensors, but got an index of dtype {array.dtype}.")
    return array


def _expand(x, index):
    """Normalizes `index` to a tuple of ints, slices, None and advanced entries
    covering every dimension (Ellipsis expanded, bool masks turned into
    integer arrays). Returns (entries, has_advanced)."""
    if not isinstance(index, tuple):
        index = (index,)
    entries = []
    for e in index:
        if isinstance(e, Tensor):
            if e._t.dtype_name == "bool_":
                entries.append(_Mask(_host_index(e)))
            else:
                entries.append(e)
        elif _is_advanced(e):
            array = _host_index(e)
            if array.dtype.kind == "b":
                entries.append(_Mask(array))
            else:
                entries.append(array)
        elif e is None or e is Ellipsis or isinstance(e, slice) or _is_int(e):
            entries.append(e)
        else:
            raise IndexError(f"Tensor indices must be integers, slices, None, Ellipsis, bools or integer/bool "
                             f"tensors, but got {type(e).__name__}.")
    ndim = x.ndim
    n_ellipsis = sum(1 for e in entries if e is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(e.array.ndim if isinstance(e, _Mask) else 1 for e in entries if e is not None and e is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor: tensor is {ndim}-dimensional, but {consumed} were indexed")
    fill = [slice(None)] * (ndim - consumed)
    if n_ellipsis:
        at = next(i for i, e in enumerate(entries) if e is Ellipsis)
        entries[at:at + 1] = fill
    else:
        entries.extend(fill)
    if any(isinstance(e, _Mask) for e in entries):
        entries = _expand_masks(x.shape, entries)
    has_advanced = any(not (e is None or isinstance(e, slice) or _is_int(e)) for e in entries)
    if has_advanced:
        # With arrays present, integers are advanced indices too (NumPy's rule).
        entries = [np.asarray(int(e)) if _is_int(e) else e for e in entries]
    return entries, has_advanced


class _Mask:
    """A boolean index entry; it covers as many dimensions as it has."""

    __slots__ = ("array",)

    def __init__(self, array):
        if array.ndim == 0:
            raise IndexError("a 0-d boolean index is not supported by msrt")
        self.array = array


def _expand_masks(shape, entries):
    """Replaces each boolean mask by the integer indices of its True entries,
    after checking that it matches the dimensions it covers (NumPy's rule)."""
    out = []
    dim = 0
    for e in entries:
        if isinstance(e, _Mask):
            mask = e.array
            for k, size in enumerate(mask.shape):
                if size != shape[dim + k]:
                    raise IndexError(f"boolean index did not match indexed tensor along dimension {dim + k}; "
                                     f"dimension is {shape[dim + k]} but corresponding boolean dimension is {size}")
            out.extend(np.nonzero(mask))
            dim += mask.ndim
        else:
            out.append(e)
            if e is not None:
                dim += 1
    return out


def _normalize_host(array, n, dim):
    array = array.astype(np.int64, copy=False)
    if array.size:
        bad = (array < -n) | (array >= n)
        if bad.any():
            raise IndexError(f"index {int(array[bad].flat[0])} is out of bounds for dimension {dim} with size {n}")
    return np.where(array < 0, array + n, array)


_AXIS0 = {"axis": 0}  # shared attributes of x[i]; never mutated


def getitem(x, index):
    cls = index.__class__
    if cls is int or cls is slice:
        base = _first_axis(x._t, index)
        if base is not None:
            t = _new(Tensor)
            t._t = base
            return t
    shape = x.shape
    if (index.__class__ is int or _is_int(index)) and shape:  # x[i]: the common case, kept short
        n = shape[0]
        i = int(index)
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of bounds for dimension 0 with size {n}")
        if i < 0:
            i += n
        t = _new(Tensor)  # one op; a 0-d index drops the axis
        t._t = _call1("gather", (x._t, _scalar_base(i, "int64")), _AXIS0)
        return t
    if index.__class__ is slice and shape:  # x[a:b:c] on the first dimension: one strided_slice
        n = shape[0]
        start, stop, step = index.indices(n)
        if step == 1 and start == 0 and stop >= n:
            return _wrap(x._t)
        rest = shape[1:]
        return _op("strided_slice", x, begin=[start - n if start < 0 else start] + [0] * len(rest),
                   end=[stop - n if stop < 0 else stop] + list(rest), strides=[step] + [1] * len(rest))
    entries, has_advanced = _expand(x, index)

    begin, end, strides, out_shape = [], [], [], []
    advanced = []  # (axis in out_shape, index, size, source dim)
    sliced = False
    dim = 0
    for e in entries:
        if e is None:
            out_shape.append(1)
            continue
        n = shape[dim]
        if isinstance(e, slice):
            start, stop, step = e.indices(n)
            length = len(range(start, stop, step))
            begin.append(start - n if start < 0 else start)
            end.append(stop - n if stop < 0 else stop)
            strides.append(step)
            if length != n or step != 1:
                sliced = True
            out_shape.append(length)
        elif _is_int(e):
            i = int(e)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            i = i + n if i < 0 else i
            begin.append(i)
            end.append(i + 1)
            strides.append(1)
            sliced = sliced or n != 1
        else:
            begin.append(0)
            end.append(n)
            strides.append(1)
            advanced.append((len(out_shape), e, n, dim))
            out_shape.append(n)
        dim += 1

    y = x
    if sliced:
        y = _op("strided_slice", y, begin=begin, end=end, strides=strides)
    if tuple(out_shape) != y.shape:
        y = _op("reshape", y, shape=out_shape)
    if not has_advanced:
        return y if y is not x else _wrap(x._t)

    if len(advanced) == 1:
        axis, e, n, src = advanced[0]
        if isinstance(e, Tensor):
            return _op("gather", y, e, axis=axis)
        return _op("gather", y, Tensor(_normalize_host(e, n, src)), axis=axis)

    # Several advanced indices: broadcast them, bring their axes together
    # (to the front when they were not adjacent, as NumPy does), merge those
    # axes and gather with the flat index.
    axes = [a for a, _, _, _ in advanced]
    arrays = [_normalize_host(_host_index(e), n, src) for _, e, n, src in advanced]
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(a.shape)) for a in arrays)) from None
    sizes = [n for _, _, n, _ in advanced]
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    if not adjacent:
        rest = [a for a in range(len(out_shape)) if a not in axes]
        y = _op("transpose", y, perm=axes + rest)
        first = 0
    else:
        first = axes[0]
    ys = list(y.shape)
    merged = ys[:first] + [int(np.prod(sizes))] + ys[first + len(axes):]
    y = _op("reshape", y, shape=merged)
    flat = np.ravel_multi_index(tuple(arrays), tuple(sizes)) if arrays[0].size else np.zeros(arrays[0].shape, np.int64)
    return _op("gather", y, Tensor(np.asarray(flat, dtype=np.int64)), axis=first)


def _numpy_key(index):
    """The index with tensors replaced by NumPy arrays (for position maps)."""
    if isinstance(index, tuple):
        return tuple(_numpy_key(e) for e in index)
    if isinstance(index, Tensor):
        return index.asnumpy()
    return index


# Boolean masks of `x[i] = v` and `x[a:b] = v`, by shape and index: a
# TensorBase no op writes, and how many elements it selects.
_masks = {}


def _basic_mask(shape, index):
    """(mask, count) for an int or slice index on the first dimension."""
    key = (shape, index) if index.__class__ is int else (shape, index.start, index.stop, index.step)
    found = _masks.get(key)
    if found is None:
        array = np.zeros(shape, dtype=np.bool_)
        array[index] = True  # NumPy's rules and errors, as the general path's
        found = (Tensor(array)._t, int(array.sum()))
        if len(_masks) > 1024:
            _masks.clear()
        _masks[key] = found
    return found


def setitem(x, index, value):
    cls = index.__class__
    base = x._t
    if (cls is int or cls is slice) and value.__class__ in (int, float, bool) and base.ndim:
        # x[i] = 2.0, x[a:b] = 0: written in place where the shortcut may, else
        # one select under a cached mask, then the assign.
        dtype = base.dtype_name
        v = _scalar_base(value, dtype)
        if _fill_first_axis(base, index, v):
            return
        shape = x.shape
        if v.dtype_name == dtype:
            mask, count = _basic_mask(shape, index)
            if count == 0:
                return
            new = _new(Tensor)
            new._t = _call1("select", (mask, v, x._t), {})
            _op("assign", x, new)
            return
    shape = x.shape
    n = x.size
    positions = np.arange(n, dtype=np.int64).reshape(shape)[_numpy_key(index)]
    target = positions.shape
    v = _as_tensor(value, x)
    if v._t.dtype_name != x._t.dtype_name:
        v = _op("cast", v, dtype=x._t.dtype_name)
    if v.shape != target:
        try:
            np.broadcast_shapes(v.shape, target)
        except ValueError:
            raise ValueError(f"could not broadcast input tensor of shape {v.shape} into the indexed shape "
                             f"{target}") from None
        v = _op("broadcast_to", v, shape=list(target))
    flat_positions = positions.reshape(-1)
    if flat_positions.size == n and np.array_equal(flat_positions, np.arange(n)):
        new = _op("reshape", v, shape=list(shape))  # every element is written, in order
    else:
        source = np.full(n, -1, dtype=np.int64)
        source[flat_positions] = np.arange(flat_positions.size, dtype=np.int64)
        mask = Tensor((source >= 0).reshape(shape))
        if flat_positions.size == 0:
            return
        picked = _op("gather", _op("reshape", v, shape=[-1]), Tensor(np.maximum(source, 0)), axis=0)
        new = _op("select", mask, _op("reshape", picked, shape=list(shape)), x)
    _op("assign", x, new)
