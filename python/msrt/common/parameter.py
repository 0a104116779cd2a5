"""`ms.Parameter` and `ms.ParameterTuple`.

A Parameter is a Tensor whose C++ tensor has `requires_grad` set, so every op
that reads it is recorded while a gradient is taken. It carries a name (the
Cell that owns it renames it "conv1.weight"); `set_data` writes new contents
in place through the assign op, so optimizers and views see the update.
"""
import numbers

import numpy as np

from .. import _C
from .._tensor import Tensor, _op, _wrap

__all__ = ["Parameter", "ParameterTuple"]

_DEFAULT_NAME = "Parameter"


def _base_of(default_input):
    """The TensorBase a new Parameter holds."""
    from .initializer import Initializer

    if isinstance(default_input, Parameter):
        return _op("identity", default_input)._t  # a copy: the new parameter is independent
    if isinstance(default_input, Tensor):
        return default_input._t  # shares the tensor (data and identity), as MindSpore shares data
    if isinstance(default_input, Initializer):
        raise TypeError("For 'Parameter', an Initializer needs a shape: use "
                        "initializer(init, shape, dtype) as the 'default_input'.")
    if isinstance(default_input, (bool, numbers.Number, np.ndarray, np.generic, list, tuple)):
        return Tensor(default_input)._t
    raise TypeError("For 'Parameter', the 'default_input' must be a Tensor, a NumPy array, a number or a "
                    f"list, but got {type(default_input).__name__}.")


class Parameter(Tensor):
    """`Parameter(default_input, name=None, requires_grad=True, layerwise_parallel=False)`."""

    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True, storage_format=""):
        self._t = _base_of(default_input)
        self.name = name
        self.requires_grad = requires_grad
        self.layerwise_parallel = bool(layerwise_parallel)
        self.parallel_optimizer = bool(parallel_optimizer)
        self.__dict__["_comm_fusion"] = 1
        self.sliced = False
        self.is_init = True
        self.cache_enable = False

    # --- identity ------------------------------------------------------------
    @property
    def name(self):
        return self.__dict__["_name"]

    @name.setter
    def name(self, value):
        if value is None:
            value = _DEFAULT_NAME
        elif not isinstance(value, str):
            raise TypeError(f"For 'Parameter', the 'name' must be a str, but got {type(value).__name__}.")
        self.__dict__["_name"] = value
        self._t.param_name = value

    @property
    def comm_fusion(self):
        """The fusion id of this parameter's gradient all-reduce (default 1): in data-parallel training,
        gradients whose parameters carry the same id share fusion buckets; 0 keeps its own all-reduce
        (nn.DistributedGradReducer, docs/distributed.md)."""
        return self.__dict__["_comm_fusion"]

    @comm_fusion.setter
    def comm_fusion(self, value):
        from ..context import PYNATIVE_MODE, get_auto_parallel_context, get_context

        if get_context("mode") == PYNATIVE_MODE and "auto_parallel" in get_auto_parallel_context("parallel_mode"):
            raise RuntimeError("'comm_fusion' does not support PYNATIVE_MODE in AUTO_PARALLEL and "
                               "SEMI_AUTO_PARALLEL mode.")
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"For 'Parameter', the 'comm_fusion' must be an int, but got {type(value).__name__}.")
        if value < 0:
            raise ValueError(f"For 'Parameter', the 'comm_fusion' must be an int greater than or equal to 0, "
                             f"but got {value}.")
        self.__dict__["_comm_fusion"] = value

    @property
    def requires_grad(self):
        return self._t.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"For 'Parameter', the 'requires_grad' must be a bool, but got {type(value).__name__}.")
        self._t.requires_grad = value

    @property
    def data(self):
        return self

    @property
    def inited_param(self):
        return self

    @property
    def param_info(self):
        return self

    def value(self):
        """The data as a plain Tensor (the same tensor)."""
        return _wrap(self._t)

    def init_data(self, layout=None, set_sliced=False):
        return self

    # --- updates -----------------------------------------------------------------
    def set_data(self, data, slice_shape=False):
        """Replaces the contents with `data` (a Tensor, a NumPy array or a number), in place.
        Its dtype is converted to the parameter's; its shape must match unless
        `slice_shape` is True (the parameter then takes the new shape)."""
        if isinstance(data, bool) or not isinstance(data, (Tensor, numbers.Number, np.ndarray)):
            raise TypeError(f"For 'Parameter.set_data', the 'data' must be a Tensor or a number, "
                            f"but got {type(data).__name__}.")
        mine = self._t
        if isinstance(data, Tensor):
            if data._t._same(mine):
                return self
            new = data
        elif (isinstance(data, np.ndarray) and data.shape == mine.shape and data.dtype.name == mine.dtype_name
              and data.dtype.name != "bfloat16"):
            # The array is read where it lies (as torch's copy_ from a from_numpy tensor): a copy into a pool
            # tensor first would leave the parameter's size of pool pages touched for nothing.
            new = _wrap(_C.TensorBase.from_numpy(data))
        else:
            new = Tensor(np.asarray(data), self.dtype)
            if new.shape != mine.shape:
                new = _op("broadcast_to", new, shape=list(mine.shape))
        if new._t.dtype_name != mine.dtype_name:
            new = _op("cast", new, dtype=mine.dtype_name)
        if new.shape != mine.shape:
            if not slice_shape:
                raise ValueError(f"For 'Parameter.set_data', the shape of the new data {new.shape} must be the same "
                                 f"as the parameter '{self.name}' shape {mine.shape}.")
            fresh = _op("identity", new)._t
            fresh.requires_grad = mine.requires_grad
            fresh.param_name = self.name
            self._t = fresh
            return self
        _op("assign", _wrap(mine), new)
        return self

    def clone(self, init="same"):
        """A new Parameter with a copy of the data (or data from `init`) and the same name and flags."""
        if init == "same":
            data = _op("identity", self)
        else:
            from .initializer import initializer
            data = initializer(init, self.shape, self.dtype)
        out = Parameter(data, self.name, self.requires_grad, self.layerwise_parallel, self.parallel_optimizer)
        out.__dict__["_comm_fusion"] = self.comm_fusion
        return out

    def __repr__(self):
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__

    def __reduce__(self):
        return (_rebuild_parameter, (np.array(self._t.asnumpy()), self._t.dtype_name, self.name, self.requires_grad,
                                     self.layerwise_parallel))

    def __copy__(self):
        out = Parameter.__new__(Parameter)
        out._t = self._t
        out.__dict__.update(self.__dict__)
        return out

    def __deepcopy__(self, memo):
        out = Parameter(_op("identity", self), self.name, self.requires_grad,
                        self.layerwise_parallel, self.parallel_optimizer)
        out.__dict__["_comm_fusion"] = self.comm_fusion
        memo[id(self)] = out
        return out


def _rebuild_parameter(array, dtype_name, name, requires_grad, layerwise_parallel):
    return Parameter(_wrap(_C.TensorBase(array, dtype_name)), name, requires_grad, layerwise_parallel)


class ParameterTuple(tuple):
    """A tuple of Parameters with distinct names (MindSpore's ParameterTuple)."""

    def __new__(cls, iterable):
        data = tuple(iterable)
        seen = {}
        for x in data:
            if not isinstance(x, Parameter):
                raise TypeError(f"For 'ParameterTuple', each element must be a Parameter, "
                                f"but got {type(x).__name__}.")
            if x.name != _DEFAULT_NAME and seen.get(x.name, x) is not x:
                raise ValueError(f"For 'ParameterTuple', the name '{x.name}' is used by two different parameters; "
                                 "please set a unique name for each parameter.")
            seen[x.name] = x
        return tuple.__new__(cls, data)

    def clone(self, prefix, init="same"):
        """Clones every parameter, naming the copies "<prefix>.<name>"."""
        if not isinstance(prefix, str):
            raise TypeError(f"For 'ParameterTuple.clone', the 'prefix' must be a str, but got {type(prefix).__name__}.")
        out = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            out.append(c)
        return ParameterTuple(out)

    def __parameter_tuple__(self):
        return True
