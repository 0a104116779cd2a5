"""`ms.common`: dtypes, Tensor, Parameter, initializers and the global seed."""
from . import dtype
from .dtype import *  # noqa: F401,F403 - ms.common.float32 etc.
from .._tensor import Tensor
from .parameter import Parameter, ParameterTuple
from .seed import get_seed, set_seed
from . import initializer

__all__ = ["dtype", "Tensor", "Parameter", "ParameterTuple", "set_seed", "get_seed", "initializer"]
__all__.extend(dtype.__all__)
