"""Activation cells: each is one catalogue op."""
from ...ops import _op
from ..cell import Cell

__all__ = [
    "ReLU", "ReLU6", "Sigmoid", "Tanh", "GELU", "SiLU", "Softmax", "LogSoftmax", "LeakyReLU",
    "get_activation",
]


class ReLU(Cell):
    """max(x, 0)."""

    def construct(self, x):
        return _op("relu", x)


class ReLU6(Cell):
    """min(max(x, 0), 6)."""

    def construct(self, x):
        return _op("relu6", x)


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
        return _op("maximum", x, x * self.alpha)


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
}


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
