"""Dense, Flatten, Dropout, Identity, Upsample, PixelShuffle and PixelUnshuffle."""
import math
import warnings

from ..._tensor import Tensor
from ..._warnings import MsrtWarning
from ...common import dtype as mstype
from ...common.initializer import HeUniform, Uniform, initializer
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import Cell
from .activation import get_activation

__all__ = ["Dense", "Flatten", "Dropout", "Identity", "Upsample", "PixelShuffle", "PixelUnshuffle", "Dropout1d",
           "Dropout2d", "Dropout3d", "Unflatten", "ClipByNorm"]


def _check_positive_int(value, arg, cls_name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls_name}', the argument '{arg}' must be a positive int, but got {value}.")
    return value


class Dense(Cell):
    """Fully connected layer: activation(x @ weight^T + bias), weight (out, in).

    Defaults as MindSpore 2.3: weight HeUniform(sqrt(5)), bias
    Uniform(1/sqrt(in_channels)).
    """

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 activation=None, dtype=mstype.float32):
        super().__init__()
        self.in_channels = _check_positive_int(in_channels, "in_channels", "Dense")
        self.out_channels = _check_positive_int(out_channels, "out_channels", "Dense")
        if not isinstance(has_bias, bool):
            raise TypeError(f"For 'Dense', the argument 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.has_bias = has_bias
        if isinstance(weight_init, Tensor) and tuple(weight_init.shape) != (out_channels, in_channels):
            raise ValueError(
                "For 'Dense', weight init shape error. The shape of 'weight_init' must be "
                f"(out_channels, in_channels) = "
                f"({out_channels}, {in_channels}), but got {tuple(weight_init.shape)}."
            )
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(initializer(weight_init, [out_channels, in_channels], dtype), name="weight")
        self.bias = None
        if has_bias:
            if isinstance(bias_init, Tensor) and tuple(bias_init.shape) != (out_channels,):
                raise ValueError(
                    f"For 'Dense', bias init shape error. The shape of 'bias_init' must be ({out_channels},), "
                    f"but got {tuple(bias_init.shape)}."
                )
            if bias_init is None:
                bias_init = Uniform(1.0 / math.sqrt(in_channels))
            self.bias = Parameter(initializer(bias_init, [out_channels], dtype), name="bias")
        self.activation = get_activation(activation) if isinstance(activation, str) else activation
        if activation is not None and not isinstance(self.activation, Cell):
            raise TypeError(
                f"For 'Dense', the argument 'activation' must be str, Cell or None, "
                f"but got {type(activation).__name__}."
            )
        self.activation_flag = self.activation is not None

    def construct(self, x):
        shape = x.shape if x.ndim != 2 else None  # the rank alone for the common call (a shape costs a tuple)
        if shape is not None:
            x = _op("reshape", x, shape=[-1, shape[-1]])
        if self.bias is not None:
            x = _op("dense", x, self.weight, self.bias)
        else:
            x = _op("matmul", x, self.weight, transpose_b=True)
        if self.activation_flag:
            x = self.activation(x)
        if shape is not None:
            x = _op("reshape", x, shape=list(shape[:-1]) + [self.out_channels])
        return x

    def extend_repr(self):
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation_flag:
            s += f", activation={self.activation}"
        return s


class Flatten(Cell):
    """Flattens dims start_dim..end_dim (MindSpore 2.x; default keeps dim 0)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        for arg, value in (("start_dim", start_dim), ("end_dim", end_dim)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For 'Flatten', the argument '{arg}' must be int, but got {type(value).__name__}.")
        self.start_dim = start_dim
        self.end_dim = end_dim

    def construct(self, x):
        shape = x.shape
        ndim = len(shape)
        if self.start_dim == 1 and self.end_dim == -1 and ndim >= 2:
            return _op("flatten", x)
        if ndim == 0:
            return _op("reshape", x, shape=[1])
        start = self.start_dim + ndim if self.start_dim < 0 else self.start_dim
        end = self.end_dim + ndim if self.end_dim < 0 else self.end_dim
        if not (0 <= start < ndim and 0 <= end < ndim) or start > end:
            raise ValueError(
                f"For 'Flatten', 'start_dim' {self.start_dim} and 'end_dim' {self.end_dim} are out of range or "
                f"out of order for an input of rank {ndim}."
            )
        middle = 1
        for d in shape[start:end + 1]:
            middle *= d
        return _op("reshape", x, shape=list(shape[:start]) + [middle] + list(shape[end + 1:]))


class Dropout(Cell):
    """Zeroes elements with probability p (1 - keep_prob) while training and
    scales the rest by 1/(1 - p); the identity in eval mode (MindSpore 2.x)."""

    def __init__(self, keep_prob=None, p=None, dtype=mstype.float32):
        super().__init__()
        if p is None:
            if keep_prob is None:
                keep_prob = 0.5
            else:
                warnings.warn("For Dropout, the argument 'keep_prob' will be deprecated, please use 'p' instead.",
                              MsrtWarning, stacklevel=2)
            if not isinstance(keep_prob, (int, float)) or isinstance(keep_prob, bool):
                raise TypeError(f"For 'Dropout', the argument 'keep_prob' must be float, "
                                f"but got {type(keep_prob).__name__}.")
            if not 0.0 < keep_prob <= 1.0:
                raise ValueError(f"For 'Dropout', the 'keep_prob' must be a number in range (0, 1], "
                                 f"but got {keep_prob}.")
            self.keep_prob = float(keep_prob)
            self.p = 1.0 - self.keep_prob
        else:
            if not isinstance(p, (int, float)) or isinstance(p, bool):
                raise TypeError(f"For 'Dropout', the argument 'p' must be float, but got {type(p).__name__}.")
            if not 0.0 <= p < 1.0:
                raise ValueError(f"For 'Dropout', the 'p' must be a number in range [0, 1), but got {p}.")
            self.p = float(p)
            self.keep_prob = 1.0 - self.p

    def construct(self, x):
        if not self.training or self.keep_prob == 1.0:
            return x
        out, _ = _op("dropout", x, keep_prob=self.keep_prob)
        return out

    def extend_repr(self):
        return f"p={self.p}"


class _DropoutNd(Cell):
    """Zeroes whole channels (every element of a sample's channel together) with probability p while
    training and scales the others by 1/(1 - p); the identity in eval mode. The input is (N, C, *spatial)
    or, unbatched, (C, *spatial) with `_spatial` spatial axes."""

    _spatial = 0

    def __init__(self, p=0.5):
        super().__init__()
        name = self.cls_name
        if not isinstance(p, (int, float)) or isinstance(p, bool):
            raise TypeError(f"For '{name}', the argument 'p' must be float, but got {type(p).__name__}.")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"For '{name}', the 'p' must be a number in range [0, 1], but got {p}.")
        self.p = float(p)

    def construct(self, x):
        rank = len(x.shape)
        if rank not in (self._spatial + 1, self._spatial + 2):
            raise ValueError(f"For '{self.cls_name}', the input must be {self._spatial + 2}-D (N, C, ...) or "
                             f"{self._spatial + 1}-D (C, ...), but got shape {x.shape}.")
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return x * 0
        # one draw per channel: the dropout op on ones of the shape (N, C, 1, ...)
        mask_shape = list(x.shape[:rank - self._spatial]) + [1] * self._spatial
        ones = _op("fill", shape=mask_shape, value=1.0, dtype=x._t.dtype_name)
        mask, _ = _op("dropout", ones, keep_prob=1.0 - self.p)
        return x * mask

    def extend_repr(self):
        return f"p={self.p}"


class Dropout1d(_DropoutNd):
    """Channel dropout of (N, C, L) or (C, L) inputs."""

    _spatial = 1


class Dropout2d(_DropoutNd):
    """Channel dropout of (N, C, H, W) or (C, H, W) inputs."""

    _spatial = 2


class Dropout3d(_DropoutNd):
    """Channel dropout of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _spatial = 3


class Unflatten(Cell):
    """Splits axis `axis` into `unflattened_size` (whose product must be that axis's length)."""

    def __init__(self, axis, unflattened_size):
        super().__init__()
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"For 'Unflatten', the argument 'axis' must be int, but got {type(axis).__name__}.")
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in unflattened_size):
            raise TypeError(f"For 'Unflatten', the argument 'unflattened_size' must be a tuple or list of ints, "
                            f"but got {unflattened_size!r}.")
        self.axis = axis
        self.unflattened_size = tuple(unflattened_size)

    def construct(self, x):
        shape = list(x.shape)
        axis = self.axis + len(shape) if self.axis < 0 else self.axis
        if not 0 <= axis < len(shape):
            raise ValueError(f"For 'Unflatten', the 'axis' must be in range [{-len(shape)}, {len(shape)}), "
                             f"but got {self.axis}.")
        size = 1
        for d in self.unflattened_size:
            size *= d
        if size != shape[axis]:
            raise ValueError(f"For 'Unflatten', the product of 'unflattened_size' {self.unflattened_size} must equal "
                             f"the size of axis {self.axis} ({shape[axis]}) of the input of shape {tuple(shape)}.")
        return _op("reshape", x, shape=shape[:axis] + list(self.unflattened_size) + shape[axis + 1:])

    def extend_repr(self):
        return f"axis={self.axis}, unflattened_size={self.unflattened_size}"


class ClipByNorm(Cell):
    """x * clip_norm / max(||x||_2, clip_norm): x rescaled so that its L2 norm over `axis` (None:
    all axes) is at most clip_norm. construct(x, clip_norm)."""

    def __init__(self, axis=None):
        super().__init__()
        if axis is not None and not (isinstance(axis, int) and not isinstance(axis, bool)) and not (
                isinstance(axis, (tuple, list)) and all(isinstance(a, int) and not isinstance(a, bool) for a in axis)):
            raise TypeError(f"For 'ClipByNorm', the argument 'axis' must be None, an int or a tuple of ints, "
                            f"but got {axis!r}.")
        self.axis = axis

    def construct(self, x, clip_norm):
        from ... import ops

        axis = tuple(range(len(x.shape))) if self.axis is None else self.axis
        squares = (x * x).sum(axis=axis, keepdims=True)
        positive = squares > 0
        # the norm, with a zero sum kept away from sqrt's infinite gradient at 0
        norm = ops.where(positive, ops.sqrt(ops.where(positive, squares, ops.ones_like(squares))), squares)
        clip_norm = clip_norm if isinstance(clip_norm, Tensor) else Tensor(clip_norm, x.dtype)
        clip_norm = ops.cast(clip_norm, x.dtype)
        return x * clip_norm / ops.maximum(norm, clip_norm)


class Identity(Cell):
    """Returns its input."""

    def construct(self, x):
        return x


class Upsample(Cell):
    """Resizes (N, C, L) or (N, C, H, W) input to `size` or by `scale_factor` ('nearest', 'linear',
    'bilinear'), as MindSpore 2.3's `nn.Upsample` (the interpolate op)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        if recompute_scale_factor is not None:
            raise NotImplementedError("For 'Upsample', 'recompute_scale_factor' is not supported by msrt yet.")
        if not isinstance(mode, str):
            raise TypeError(f"For 'Upsample', the argument 'mode' must be str, but got {type(mode).__name__}.")
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners

    def construct(self, x):
        return _op("interpolate", x, size=self.size, scale_factor=self.scale_factor, mode=self.mode,
                   align_corners=self.align_corners)

    def extend_repr(self):
        return (f"size={self.size}, scale_factor={self.scale_factor}, mode={self.mode}, "
                f"align_corners={self.align_corners}")


class PixelShuffle(Cell):
    """Rearranges (*, C * r^2, H, W) into (*, C, H * r, W * r) (the pixel_shuffle op)."""

    def __init__(self, upscale_factor):
        super().__init__()
        _check_positive_int(upscale_factor, "upscale_factor", "PixelShuffle")
        self.upscale_factor = upscale_factor

    def construct(self, x):
        return _op("pixel_shuffle", x, upscale_factor=self.upscale_factor)

    def extend_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Cell):
    """Rearranges (*, C, H * r, W * r) into (*, C * r^2, H, W) (the pixel_unshuffle op)."""

    def __init__(self, downscale_factor):
        super().__init__()
        _check_positive_int(downscale_factor, "downscale_factor", "PixelUnshuffle")
        self.downscale_factor = downscale_factor

    def construct(self, x):
        return _op("pixel_unshuffle", x, downscale_factor=self.downscale_factor)

    def extend_repr(self):
        return f"downscale_factor={self.downscale_factor}"
