"""`ms.vmap`: a function mapped over a batch axis of its inputs.

msrt runs the function once per slice of the batch axis and stacks the
results along `out_axes` (op stack), so gradients flow through the slicing
and the stacking like through any other op; it is not fused into one
batched kernel."""
import functools
import numbers

from ._tensor import Tensor, _op

__all__ = ["vmap"]


def _check_axes(axes, arg):
    if axes is None or (isinstance(axes, int) and not isinstance(axes, bool)):
        return
    if isinstance(axes, (tuple, list)):
        for a in axes:
            _check_axes(a, arg)
        return
    raise TypeError(f"For 'vmap', the argument '{arg}' must be an int, None, or a tuple or list of them, "
                    f"but got {type(axes).__name__}.")


def _leaves(value, axes, out, arg):
    """Appends (leaf, axis) for every leaf of `value`, `axes` matching its structure."""
    if isinstance(axes, (tuple, list)):
        if not isinstance(value, (tuple, list)) or len(value) != len(axes):
            count = len(value) if isinstance(value, (tuple, list)) else 1
            raise ValueError(f"For 'vmap', the structure of '{arg}' must match the inputs: {len(axes)} axes for "
                             f"{count} values.")
        for v, a in zip(value, axes):
            _leaves(v, a, out, arg)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, axes, out, arg)
    elif isinstance(value, dict):
        for v in value.values():
            _leaves(v, axes, out, arg)
    else:
        out.append((value, axes))


def _rebuild(value, leaves):
    if isinstance(value, (tuple, list)):
        return type(value)(_rebuild(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _rebuild(v, leaves) for k, v in value.items()}
    return next(leaves)


def _normalise(axis, ndim, arg):
    if not -ndim <= axis < ndim:
        raise ValueError(f"For 'vmap', the axis in '{arg}' must be in range [{-ndim}, {ndim}), but got {axis}.")
    return axis % ndim


def _slice(value, axis, i):
    return value if axis is None else value[(slice(None),) * axis + (i,)]


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, numbers.Number):
        return Tensor(value)
    raise TypeError(f"For 'vmap', an output mapped over an axis must be a Tensor or a number, "
                    f"but got {type(value).__name__}.")


def vmap(fn, in_axes=0, out_axes=0):
    """`fn` mapped over axis `in_axes` of its positional inputs (an int for
    every input, None for an input not mapped, or a tuple/list matching the
    inputs' structure), its outputs stacked along `out_axes` (None: an output
    that is the same for every slice, taken from the first)."""
    if not callable(fn):
        raise TypeError(f"For 'vmap', the argument 'fn' must be callable, but got {type(fn).__name__}.")
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")

    @functools.wraps(fn)
    def batched(*args):
        axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        leaves = []
        _leaves(args, axes, leaves, "in_axes")
        sizes, mapped = set(), []
        for value, axis in leaves:
            if axis is None:
                mapped.append((value, None))
                continue
            if not isinstance(value, Tensor):
                raise TypeError(f"For 'vmap', an input mapped over axis {axis} must be a Tensor, "
                                f"but got {type(value).__name__}; give it the axis None.")
            axis = _normalise(axis, value.ndim, "in_axes")
            sizes.add(value.shape[axis])
            mapped.append((value, axis))
        if not sizes:
            raise ValueError("For 'vmap', 'in_axes' must map at least one Tensor input, but every axis is None.")
        if len(sizes) > 1:
            raise ValueError(f"For 'vmap', the mapped axes of the inputs must have one size, but got sizes "
                             f"{sorted(sizes)}.")
        results = [fn(*_rebuild(args, iter([_slice(v, a, i) for v, a in mapped]))) for i in range(sizes.pop())]
        out_leaves = [[] for _ in results]
        for result, found in zip(results, out_leaves):
            _leaves(result, out_axes, found, "out_axes")
        stacked = []
        for j, (first, axis) in enumerate(out_leaves[0]):
            if axis is None:
                stacked.append(first)
                continue
            parts = [_as_tensor(found[j][0]) for found in out_leaves]
            stacked.append(_op("stack", *parts, axis=_normalise(axis, parts[0].ndim + 1, "out_axes")))
        return _rebuild(results[0], iter(stacked))

    return batched
