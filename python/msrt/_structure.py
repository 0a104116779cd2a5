"""Nested results (tuples, lists, dicts) of Tensors and Python values: their
tensors in order, and the same structure with the tensors replaced."""
from ._tensor import Tensor


def flatten(value, out=None):
    """The Tensors in `value`, depth first, appended to `out` (a new list if None)."""
    out = [] if out is None else out
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            flatten(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            flatten(v, out)
    return out


def map_leaves(value, fn, is_leaf=lambda v: isinstance(v, Tensor)):
    """`value` with every leaf (a Tensor, unless `is_leaf` says otherwise) replaced by fn(leaf)."""
    if is_leaf(value):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_leaves(v, fn, is_leaf) for v in value)
    if isinstance(value, list):
        return [map_leaves(v, fn, is_leaf) for v in value]
    if isinstance(value, dict):
        return {k: map_leaves(v, fn, is_leaf) for k, v in value.items()}
    return value


def rebuild(value, tensors, is_leaf=lambda v: isinstance(v, Tensor)):
    """`value` with its leaves replaced, in order, by the items of iterator `tensors`."""
    return map_leaves(value, lambda _: next(tensors), is_leaf)
