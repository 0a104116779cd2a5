"""`ms.ops`: MindSpore 2.x's functional API (`ops.add`, `ops.conv2d`...), its
Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`...) and
GradOperation. `_op(name, *tensors, **attrs)` calls a catalogue op directly."""
from .._tensor import Tensor as _Tensor, _op
from . import _api, _methods, composite, functional, operations
from .composite import GradOperation, grad, value_and_grad
from .functional import *  # noqa: F401,F403
from .operations import *  # noqa: F401,F403
from .operations import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, prim_attr_register


_api.install_methods(_Tensor)
_methods.install(_Tensor)


def constexpr(fn=None, get_instance=True, reuse_result=True, check=True):
    """MindSpore's @constexpr: eager execution runs the function as is."""
    if fn is None:
        return lambda f: f
    return fn


__all__ = ["_op", "composite", "functional", "operations", "GradOperation", "grad", "value_and_grad", "Primitive",
           "PrimitiveWithCheck", "PrimitiveWithInfer", "prim_attr_register", "constexpr"]
__all__ += functional.__all__ + operations.__all__
