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

__all__ = ["Dense", "Flatten", "Dropout", "Identity", "Upsample", "PixelShuffle", "PixelUnshuffle"]


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
        shape = x.shape
        if len(shape) != 2:
            x = _op("reshape", x, shape=[-1, shape[-1]])
        if self.bias is not None:
            x = _op("dense", x, self.weight, self.bias)
        else:
            x = _op("matmul", x, self.weight, transpose_b=True)
        if self.activation_flag:
            x = self.activation(x)
        if len(shape) != 2:
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
