"""`ms.ops`: MindSpore 2.x's functional API (`ops.add`, `ops.conv2d`...), its
Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`...) and
GradOperation. `_op(name, *tensors, **attrs)` calls a catalogue op directly."""
from .._tensor import Tensor as _Tensor, _op
from . import _api, _methods, composite, functional, operations, primitive
from .composite import GradOperation, grad, value_and_grad
from .functional import *  # noqa: F401,F403
from .operations import *  # noqa: F401,F403
from .primitive import Primitive, PrimitiveWithCheck, PrimitiveWithInfer, constexpr, prim_attr_register


_api.install_methods(_Tensor)
_methods.install(_Tensor)

__all__ = ["_op", "composite", "functional", "operations", "primitive", "GradOperation", "grad", "value_and_grad",
           "Primitive", "PrimitiveWithCheck", "PrimitiveWithInfer", "prim_attr_register", "constexpr"]
__all__ += functional.__all__ + operations.__all__
