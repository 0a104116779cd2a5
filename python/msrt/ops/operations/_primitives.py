"""MindSpore's Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`, ...).

A primitive is configured once (its attributes) and called on tensors. Every
Primitive an op declares is generated from the declaration at the end of this
module, as a subclass of `Primitive` below. The classes written here answer
from Python objects (Shape, Rank, Size, DType, ScalarToTensor, TupleToArray)
or are the Python functions of the same nature (Depend, Print, StopGradient).
"""
import functools
import inspect
import numbers

from ..._tensor import Tensor
from ...common import dtype as mstype
from .. import functional as F

__all__ = [  # written here; the declared ones are added below
    "Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register",
    "Shape", "Rank", "Size", "DType", "Depend", "StopGradient", "HookBackward",
    "Print", "ScalarToTensor", "TupleToArray",
    "ScalarSummary", "ImageSummary", "TensorSummary", "HistogramSummary",
]


class Primitive:
    """Base class of primitives: a named op with attributes, called on tensors."""

    def __init__(self, name=None):
        self.name = name or type(self).__name__
        self.attrs = {}

    def add_prim_attr(self, name, value):
        self.attrs[name] = value
        return self

    def del_prim_attr(self, name):
        self.attrs.pop(name, None)
        return self

    def init_prim_io_names(self, inputs, outputs):
        self.input_names = list(inputs)
        self.output_names = list(outputs)

    def set_device(self, device_target):
        return self

    def shard(self, in_strategy=None, out_strategy=None):
        return self

    def recompute(self, mode=True):
        return self

    def __call__(self, *args):
        raise NotImplementedError(f"Primitive '{self.name}' has no implementation.")

    def __repr__(self):
        extra = ", ".join(f"{k}={v}" for k, v in self.attrs.items())
        return f"Prim[{self.name}]" + (f"<{extra}>" if extra else "")


PrimitiveWithInfer = Primitive
PrimitiveWithCheck = Primitive


def prim_attr_register(init):
    """Decorator for a primitive's __init__: records its arguments as attributes."""

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        Primitive.__init__(self, type(self).__name__)
        bound = inspect.signature(init).bind(self, *args, **kwargs)
        bound.apply_defaults()
        for key, value in list(bound.arguments.items())[1:]:
            self.attrs[key] = value
        init(self, *args, **kwargs)

    return wrapper


# --- misc -------------------------------------------------------------------------------------
class Shape(Primitive):
    def __init__(self):
        super().__init__()

    def _tensor(self, input_x):
        if not isinstance(input_x, Tensor):
            raise TypeError(f"For '{type(self).__name__}', the input must be a Tensor, but got "
                            f"{type(input_x).__name__}.")
        return input_x

    def __call__(self, input_x):
        return self._tensor(input_x).shape


class Rank(Shape):
    def __call__(self, input_x):
        return self._tensor(input_x).ndim


class Size(Shape):
    def __call__(self, input_x):
        return self._tensor(input_x).size


class DType(Shape):
    def __call__(self, input_x):
        return self._tensor(input_x).dtype


class Depend(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, value, expr):
        return value


class Print(Primitive):
    """Prints its inputs (see `ops.print_`); a side-effect op, so graphs keep it."""

    def __init__(self):
        super().__init__()

    def __call__(self, *input_x):
        return F.print_(*input_x)


class _Summary(Primitive):
    """A summary op: `op(name, value)` hands `value` to the next `SummaryRecord.record`
    in train mode (or SummaryCollector's), under the tag `name`; in a graph, on every
    run of the graph (msrt/_summary_data.py). Returns None."""

    def __init__(self):
        super().__init__()
        self.add_prim_attr("side_effect_io", True)

    def _check_value(self, value):
        """ValueError unless `value`'s shape suits the plugin."""

    def __call__(self, name, value):
        from ... import _jit

        where = type(self).__name__
        if not isinstance(name, str):
            raise TypeError(f"For '{where}', the name must be valid string, but got {type(name).__name__}.")
        if not name:
            raise ValueError(f"For '{where}', the name must be valid string, but got ''.")
        if not isinstance(value, Tensor):
            raise TypeError(f"For '{where}', the parameter 'value' expect to be Tensor, but got "
                            f"{type(value).__name__}.")
        self._check_value(value)
        _jit.summary(where, name, value)


class ScalarSummary(_Summary):
    def _check_value(self, value):
        if len(value.shape) > 1 or value.size != 1:
            raise ValueError(f"For 'ScalarSummary', the value must hold one number (rank 0 or 1), but got shape "
                             f"{list(value.shape)}.")


class ImageSummary(_Summary):
    def _check_value(self, value):
        if len(value.shape) != 4:
            raise ValueError(f"For 'ImageSummary', the tensor seems not to hold a valid image: its rank must be 4 "
                             f"(N, C, H, W), but got shape {list(value.shape)}.")


class TensorSummary(_Summary):
    def _check_value(self, value):
        if not value.shape:
            raise ValueError("For 'TensorSummary', the value should not be empty: its rank must be greater than 0.")


class HistogramSummary(_Summary):
    def _check_value(self, value):
        if not value.shape:
            raise ValueError("For 'HistogramSummary', the value should not be empty: its rank must be greater "
                             "than 0.")


class StopGradient(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, x):
        return F.stop_gradient(x)


class HookBackward(Primitive):
    """Returns its inputs unchanged; while their gradient is computed
    (PYNATIVE_MODE) `hook_fn(grad)` sees the gradient arriving at them, and a
    non-None result replaces it (Note [Gradient hooks] in msrt/_grad.py)."""

    def __init__(self, hook_fn, cell_id=""):
        super().__init__()
        if not callable(hook_fn):
            raise TypeError(f"For 'HookBackward', the type of 'hook_fn' must be python function, but got "
                            f"{type(hook_fn).__name__}.")
        if not isinstance(cell_id, str):
            raise TypeError(f"For 'HookBackward', the 'cell_id' must be str, but got {type(cell_id).__name__}.")
        self.hook_fn = hook_fn
        self.cell_id = cell_id

    def __call__(self, *inputs):
        from ... import _grad

        if not inputs:
            raise TypeError("For 'HookBackward', it needs at least one input Tensor.")
        for x in inputs:
            if not isinstance(x, Tensor):
                raise TypeError(f"For 'HookBackward', the inputs must be Tensors, but got {type(x).__name__}.")
        out = _grad.hook_backward(self.hook_fn, list(inputs))
        return out[0] if len(out) == 1 else tuple(out)


class ScalarToTensor(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, input_x, dtype=mstype.float32):
        if not isinstance(input_x, numbers.Number):
            raise TypeError(f"For 'ScalarToTensor', the input must be a number, but got {type(input_x).__name__}.")
        return Tensor(input_x, dtype)


class TupleToArray(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, input_x):
        return Tensor(input_x)


# Every Primitive an op declares (OpDef::api in C++), bound from the declaration.
from .._api import install_primitives  # noqa: E402

__all__ += install_primitives(globals(), Primitive)
