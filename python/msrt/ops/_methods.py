"""Tensor methods (and `@`, indexing) whose body is an `ms.ops` function.

They are attached to Tensor here, above both `_tensor` and `ops.functional`,
so that `_tensor` never imports the ops package (the import graph stays
acyclic). Methods of ops that declare a `Method` form are bound by
`_api.install_methods`; these are the ones whose function is still written
in Python, each a one-line call.
"""
from .. import _indexing
from .._tensor import Tensor, _as_tensor, _shape_arg
from . import functional as F

__all__ = ["install"]


def __matmul__(self, other):  # noqa: N807 - an operator
    return F.matmul(self, _as_tensor(other))


def __rmatmul__(self, other):  # noqa: N807 - an operator
    return F.matmul(_as_tensor(other), self)


def matmul(self, other):
    return F.matmul(self, _as_tensor(other))


def flatten(self, order="C", *, start_dim=0, end_dim=-1):
    return F.flatten(self, order, start_dim=start_dim, end_dim=end_dim)


def tile(self, *reps):
    return F.tile(self, tuple(_shape_arg(reps)))


def _extreme(x, kind, axis, keepdims, initial, return_indices):
    out = (F.amax if kind == "max" else F.amin)(x, axis, keepdims, initial=initial)
    if return_indices:
        return out, (F.argmax if kind == "max" else F.argmin)(x, axis, keepdims)
    return out


def max(self, axis=None, keepdims=False, *, initial=None, where=None, return_indices=False):  # noqa: A001
    return _extreme(self, "max", axis, keepdims, initial, return_indices)


def min(self, axis=None, keepdims=False, *, initial=None, where=None, return_indices=False):  # noqa: A001
    return _extreme(self, "min", axis, keepdims, initial, return_indices)


def argmax(self, axis=None, keepdims=False):
    return F.argmax(self, axis, keepdims)


def argmin(self, axis=None, keepdims=False):
    return F.argmin(self, axis, keepdims)


def div(self, other, *, rounding_mode=None):
    return F.div(self, other, rounding_mode=rounding_mode)


def clip(self, min=None, max=None):  # noqa: A002 - MindSpore's names
    return F.clamp(self, min, max)


def gather(self, input_indices, axis, batch_dims=0):
    return F.gather(self, input_indices, axis, batch_dims)


def split(self, split_size_or_sections, axis=0):
    return F.split(self, split_size_or_sections, axis)


def stop_gradient(self):
    return F.stop_gradient(self)


_METHODS = {
    "__matmul__": __matmul__, "__rmatmul__": __rmatmul__, "matmul": matmul, "flatten": flatten, "tile": tile,
    "max": max, "min": min, "argmax": argmax, "argmin": argmin, "div": div,
    "true_divide": div, "clip": clip, "clamp": clip, "gather": gather, "split": split, "stop_gradient": stop_gradient,
    "__getitem__": _indexing.getitem, "__setitem__": _indexing.setitem,
}


def install(cls=Tensor):
    """Attaches the methods above to `cls`; a name it already has is an error
    (one definition per method)."""
    for name, fn in _METHODS.items():
        if name in cls.__dict__:
            raise RuntimeError(f"msrt: Tensor.{name} is defined twice")
        setattr(cls, name, fn)
