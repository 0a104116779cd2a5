"""`ops.primitive`: the Primitive base classes, `prim_attr_register` and `constexpr`."""
from .operations._primitives import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, prim_attr_register

__all__ = ["Primitive", "PrimitiveWithCheck", "PrimitiveWithInfer", "prim_attr_register", "constexpr"]


def constexpr(fn=None, get_instance=True, reuse_result=True, check=True):
    """MindSpore's @constexpr (with or without arguments): msrt runs the
    function as written, eagerly and while a graph is captured."""
    if fn is None:
        return lambda f: f
    return fn
