"""MindSpore's Primitive classes (`ops.Add()`, `ops.MatMul(transpose_b=True)`, ...).

A primitive is configured once (its attributes) and called on tensors. Each
class here maps onto a catalogue op; the attributes are converted at
construction so a call is one `_op`.
"""
import functools
import inspect
import numbers

from .._tensor import Tensor, _op, _wrap, _scalar_base
from ..common import dtype as mstype
from . import functional as F

__all__ = [  # written here; the declared ones are added below
    "Primitive", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register", "BiasAdd", "Dense",
    "BatchNorm", "GeLU", "GELU", "Flatten", "Split", "StridedSlice", "OneHot",
    "Tile", "Fill", "Fills", "Zeros", "Ones",
    "Assign", "AssignAdd", "AssignSub", "ApplyMomentum",
    "ApplyGradientDescent", "Adam", "AdamWeightDecay", "Shape", "Rank", "Size", "DType", "Depend", "StopGradient",
    "Print", "ScalarToTensor", "TupleToArray",
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


def _axes(axis):
    if axis is None:
        return []
    if isinstance(axis, (list, tuple)):
        return [int(a) for a in axis]
    return int(axis)


# --- elementwise ------------------------------------------------------------------
class _Unary(Primitive):
    _op = None

    def __init__(self):
        super().__init__()

    def __call__(self, x):
        return _op(self._op, x)


class _Binary(Primitive):
    _fn = None

    def __init__(self):
        super().__init__()

    def __call__(self, x, y):
        return type(self)._fn(x, y)


class Flatten(_Unary):
    _op = "flatten"


class GeLU(Primitive):
    """GeLU with the tanh approximation, as MindSpore's GeLU primitive computes it."""

    def __init__(self):
        super().__init__()

    def __call__(self, x):
        return _op("gelu", x, approximate=True)


GELU = GeLU


# --- NN ----------------------------------------------------------------------------------
# MatMul, BatchMatMul, Conv2D, MaxPool, AvgPool and Dropout are declared by their ops
# (OpDef::api); these four do more than one op call, or fix an attribute the op leaves open.
class BiasAdd(Primitive):
    """The op adds along axis 1 at any rank, so MindSpore's 'NCDHW' is the same call."""

    def __init__(self, data_format="NCHW"):
        super().__init__()
        if data_format not in ("NCHW", "NCDHW"):
            raise ValueError(f"For 'BiasAdd', only 'NCHW' data_format is supported by msrt, but got {data_format!r}.")

    def __call__(self, input_x, bias):
        return _op("bias_add", input_x, bias)


class Dense(Primitive):
    def __init__(self, has_bias=True):
        super().__init__()
        self.has_bias = has_bias

    def __call__(self, x, w, b=None):
        return F.dense(x, w, b if self.has_bias else None)


class BatchNorm(Primitive):
    """Returns (y, batch_mean, batch_variance, reserve_space_1, reserve_space_2) as MindSpore does."""

    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        super().__init__()
        if data_format != "NCHW":
            raise ValueError(f"For 'BatchNorm', only 'NCHW' data_format is supported by msrt, "
                             f"but got {data_format!r}.")
        self.is_training = bool(is_training)
        self.epsilon = float(epsilon)
        self.momentum = float(momentum)

    def __call__(self, input_x, scale, bias, mean, variance):
        y, saved_mean, inv_std = _op("batch_norm", input_x, scale, bias, mean, variance,
                                     is_training=self.is_training, epsilon=self.epsilon, momentum=self.momentum)
        if not self.is_training:
            return y, mean, variance, mean, variance
        var = F.sub(_op("reciprocal", _op("square", inv_std)), self.epsilon)
        return y, saved_mean, var, saved_mean, inv_std


# --- shapes ----------------------------------------------------------------------------


class Split(Primitive):
    def __init__(self, axis=0, output_num=1):
        super().__init__()
        self.axis = int(axis)
        self.output_num = int(output_num)

    def __call__(self, x):
        out = _op("split", x, axis=self.axis, output_num=self.output_num)
        return out if isinstance(out, tuple) else (out,)


class StridedSlice(Primitive):
    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
        super().__init__()
        self.masks = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)

    def __call__(self, input_x, begin, end, strides):
        return F.strided_slice(input_x, begin, end, strides, *self.masks)


class OneHot(Primitive):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = int(axis)

    def __call__(self, indices, depth, on_value, off_value):
        return F.one_hot(indices, depth, on_value, off_value, self.axis)


class Tile(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, input_x, multiples):
        return F.tile(input_x, multiples)


class Fill(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, type, shape, value):  # noqa: A002
        return F.fill(type, shape, value)


class Fills(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, x, value):
        return F.full_like(x, value)


class Zeros(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, size, type=None):  # noqa: A002
        return F.zeros(size, type)


class Ones(Zeros):
    def __call__(self, size, type=None):  # noqa: A002
        return F.ones(size, type)


# --- in-place updates -----------------------------------------------------------------------
class Assign(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, variable, value):
        return F.assign(variable, value)


class AssignAdd(Assign):
    def __call__(self, variable, value):
        return F.assign_add(variable, value)


class AssignSub(Assign):
    def __call__(self, variable, value):
        return F.assign_sub(variable, value)


def _scalar_like(value, like):
    if isinstance(value, Tensor):
        return value
    return _wrap(_scalar_base(float(value), like._t.dtype_name))


class ApplyMomentum(Primitive):
    """accum = accum * momentum + grad; var -= lr * accum (or the Nesterov form). Returns var."""

    def __init__(self, use_nesterov=False, use_locking=False, gradient_scale=1.0):
        super().__init__()
        self.use_nesterov = bool(use_nesterov)
        if gradient_scale != 1.0:
            raise NotImplementedError("For 'ApplyMomentum', 'gradient_scale' other than 1.0 is not supported by msrt.")

    def __call__(self, variable, accumulation, learning_rate, gradient, momentum):
        return _op("apply_momentum", variable, accumulation, _scalar_like(learning_rate, variable), gradient,
                   _scalar_like(momentum, variable), use_nesterov=self.use_nesterov)


class ApplyGradientDescent(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, var, alpha, delta):
        return _op("apply_gradient_descent", var, _scalar_like(alpha, var), delta)


class Adam(Primitive):
    """Returns (var, m, v), updated in place."""

    def __init__(self, use_locking=False, use_nesterov=False):
        super().__init__()
        self.use_nesterov = bool(use_nesterov)

    def __call__(self, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient):
        s = [_scalar_like(x, var) for x in (beta1_power, beta2_power, lr, beta1, beta2, epsilon)]
        _op("adam", var, m, v, *s, gradient, use_nesterov=self.use_nesterov)
        return var, m, v


class AdamWeightDecay(Primitive):
    """Returns (var, m, v), updated in place."""

    def __init__(self, use_locking=False):
        super().__init__()

    def __call__(self, var, m, v, lr, beta1, beta2, epsilon, decay, gradient):
        s = [_scalar_like(x, var) for x in (lr, beta1, beta2, epsilon, decay)]
        _op("adam_weight_decay", var, m, v, *s, gradient)
        return var, m, v


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


class StopGradient(Primitive):
    def __init__(self):
        super().__init__()

    def __call__(self, x):
        return F.stop_gradient(x)


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
from ._api import install_primitives  # noqa: E402

__all__ += install_primitives(globals(), Primitive)
