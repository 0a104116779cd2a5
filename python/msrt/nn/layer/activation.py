"""Activation cells: each is one catalogue op."""
import numpy as np

from ..._tensor import Tensor
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell

__all__ = [
    "ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "Softmax", "LogSoftmax", "LeakyReLU", "Mish", "PReLU",
    "HSwish", "HSigmoid", "get_activation",
]


class ReLU(Cell):
    """max(x, 0)."""

    def construct(self, x):
        return _op("relu", x)


class ReLU6(Cell):
    """min(max(x, 0), 6)."""

    def construct(self, x):
        return _op("relu6", x)


class HSwish(Cell):
    """Hard swish: x * relu6(x + 3) / 6."""

    def construct(self, x):
        return x * _op("relu6", x + 3) / 6


class HSigmoid(Cell):
    """Hard sigmoid: relu6(x + 3) / 6."""

    def construct(self, x):
        return _op("relu6", x + 3) / 6


class Sigmoid(Cell):
    """1 / (1 + exp(-x))."""

    def construct(self, x):
        return _op("sigmoid", x)


class Tanh(Cell):
    def construct(self, x):
        return _op("tanh", x)


class SiLU(Cell):
    """x * sigmoid(x)."""

    def construct(self, x):
        return _op("silu", x)


class GELU(Cell):
    """GELU; `approximate=True` is the tanh form, False the erf form."""

    def __init__(self, approximate=True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise TypeError(f"For 'GELU', the argument 'approximate' must be bool, "
                            f"but got {type(approximate).__name__}.")
        self.approximate = approximate

    def construct(self, x):
        return _op("gelu", x, approximate=self.approximate)

    def extend_repr(self):
        return f"approximate={self.approximate}"


class Softmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"For 'Softmax', the argument 'axis' must be int, but got {type(axis).__name__}.")
        self.axis = axis

    def construct(self, x):
        return _op("softmax", x, axis=self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class LogSoftmax(Cell):
    def __init__(self, axis=-1):
        super().__init__()
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"For 'LogSoftmax', the argument 'axis' must be int, but got {type(axis).__name__}.")
        self.axis = axis

    def construct(self, x):
        return _op("log_softmax", x, axis=self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class LeakyReLU(Cell):
    """max(alpha * x, x) for 0 <= alpha <= 1."""

    def __init__(self, alpha=0.2):
        super().__init__()
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            raise TypeError(f"For 'LeakyReLU', the argument 'alpha' must be float, but got {type(alpha).__name__}.")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"For 'LeakyReLU', the argument 'alpha' must be in [0, 1], but got {alpha}.")
        self.alpha = float(alpha)

    def construct(self, x):
        return _op("leaky_relu", x, alpha=self.alpha)  # max(alpha * x, x) for alpha in [0, 1]


class Mish(Cell):
    """x * tanh(softplus(x))."""

    def construct(self, x):
        return _op("mish", x)


class PReLU(Cell):
    """x where x > 0, w * x elsewhere, with a learnable w of one value or one per channel (axis 1), as
    MindSpore 2.3's `nn.PReLU(channel=1, w=0.25)`; the parameter is named 'a', as MindSpore names it."""

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        if not isinstance(channel, int) or isinstance(channel, bool):
            raise TypeError(f"For 'PReLU', the argument 'channel' must be int, but got {type(channel).__name__}.")
        if channel < 1:
            raise ValueError(f"For 'PReLU', the argument 'channel' must be positive, but got {channel}.")
        if isinstance(w, (int, float)) and not isinstance(w, bool):
            value = np.full((channel,), w, np.float32)
        elif isinstance(w, (list, Tensor)):
            value = np.asarray(w.asnumpy() if isinstance(w, Tensor) else w, np.float32)
            if value.shape not in ((1,), (channel,)):
                raise ValueError(f"For 'PReLU', the shape of 'w' must be (1,) or ({channel},), but got {value.shape}.")
        else:
            raise TypeError(f"For 'PReLU', the argument 'w' must be float, list or Tensor, but got {type(w).__name__}.")
        self.channel = channel
        self.w = Parameter(Tensor(value, mstype.float32), name="a")

    def construct(self, x):
        return _op("prelu", x, self.w)

    def extend_repr(self):
        return f"channel={self.channel}"


_ACTIVATIONS = {
    "relu": ReLU,
    "relu6": ReLU6,
    "sigmoid": Sigmoid,
    "tanh": Tanh,
    "gelu": GELU,
    "silu": SiLU,
    "softmax": Softmax,
    "logsoftmax": LogSoftmax,
    "leakyrelu": LeakyReLU,
    "mish": Mish,
    "prelu": PReLU,
    "hswish": HSwish,
    "hsigmoid": HSigmoid,
}


def _add_composed():
    from . import _more_activations as more

    _ACTIVATIONS.update({"elu": more.ELU, "softsign": more.Softsign, "logsigmoid": more.LogSigmoid,
                         "hardtanh": more.Hardtanh, "tanhshrink": more.Tanhshrink, "softshrink": more.SoftShrink,
                         "hshrink": more.HShrink})


_add_composed()


def get_activation(name, prim_name=None):
    """The activation cell called `name` ("relu", "gelu", ...), or None for None."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"For 'get_activation', the argument 'name' must be str or None, "
                        f"but got {type(name).__name__}.")
    cls = _ACTIVATIONS.get(name.lower())
    if cls is None:
        raise KeyError(f"For 'get_activation', the activation '{name}' is not supported; "
                       f"expected one of {sorted(_ACTIVATIONS)}.")
    return cls()
