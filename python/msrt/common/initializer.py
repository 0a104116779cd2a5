"""Initializers (`ms.common.initializer`): how parameters get their first values.

`initializer(init, shape, dtype)` returns a Tensor filled by an Initializer
(an instance, its alias such as "he_uniform", or a number for Constant).
Fan-in and fan-out follow MindSpore: for a weight of shape (out, in, *k),
fan_in = in * prod(k) and fan_out = out * prod(k). Random draws come from the
global seed (`ms.set_seed`), not from NumPy's global generator.
"""
import abc
import math
import numbers

import numpy as np

from .. import _tensor
from .._tensor import Tensor, _TensorBase, _wrap
from . import dtype as mstype
from .seed import _init_generator

__all__ = [
    "Initializer", "initializer", "TruncatedNormal", "Normal", "Uniform", "HeUniform", "HeNormal", "XavierUniform",
    "XavierNormal", "One", "Zero", "Constant", "Identity", "Sparse", "Dirac", "Orthogonal", "VarianceScaling",
]

_ALIASES = {}


def _register(*aliases):
    def add(cls):
        _ALIASES.setdefault(cls.__name__.lower(), cls)
        for alias in aliases:
            _ALIASES.setdefault(alias, cls)
        return cls

    return add


class Initializer(abc.ABC):
    """Base class: subclasses fill a NumPy array in place in `_initialize(arr)`."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._seed = None

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, value):
        self._seed = value

    def _rng(self):
        if self._seed is not None:
            return np.random.default_rng(self._seed)
        return _init_generator()

    @abc.abstractmethod
    def _initialize(self, arr):
        """Fills NumPy array `arr` in place."""

    def __call__(self, arr):
        return self._initialize(arr)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


def _assign(arr, value):
    arr[...] = value
    return arr


def _calculate_fan_in_and_fan_out(shape):
    dims = len(shape)
    if dims < 2:
        raise ValueError("'fan_in' and 'fan_out' can not be computed for tensor with fewer than 2 dimensions, "
                         f"but got dimensions {dims}.")
    receptive = 1
    for d in shape[2:]:
        receptive *= d
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(shape, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"'mode' {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
    return fan_in if mode == "fan_in" else fan_out


def _calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"For 'HeUniform', 'negative_slope' {param} is not a valid number. When 'nonlinearity' "
                             f"has been set to 'leaky_relu', 'negative_slope' should be int or float type, but got "
                             f"{type(param)}.")
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError("For 'HeUniform', the argument 'nonlinearity' should be one of ['sigmoid', 'tanh', 'relu' or "
                     f"'leaky_relu'], but got {nonlinearity}.")


def _normal(rng, mean, sigma, shape):
    if sigma < 0:
        raise ValueError(f"The 'sigma' of a normal distribution must be non-negative, but got {sigma}.")
    return rng.normal(mean, sigma, size=shape).astype(np.float32)


def _uniform(rng, low, high, shape):
    return rng.uniform(low, high, size=shape).astype(np.float32)


# Samples drawn at a time (Note [Freed host heap] in src/memory/allocator.cc): a float64 draw of a whole large tensor,
# once freed, is kept by glibc's heap at its size, which tensors (living in the memory pool) never reuse. Drawn in
# blocks into the tensor's memory, the values and the generator's state after are those of one draw.
_BLOCK = 1 << 16


def _fill(arr, draw):
    """arr's elements from draw(n) (float64 samples, rounded to float32 first as _normal and _uniform do)."""
    flat = arr.reshape(-1)
    if not np.shares_memory(flat, arr):
        return _assign(arr, draw(arr.size).astype(np.float32).reshape(arr.shape))
    for start in range(0, flat.size, _BLOCK):
        n = min(_BLOCK, flat.size - start)
        flat[start:start + n] = draw(n).astype(np.float32)
    return arr


def _fill_normal(arr, rng, mean, sigma):
    if sigma < 0:
        raise ValueError(f"The 'sigma' of a normal distribution must be non-negative, but got {sigma}.")
    return _fill(arr, lambda n: rng.normal(mean, sigma, size=n))


def _fill_uniform(arr, rng, low, high):
    return _fill(arr, lambda n: rng.uniform(low, high, size=n))


def _truncated_normal(rng, low, high, mean, sigma, shape):
    """Normal(mean, sigma) samples redrawn until they lie in [low, high]."""
    if sigma < 0:
        raise ValueError(f"The 'sigma' of a normal distribution must be non-negative, but got {sigma}.")
    data = rng.normal(mean, sigma, size=shape)
    flat = data.reshape(-1)
    bad = (flat < low) | (flat > high)
    while bad.any():
        flat[bad] = rng.normal(mean, sigma, size=int(bad.sum()))
        bad = (flat < low) | (flat > high)
    return data.astype(np.float32)


@_register("zeros")
class Zero(Initializer):
    """Fills with 0."""

    def _initialize(self, arr):
        arr.fill(0)


@_register("ones")
class One(Initializer):
    """Fills with 1."""

    def _initialize(self, arr):
        arr.fill(1)


class Constant(Initializer):
    """Fills with `value`."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _initialize(self, arr):
        _assign(arr, self.value)


@_register()
class Normal(Initializer):
    """Samples from N(mean, sigma²)."""

    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma = sigma
        self.mean = mean

    def _initialize(self, arr):
        _fill_normal(arr, self._rng(), self.mean, self.sigma)


@_register()
class Uniform(Initializer):
    """Samples from U(-scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _initialize(self, arr):
        _fill_uniform(arr, self._rng(), -self.scale, self.scale)


@_register()
class TruncatedNormal(Initializer):
    """Samples from N(0, sigma²) truncated to [-2, 2]."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _initialize(self, arr):
        _assign(arr, _truncated_normal(self._rng(), -2, 2, 0, self.sigma, arr.shape))


@_register("xavier_uniform")
class XavierUniform(Initializer):
    """Samples from U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        _fill_uniform(arr, self._rng(), -bound, bound)


@_register("xavier_normal")
class XavierNormal(Initializer):
    """Samples from N(0, s²) with s = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        std = self.gain * math.sqrt(2.0 / float(fan_in + fan_out))
        _fill_normal(arr, self._rng(), 0, std)


class _He(Initializer):
    """Shared by HeUniform and HeNormal: std = gain / sqrt(fan)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope = negative_slope
        self.mode = mode
        self.nonlinearity = nonlinearity

    def _std(self, shape):
        fan = _calculate_correct_fan(shape, self.mode)
        return _calculate_gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


@_register("he_uniform")
class HeUniform(_He):
    """Samples from U(-b, b) with b = gain * sqrt(3 / fan)."""

    def _initialize(self, arr):
        bound = math.sqrt(3.0) * self._std(arr.shape)
        _fill_uniform(arr, self._rng(), -bound, bound)


@_register("he_normal")
class HeNormal(_He):
    """Samples from N(0, s²) with s = gain / sqrt(fan)."""

    def _initialize(self, arr):
        _fill_normal(arr, self._rng(), 0, self._std(arr.shape))


@_register()
class Identity(Initializer):
    """A 2-D identity matrix."""

    def _initialize(self, arr):
        if len(arr.shape) != 2:
            raise ValueError("For Identity initializer, the dimension of the initialized tensor should be 2, "
                             f"but got {len(arr.shape)}.")
        _assign(arr, np.eye(arr.shape[0], arr.shape[1]))


@_register()
class Sparse(Initializer):
    """N(0, sigma²) with a `sparsity` fraction of each column set to zero."""

    def __init__(self, sparsity, sigma=0.01):
        super().__init__(sparsity=sparsity, sigma=sigma)
        self.sparsity = sparsity
        self.sigma = sigma

    def _initialize(self, arr):
        if len(arr.shape) != 2:
            raise ValueError("For Sparse initializer, the dimension of the initialized tensor should be 2, "
                             f"but got {len(arr.shape)}.")
        rows, cols = arr.shape
        zeros = int(np.ceil(self.sparsity * rows))
        rng = self._rng()
        data = _normal(rng, 0, self.sigma, arr.shape)
        for col in range(cols):
            data[rng.permutation(rows)[:zeros], col] = 0.0
        _assign(arr, data)


@_register()
class Dirac(Initializer):
    """Preserves the identity of the inputs of a convolution (3-, 4- or 5-D weights)."""

    def __init__(self, groups=1):
        super().__init__(groups=groups)
        self.groups = groups

    def _initialize(self, arr):
        shape = arr.shape
        if len(shape) not in (3, 4, 5):
            raise ValueError("For Dirac initializer, only support to initialize tensor with dimension of 3, 4 or 5, "
                             f"but got {len(shape)}.")
        if shape[0] % self.groups != 0:
            raise ValueError("For Dirac initializer, the first dimension of the initialized tensor must be divisible "
                             f"by groups, but got first dimension {shape[0]}, groups {self.groups}.")
        data = np.zeros(shape)
        per_group = shape[0] // self.groups
        centre = tuple(d // 2 for d in shape[2:])
        for g in range(self.groups):
            for d in range(min(per_group, shape[1])):
                data[(g * per_group + d, d) + centre] = 1
        _assign(arr, data)


@_register()
class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix scaled by `gain` (trailing dimensions flattened)."""

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        if len(arr.shape) < 2:
            raise ValueError("For Orthogonal initializer, the dimension of the initialized tensor should be no less "
                             f"than 2, but got {len(arr.shape)}.")
        rows = arr.shape[0]
        cols = int(np.prod(arr.shape)) // rows
        data = _normal(self._rng(), 0, 1, (rows, cols)).astype(np.float64)
        if rows < cols:
            data = data.T
        q, r = np.linalg.qr(data)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        _assign(arr, (q * self.gain).reshape(arr.shape))


@_register()
class VarianceScaling(Initializer):
    """Truncated normal, normal or uniform samples with variance scale / n."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        if scale <= 0.0:
            raise ValueError(f"For VarianceScaling initializer, the argument 'scale' must be greater than 0, "
                             f"but got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"For VarianceScaling initializer, the argument 'mode' must be fan_in, fan_out or "
                             f"fan_avg, but got {mode}.")
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("For VarianceScaling initializer, the argument 'distribution' must be uniform, "
                             f"truncated_norm or untruncated_norm, but got {distribution}.")
        self.scale = scale
        self.mode = mode
        self.distribution = distribution

    def _initialize(self, arr):
        fan_in, fan_out = _calculate_fan_in_and_fan_out(arr.shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        rng = self._rng()
        if self.distribution == "truncated_normal":
            std = math.sqrt(scale) / 0.87962566103423978
            data = _truncated_normal(rng, -2 * std, 2 * std, 0, std, arr.shape)
        elif self.distribution == "untruncated_normal":
            data = _normal(rng, 0, math.sqrt(scale), arr.shape)
        else:
            limit = math.sqrt(3.0 * scale)
            data = _uniform(rng, -limit, limit, arr.shape)
        _assign(arr, data)


def _shape_tuple(shape):
    if isinstance(shape, list):
        shape = tuple(shape)
    elif isinstance(shape, numbers.Integral):
        shape = (int(shape),)
    for value in shape if shape is not None else ():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError("For 'initializer', the argument 'shape' is invalid, the value of 'shape' must be "
                             f"positive integer, but got {shape}")
    return tuple(int(v) for v in shape) if shape is not None else None


def _generate(init, shape, dtype):
    """Fills a new tensor of `shape` and `dtype` with initializer `init`."""
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise ValueError(f"For 'initializer', the class corresponding to '{init}' was not found.")
        init = cls()
    elif isinstance(init, numbers.Number) and not isinstance(init, Initializer):
        init = Constant(init)
    shape = _shape_tuple(shape) if not isinstance(shape, tuple) else shape
    core = mstype._core_name(dtype, "argument 'dtype'")
    np_type = np.float32 if core == "bfloat16" else mstype.dtype_to_nptype(mstype._BY_CORE_NAME[core])
    from .._jit import capturing

    if core != "bfloat16" and not capturing() and int(np.prod(shape)) >= _BLOCK:
        # Filled where it lives (asnumpy shares the tensor's memory): no host array of its size
        # (Note [Freed host heap] in src/memory/allocator.cc).
        tensor = _tensor._op("zeros", shape=list(shape), dtype=core)
        init(tensor.asnumpy())
        return tensor
    arr = np.zeros(shape, dtype=np_type)
    init(arr)
    if core == "bfloat16":
        return _wrap(_TensorBase(arr, "bfloat16"))
    return Tensor(arr)


def initializer(init, shape=None, dtype=mstype.float32):
    """A Tensor of `shape` and `dtype` filled by `init` (an Initializer, its
    name such as "normal", a number, or a Tensor, returned as is)."""
    if not isinstance(init, (Tensor, numbers.Number, str, Initializer)):
        raise TypeError("For 'initializer', the type of the 'init' argument should be 'Tensor', 'number', 'string' "
                        f"or 'initializer', but got {type(init)}.")
    if isinstance(init, Tensor):
        wanted = shape if isinstance(shape, (tuple, list)) else [shape]
        if shape is not None and init.shape != tuple(wanted):
            raise ValueError("For 'initializer', the shape of the 'init' argument should be same as the argument "
                             f"'shape', but got the 'init' shape {list(init.shape)} and the 'shape' {list(wanted)}.")
        return init
    shape = _shape_tuple(shape)
    if shape is None:
        raise ValueError("For 'initializer', the argument 'shape' must be given.")
    return _generate(init, shape, dtype)


_tensor._set_init_generator(_generate)  # Tensor(init=...) fills through this module
