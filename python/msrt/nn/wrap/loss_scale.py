"""Training with a loss scale (MindSpore's `nn.TrainOneStepWithLossScaleCell`,
`nn.DynamicLossScaleUpdateCell`, `nn.FixedLossScaleUpdateCell`).

Note [Loss-scaled training step]
One step: loss = network(*inputs); the backward pass is seeded with the loss
scale (so float16 gradients keep their small values), the gradients are
divided by the scale, and `overflow` is True when any of them is inf or NaN.
The update cell (if any) then adjusts the scale, and the optimizer runs only
when there was no overflow. The step returns (loss, overflow, the scale it
used). The choice to update or not is made on the host: the gradients and
the overflow flag come from one graph (compiled in GRAPH_MODE), the scale
update and the optimizer run as graphs of their own. A step called inside a
function being compiled must read `overflow`, which jit_syntax_level decides
(STRICT raises, LAX runs the step eagerly).
"""
import math
import numbers

from ... import _C, _jit
from ..._tensor import Tensor, _op
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...ops import functional as F
from ...profiler import _span
from .. import cell as _cell
from ..cell import Cell
from .. import _grad_bridge as _bridge
from ...context import ParallelMode
from ...parallel._utils import _check_trainable_parallel_mode, _get_device_num, _get_gradients_mean

__all__ = ["TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell"]


def grads_finite(grads):
    """A bool Tensor: True when no element of the tensors in `grads` is inf or NaN (one read of each)."""
    grads = list(grads)
    if not grads:
        return Tensor(True)
    return _op("all_finite", *grads)


def _check_positive_int(value, name, where):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{where}', the '{name}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{where}', the '{name}' must be a positive int, but got {value}.")


def _check_loss_scale_value(value, where):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{where}', the 'loss_scale_value' must be float, but got {type(value).__name__}.")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"For '{where}', the 'loss_scale_value' must be a finite number greater than 0, but got "
                         f"{value}.")


class DynamicLossScaleUpdateCell(Cell):
    """Updates a loss scale: after an overflow it is divided by `scale_factor`
    (not below 1); after `scale_window` steps in a row without one it is
    multiplied by `scale_factor` (kept when the product would be inf).
    `cell(loss_scale, overflow)` assigns the new scale and returns overflow."""

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        _check_loss_scale_value(loss_scale_value, "DynamicLossScaleUpdateCell")
        if isinstance(scale_factor, bool) or not isinstance(scale_factor, numbers.Real):
            raise TypeError(f"For 'DynamicLossScaleUpdateCell', the 'scale_factor' must be int or float, but got "
                            f"{type(scale_factor).__name__}.")
        if not math.isfinite(scale_factor) or scale_factor <= 0:
            raise ValueError(f"For 'DynamicLossScaleUpdateCell', the 'scale_factor' must be a finite number greater "
                             f"than 0, but got {scale_factor}.")
        _check_positive_int(scale_window, "scale_window", "DynamicLossScaleUpdateCell")
        self.loss_scale_value = loss_scale_value
        self.scale_factor = float(scale_factor)
        self.scale_window = scale_window
        self.cur_iter = Parameter(Tensor(1, mstype.int32), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(Tensor(0, mstype.int32), name="last_overflow_iterator_step",
                                            requires_grad=False)

    def get_loss_scale(self):
        """The initial loss scale."""
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        overflow = F.cast(overflow, mstype.bool_)
        shrunk = F.maximum(F.div(loss_scale, self.scale_factor), F.cast(Tensor(1.0), loss_scale.dtype))
        on_overflow = F.select(overflow, shrunk, loss_scale)
        since = F.sub(self.cur_iter, self.last_overflow_iter)
        should_inc = F.greater_equal(since, self.scale_window)
        self_reset = F.logical_or(overflow, should_inc)
        new_last = F.select(self_reset, self.cur_iter, self.last_overflow_iter)
        grown = F.mul(on_overflow, self.scale_factor)
        grow = F.logical_and(F.logical_and(should_inc, F.logical_not(overflow)), grads_finite([grown]))
        new_scale = F.select(grow, grown, on_overflow)
        F.assign(self.last_overflow_iter, new_last)
        F.assign(loss_scale, new_scale)
        F.assign(self.cur_iter, F.add(self.cur_iter, F.cast(Tensor(1), mstype.int32)))
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """A loss scale that never changes: `cell(loss_scale, overflow)` returns overflow."""

    def __init__(self, loss_scale_value):
        super().__init__()
        _check_loss_scale_value(loss_scale_value, "FixedLossScaleUpdateCell")
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self):
        return self.loss_scale_value

    def construct(self, _, overflow):
        return overflow


class _ScaledGradients(Cell):
    """(loss, unscaled gradients, overflow) of `network` with the backward
    seeded by `scale` (Note [Loss-scaled training step])."""

    def __init__(self, network, weights, scale):
        super().__init__(auto_prefix=False)
        self.network = network
        self.scale = scale
        self._grad_fn = _bridge.ForwardAndGrad(network, weights, seed_backward=True)

    def construct(self, *inputs):
        loss, grads = self._grad_fn(inputs, self.scale)
        grads = tuple(F.div(g, F.cast(self.scale, g.dtype)) for g in grads)
        return loss, grads, F.logical_not(grads_finite(grads))


class TrainOneStepWithLossScaleCell(Cell):
    """A training step with loss scaling (Note [Loss-scaled training step]).

    `scale_sense` is a Tensor of shape () or (1,) (the scale, changed only by
    `set_sense_scale`) or an update Cell (DynamicLossScaleUpdateCell,
    FixedLossScaleUpdateCell, or one of your own called as
    `cell(scale_parameter, overflow)`) whose `get_loss_scale()` gives the
    initial scale. Returns (loss, overflow, loss scale used by the step)."""

    def __init__(self, network, optimizer, scale_sense):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', 'network' must be a Cell, but got "
                            f"{type(network).__name__}.")
        if not isinstance(optimizer, Cell) or not hasattr(optimizer, "parameters"):
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', 'optimizer' must be an Optimizer, but got "
                            f"{type(optimizer).__name__}.")
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = self.optimizer.parameters
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            if not hasattr(scale_sense, "get_loss_scale"):
                raise TypeError(f"For 'TrainOneStepWithLossScaleCell', a Cell 'scale_sense' must have "
                                f"'get_loss_scale()', but {type(scale_sense).__name__} has not.")
            self.loss_scaling_manager = scale_sense
            value = Tensor(float(scale_sense.get_loss_scale()), mstype.float32)
        elif isinstance(scale_sense, Tensor):
            if scale_sense.shape not in ((), (1,)):
                raise ValueError(f"For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be (1,) or "
                                 f"(), but got {scale_sense.shape}.")
            value = Tensor(scale_sense.asnumpy().astype("float32"))
        else:
            raise TypeError(f"For 'TrainOneStepWithLossScaleCell', the type of 'scale_sense' must be Cell or Tensor, "
                            f"but got {type(scale_sense).__name__}.")
        self.scale_sense = Parameter(value, name="scale_sense", requires_grad=False)
        self.reducer_flag = False
        self.grad_reducer = None
        self._overflow_reducer = None
        self.parallel_mode = _check_trainable_parallel_mode("TrainOneStepWithLossScaleCell")
        if self.parallel_mode == ParallelMode.DATA_PARALLEL:
            from ...ops.operations.comm_ops import AllReduce, ReduceOp
            from .grad_reducer import DistributedGradReducer

            self.reducer_flag = True
            self.grad_reducer = DistributedGradReducer(self.weights, _get_gradients_mean(), _get_device_num())
            # Every rank must take the same decision: overflow anywhere skips the update everywhere.
            self._overflow_reducer = AllReduce(ReduceOp.MAX)
        self._scaled = _ScaledGradients(network, self.weights, self.scale_sense)
        from ..._grad import GradOperation

        self.grad = GradOperation(get_by_list=True, sens_param=True)  # for subclasses' own construct

    # MindSpore's helpers, for subclasses that write their own construct.
    def start_overflow_check(self, pre_cond, compute_input):
        """(status, compute_input): the overflow status is read from the
        gradients by get_overflow_status, so the status here is a placeholder."""
        return Tensor(False), compute_input

    def get_overflow_status(self, status, compute_output):
        """True (a bool Tensor) when any tensor of `compute_output` holds inf or NaN."""
        return F.logical_not(grads_finite(list(compute_output)))

    def process_loss_scale(self, overflow):
        """Updates the scale through the update cell, if any; returns overflow."""
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow

    def set_sense_scale(self, sens):
        """Sets the loss scale to the Tensor `sens`."""
        if not isinstance(sens, Tensor):
            raise TypeError(f"For 'set_sense_scale', the input type must be Tensor, but got {type(sens).__name__}.")
        if sens.shape != self.scale_sense.shape:
            raise ValueError(f"For 'set_sense_scale', the shape of the input must be {self.scale_sense.shape}, but "
                             f"got {sens.shape}.")
        self.scale_sense.set_data(Tensor(sens.asnumpy().astype("float32")))

    def __call__(self, *inputs):
        if _cell._state.depth or _jit.capturing():  # inside another network or a function being compiled
            return super().__call__(*inputs)
        # At the top level the parts compile (GRAPH_MODE) or run eagerly on their own.
        outputs = self.construct(*inputs)
        _C.advance_step()
        return outputs

    def construct(self, *inputs):
        scale_used = Tensor(self.scale_sense.asnumpy().copy())
        with _span("forward_backward"):
            loss, grads, overflow = self._scaled(*inputs)
        if self.grad_reducer is not None:
            grads = self.grad_reducer(grads)
        if self._overflow_reducer is not None:
            overflow = F.cast(self._overflow_reducer(F.cast(overflow, mstype.float32)), mstype.bool_)
        overflow = self.process_loss_scale(overflow)
        if not bool(overflow.asnumpy()):
            with _span("update"):
                self.optimizer(grads)
        return loss, overflow, scale_used
