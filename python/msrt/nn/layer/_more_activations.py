"""Activation cells composed of existing ops, as MindSpore 2.3 has them: ELU, SeLU, CELU, Softplus,
Softsign, LogSigmoid, Hardtanh, HShrink, SoftShrink, Tanhshrink, Threshold, GLU and Softmin. Where a
branch could overflow (exp of a large input) it is computed on the input clamped to the other side,
so neither its value nor its gradient turns into inf or nan where `where` does not pick it."""
from ... import ops
from ..cell import Cell

__all__ = ["ELU", "SeLU", "CELU", "Softplus", "Softsign", "LogSigmoid", "Hardtanh", "HShrink", "SoftShrink",
           "Tanhshrink", "Threshold", "GLU", "Softmin"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _number(value, arg, cls_name):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be float, but got {type(value).__name__}.")
    return float(value)


def _expm1_negative(x):
    """exp(min(x, 0)) - 1, the negative branch of ELU-like functions."""
    return ops.exp(ops.minimum(x, ops.zeros_like(x))) - 1


class ELU(Cell):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _number(alpha, "alpha", self.cls_name)

    def construct(self, x):
        return ops.where(x > 0, x, self.alpha * _expm1_negative(x))


class SeLU(Cell):
    """scale * (x for x > 0, alpha * (exp(x) - 1) otherwise), with SELU's constants."""

    def construct(self, x):
        return _SELU_SCALE * ops.where(x > 0, x, _SELU_ALPHA * _expm1_negative(x))


class CELU(Cell):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _number(alpha, "alpha", self.cls_name)
        if self.alpha == 0:
            raise ValueError(f"For '{self.cls_name}', the 'alpha' must not be 0, but got {alpha}.")

    def construct(self, x):
        return ops.where(x > 0, x, self.alpha * _expm1_negative(x / self.alpha))


class Softplus(Cell):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = _number(beta, "beta", self.cls_name)
        self.threshold = _number(threshold, "threshold", self.cls_name)

    def construct(self, x):
        scaled = x * self.beta
        big = scaled > self.threshold
        safe = ops.where(big, ops.zeros_like(scaled), scaled)
        return ops.where(big, x, ops.log(1 + ops.exp(safe)) / self.beta)


class Softsign(Cell):
    """x / (1 + |x|)."""

    def construct(self, x):
        return x / (1 + ops.abs(x))


class LogSigmoid(Cell):
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|))."""

    def construct(self, x):
        return ops.minimum(x, ops.zeros_like(x)) - ops.log(1 + ops.exp(-ops.abs(x)))


class Hardtanh(Cell):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val = _number(min_val, "min_val", self.cls_name)
        self.max_val = _number(max_val, "max_val", self.cls_name)
        if self.min_val >= self.max_val:
            raise ValueError(f"For '{self.cls_name}', the 'min_val' must be less than 'max_val', "
                             f"but got min_val {min_val} and max_val {max_val}.")

    def construct(self, x):
        return ops.clamp(x, self.min_val, self.max_val)


def _lambd(lambd, cls_name):
    lambd = _number(lambd, "lambd", cls_name)
    if lambd < 0:
        raise ValueError(f"For '{cls_name}', the 'lambd' must be no less than 0, but got {lambd}.")
    return lambd


class HShrink(Cell):
    """x where |x| > lambd, 0 elsewhere."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _lambd(lambd, self.cls_name)

    def construct(self, x):
        return ops.where(ops.abs(x) > self.lambd, x, ops.zeros_like(x))


class SoftShrink(Cell):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _lambd(lambd, self.cls_name)

    def construct(self, x):
        zero = ops.zeros_like(x)
        return ops.where(x > self.lambd, x - self.lambd, ops.where(x < -self.lambd, x + self.lambd, zero))


class Tanhshrink(Cell):
    """x - tanh(x)."""

    def construct(self, x):
        return x - ops.tanh(x)


class Threshold(Cell):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = _number(threshold, "threshold", self.cls_name)
        self.value = _number(value, "value", self.cls_name)

    def construct(self, x):
        return ops.where(x > self.threshold, x, ops.full_like(x, self.value))


class GLU(Cell):
    """a * sigmoid(b), a and b the two halves of x along `axis`."""

    def __init__(self, axis=-1):
        super().__init__()
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"For '{self.cls_name}', the argument 'axis' must be int, but got {type(axis).__name__}.")
        self.axis = axis

    def construct(self, x):
        size = x.shape[self.axis]
        if size % 2:
            raise ValueError(f"For '{self.cls_name}', the size of axis {self.axis} must be even, but got {size}.")
        a, b = ops.split(x, size // 2, self.axis)
        return a * ops.sigmoid(b)


class Softmin(Cell):
    """softmax(-x) along `axis`."""

    def __init__(self, axis=-1):
        super().__init__()
        if not isinstance(axis, (int, tuple)) or isinstance(axis, bool):
            raise TypeError(f"For '{self.cls_name}', the argument 'axis' must be int or tuple, "
                            f"but got {type(axis).__name__}.")
        self.axis = axis

    def construct(self, x):
        return ops.softmax(-x, self.axis)
