"""Tensor methods (and `@`, indexing) whose body is an `ms.ops` function.

They are attached to Tensor here, above both `_tensor` and `ops.functional`,
so that `_tensor` never imports the ops package (the import graph stays
acyclic). Methods of ops that declare a `Method` form are bound by
`_api.install_methods`; these are Python's operator hooks and the methods
whose function is Python by nature, each a one-line call.
"""
from .. import _indexing
from .._tensor import Tensor, _as_tensor
from . import functional as F

__all__ = ["install"]


def __matmul__(self, other):  # noqa: N807 - an operator
    return F.matmul(self, _as_tensor(other))


def __rmatmul__(self, other):  # noqa: N807 - an operator
    return F.matmul(_as_tensor(other), self)


def stop_gradient(self):
    return F.stop_gradient(self)


_METHODS = {
    "__matmul__": __matmul__, "__rmatmul__": __rmatmul__,
    "stop_gradient": stop_gradient,
    "__getitem__": _indexing.getitem, "__setitem__": _indexing.setitem,
}


def install(cls=Tensor):
    """Attaches the methods above to `cls`; a name it already has is an error
    (one definition per method)."""
    for name, fn in _METHODS.items():
        if name in cls.__dict__:
            raise RuntimeError(f"msrt: Tensor.{name} is defined twice")
        setattr(cls, name, fn)
