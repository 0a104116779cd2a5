"""`msrt.amp`: automatic mixed precision (MindSpore's `mindspore.amp`).

Note [Mixed precision]
A cell marked by `Cell.to_float(dtype)` casts its floating inputs and its
trainable parameters to `dtype` at each call and runs `construct` on them;
the Parameters themselves stay float32 (the master weights the optimizer
updates), and gradients reach them through the casts. Levels, as MindSpore defines them:
  O0  nothing changes;
  O1  the white-listed cells (`get_white_list()`: convolutions, Dense, the
      recurrent cells) and the white-listed primitives a cell holds as
      attributes (ops.MatMul, BatchMatMul, Conv2D, ReLU...) compute in
      `dtype`, their outputs are cast back to float32;
  O2  the whole network computes in `dtype` except the black-listed cells
      (`get_black_list()`: BatchNorm1d/2d/3d, LayerNorm), which compute in
      float32 and hand `dtype` on; the network's output is cast to float32;
  O3  the whole network computes in `dtype`, BatchNorm included (its running
      statistics are not trainable and stay float32); the output is cast to
      float32.
A list names classes that msrt's `nn` does not define yet are skipped.
MindSpore's O1 also casts the functional forms of those primitives called
in a `construct` (ops.matmul(...)); msrt's O1 does not.
`build_train_network` (and `Model(amp_level=...)`) also computes the loss in
float32: the network's output is cast before the loss function. At O2 it
trains with a DynamicLossScaleManager unless given another
`loss_scale_manager` (Note [Loss-scaled training step] in
msrt/nn/wrap/loss_scale.py). Kernels that lack `dtype` (every float16
convolution/matmul on CPU; bfloat16 ones on CPUs without AVX-512) compute in
float32 and round back to `dtype`, as the context key enable_reduce_precision
allows (see docs/runtime.md). A CPU graph (GRAPH_MODE, ms.jit) keeps its
float16 intermediates in float32 buffers holding float16 values, rounding
each result as the float16 kernel would: the same values without the
conversions (Note [float16 held in float32] in src/compiler/half_in_float32.h).
"""
import abc
import math

from . import _structure, nn, ops
from ._tensor import Tensor
from .common import dtype as mstype
from .common.parameter import Parameter
from .ops import functional as F
from .nn.wrap.loss_scale import grads_finite as _grads_finite
from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager

__all__ = ["auto_mixed_precision", "build_train_network", "DynamicLossScaler", "StaticLossScaler", "LossScaler",
           "all_finite", "get_white_list", "get_black_list", "LossScaleManager", "FixedLossScaleManager",
           "DynamicLossScaleManager"]

# MindSpore's lists, by name: the classes msrt's nn defines are used.
_WHITE_LIST_NAMES = ("Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose", "Dense",
                     "LSTMCell", "RNNCell", "GRUCell")
_BLACK_LIST_NAMES = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm")
_WHITE_LIST_PRIMITIVE_NAMES = ("Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "Conv2DBackpropInput",
                               "MatMul", "BatchMatMul", "PReLU", "ReLU", "Ger")
_LEVELS = ("O0", "O1", "O2", "O3")


def _classes(names):
    return [getattr(nn, name) for name in names if isinstance(getattr(nn, name, None), type)]


def get_white_list():
    """A copy of the cell classes that O1 computes in low precision."""
    return _classes(_WHITE_LIST_NAMES)


def get_black_list():
    """A copy of the cell classes that O2 keeps in float32."""
    return _classes(_BLACK_LIST_NAMES)


def _check_dtype(dtype, where):
    if dtype not in (mstype.float16, mstype.bfloat16):
        raise ValueError(f"For '{where}', the argument 'dtype' must be float16 or bfloat16, but got {dtype}.")


def _check_level(level, where, name="amp_level"):
    if level not in _LEVELS:
        raise ValueError(f"For '{where}', the argument '{name}' must be one of {list(_LEVELS)}, but got {level!r}.")


def auto_mixed_precision(network, amp_level="O0", dtype=mstype.float16):
    """Marks `network`'s cells to compute in `dtype` (float16 or bfloat16) as
    `amp_level` says (Note [Mixed precision]); returns `network`."""
    if not isinstance(network, nn.Cell):
        raise TypeError(f"For 'auto_mixed_precision', the argument 'network' must be a Cell, but got "
                        f"{type(network).__name__}.")
    _check_level(amp_level, "auto_mixed_precision")
    _check_dtype(dtype, "auto_mixed_precision")
    if amp_level == "O1":
        white = tuple(get_white_list())
        primitives = tuple(getattr(ops, n) for n in _WHITE_LIST_PRIMITIVE_NAMES
                           if isinstance(getattr(ops, n, None), type))
        for _, cell in network.cells_and_names():
            if isinstance(cell, white):
                cell.to_float(dtype)
                cell._set_amp(dtype, output_dtype=mstype.float32)
            elif cell._amp_dtype is None:
                for name, value in list(vars(cell).items()):
                    if isinstance(value, primitives):
                        cell.__dict__[name] = _AmpPrimitive(value, dtype)
    elif amp_level in ("O2", "O3"):
        network.to_float(dtype)
        if amp_level == "O2":
            black = tuple(get_black_list())
            for _, cell in network.cells_and_names():
                if isinstance(cell, black):
                    cell.to_float(mstype.float32)
                    cell._set_amp(mstype.float32, output_dtype=dtype)
        network = _OutputTo32(network)
    return network


class _AmpPrimitive:
    """A white-listed primitive held by a cell, computed in `dtype` with its
    floating outputs cast to float32 (O1). Other attributes are the primitive's."""

    def __init__(self, primitive, dtype):
        self.__dict__["_primitive"] = primitive
        self.__dict__["_dtype"] = dtype

    def __call__(self, *args, **kwargs):
        args = tuple(_cast_low(a, self._dtype) for a in args)
        return _cast_float32(self._primitive(*args, **kwargs))

    def __getattr__(self, name):
        return getattr(self.__dict__["_primitive"], name)

    def __repr__(self):
        return repr(self._primitive)


def _cast_low(value, dtype):
    if isinstance(value, Tensor) and value.dtype == mstype.float32:
        return F.cast(value, dtype)
    return value


class _OutputTo32(nn.Cell):
    """The network with its floating outputs cast to float32 (O2 and O3)."""

    def __init__(self, backbone):
        super().__init__(auto_prefix=False)
        self._backbone = backbone

    def construct(self, *args, **kwargs):
        return _cast_float32(self._backbone(*args, **kwargs))


def _cast_float32(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_cast_float32(v) for v in value)
    if isinstance(value, Tensor) and value.dtype in (mstype.float16, mstype.bfloat16):
        return F.cast(value, mstype.float32)
    return value


class _LossInFloat32(nn.Cell):
    """loss_fn(float32(backbone(data)), label): the loss of a low-precision network in float32."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        if out.dtype != mstype.float32:
            out = F.cast(out, mstype.float32)
        if label.dtype in (mstype.float16, mstype.bfloat16):
            label = F.cast(label, mstype.float32)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self):
        return self._backbone


def _add_loss_network(network, loss_fn, level):
    if level in ("O0",):
        return nn.WithLossCell(network, loss_fn)
    return _LossInFloat32(network, loss_fn)


def build_train_network(network, optimizer, loss_fn=None, level="O0", boost_level="O0", dtype=mstype.float16,
                        **kwargs):
    """The training step of `network` after auto_mixed_precision(network,
    level, dtype), with `loss_fn` computed in float32: a
    TrainOneStepWithLossScaleCell when the loss scale manager (O2's default:
    DynamicLossScaleManager(); `loss_scale_manager=` any other) has an update
    cell, else a TrainOneStepCell with the manager's fixed scale as sens.
    `keep_batchnorm_fp32` and `cast_model_type` override the level's."""
    if not isinstance(network, nn.Cell):
        raise TypeError(f"For 'build_train_network', the argument 'network' must be a Cell, but got "
                        f"{type(network).__name__}.")
    if not isinstance(optimizer, nn.Cell):
        raise TypeError(f"For 'build_train_network', the argument 'optimizer' must be a Cell, but got "
                        f"{type(optimizer).__name__}.")
    _check_level(level, "build_train_network", "level")
    unknown = set(kwargs) - {"keep_batchnorm_fp32", "cast_model_type", "loss_scale_manager"}
    if unknown:
        raise ValueError(f"For 'build_train_network', unknown arguments {sorted(unknown)}; expected "
                         f"'keep_batchnorm_fp32', 'cast_model_type' or 'loss_scale_manager'.")
    if "loss_scale_manager" in kwargs:
        manager = kwargs["loss_scale_manager"]
        if manager is not None and not isinstance(manager, LossScaleManager):
            raise TypeError(f"For 'build_train_network', the argument 'loss_scale_manager' must be a "
                            f"LossScaleManager, but got {type(manager).__name__}.")
    else:
        manager = DynamicLossScaleManager() if level == "O2" else None
    cast_type = kwargs.get("cast_model_type")
    if cast_type is not None:
        if cast_type == mstype.float32:
            level = "O0"
        else:
            _check_dtype(cast_type, "build_train_network")
            dtype = cast_type
            if level in ("O0", "O1"):
                level = "O2"
    if "keep_batchnorm_fp32" in kwargs and level in ("O2", "O3"):
        keep = kwargs["keep_batchnorm_fp32"]
        if not isinstance(keep, bool):
            raise TypeError(f"For 'build_train_network', 'keep_batchnorm_fp32' must be a bool, but got "
                            f"{type(keep).__name__}.")
        level = "O2" if keep else "O3"
    network = auto_mixed_precision(network, level, dtype)
    if loss_fn is not None:
        network = _add_loss_network(network, loss_fn, level)
    return _train_step(network, optimizer, manager)


def _train_step(network, optimizer, manager):
    if manager is not None:
        update_cell = manager.get_update_cell()
        if update_cell is not None:
            return nn.TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell)
        return nn.TrainOneStepCell(network, optimizer, sens=float(manager.get_loss_scale()))
    return nn.TrainOneStepCell(network, optimizer)


def _not_a_sequence(value):
    return not isinstance(value, (tuple, list))


def all_finite(inputs):
    """A bool Tensor: True when no element of the tensors in `inputs` (a
    tensor or a tuple/list of them) is inf or NaN."""
    leaves = []
    _structure.map_leaves(inputs, leaves.append, _not_a_sequence)
    for t in leaves:
        if not isinstance(t, Tensor):
            raise TypeError(f"For 'all_finite', the inputs must be Tensors, but got {type(t).__name__}.")
    return _grads_finite(leaves)


class LossScaler(abc.ABC):
    """Base of the loss scalers: scale the loss by the Parameter `scale_value`,
    unscale the gradients, adjust the scale after a step."""

    scale_value = None  # a float32 Parameter, set by each scaler

    def scale(self, inputs):
        return _structure.map_leaves(inputs, lambda x: F.mul(x, F.cast(self.scale_value, x.dtype)), _not_a_sequence)

    def unscale(self, inputs):
        return _structure.map_leaves(inputs, lambda x: F.div(x, F.cast(self.scale_value, x.dtype)), _not_a_sequence)

    @abc.abstractmethod
    def adjust(self, grads_finite):
        """Updates the scale after a step whose gradients were finite or not."""


def _check_scale_value(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{where}', the argument 'scale_value' must be int or float, but got "
                        f"{type(value).__name__}.")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"For '{where}', the argument 'scale_value' must be a finite positive number, but got "
                         f"{value}.")


class StaticLossScaler(LossScaler):
    """Multiplies the loss by a fixed `scale_value` and divides gradients by it."""

    def __init__(self, scale_value):
        _check_scale_value(scale_value, "StaticLossScaler")
        self.scale_value = Parameter(Tensor(float(scale_value), mstype.float32), name="scale_value",
                                     requires_grad=False)

    def adjust(self, grads_finite):
        return False


class DynamicLossScaler(LossScaler):
    """Scales by `scale_value`; `adjust(grads_finite)` divides the scale by
    `scale_factor` (not below 1) after non-finite gradients and multiplies it
    by `scale_factor` after `scale_window` finite steps in a row."""

    def __init__(self, scale_value, scale_factor, scale_window):
        _check_scale_value(scale_value, "DynamicLossScaler")
        if isinstance(scale_factor, bool) or not isinstance(scale_factor, int) or scale_factor <= 0:
            raise ValueError(f"For 'DynamicLossScaler', the argument 'scale_factor' must be a positive int, but got "
                             f"{scale_factor!r}.")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) or scale_window <= 0:
            raise ValueError(f"For 'DynamicLossScaler', the argument 'scale_window' must be a positive int, but got "
                             f"{scale_window!r}.")
        self.scale_value = Parameter(Tensor(float(scale_value), mstype.float32), name="scale_value",
                                     requires_grad=False)
        self.scale_factor = scale_factor
        self.scale_window = scale_window
        self.counter = Parameter(Tensor(0, mstype.int32), name="counter", requires_grad=False)

    def adjust(self, grads_finite):
        one = F.cast(Tensor(1), mstype.int32)
        count = F.add(self.counter, one)
        grown = F.mul(self.scale_value, float(self.scale_factor))
        grow = F.logical_and(F.logical_and(grads_finite, F.equal(count, self.scale_window)), _grads_finite([grown]))
        shrunk = F.maximum(F.div(self.scale_value, float(self.scale_factor)), 1.0)
        new_scale = F.select(grads_finite, F.select(grow, grown, self.scale_value), shrunk)
        zero = F.mul(count, 0)
        new_count = F.select(F.logical_and(grads_finite, F.logical_not(grow)), count, zero)
        F.assign(self.scale_value, new_scale)
        F.assign(self.counter, new_count)
        return grads_finite
