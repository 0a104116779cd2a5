"""Wrappers that build training and evaluation networks."""
import types

from ... import _C
from ...common.parameter import Parameter
from ...ops import functional as F
from ...profiler import _span
from ..cell import Cell
from .. import _grad_bridge as _bridge
from ...context import ParallelMode
from ...parallel._utils import _check_trainable_parallel_mode, _get_device_num, _get_gradients_mean
from .grad_reducer import DistributedGradReducer

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "ParameterUpdate", "ForwardValueAndGrad"]


class WithLossCell(Cell):
    """loss_fn(backbone(data), label)."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        if not isinstance(backbone, Cell) or not isinstance(loss_fn, Cell):
            raise TypeError("For 'WithLossCell', 'backbone' and 'loss_fn' must be Cells.")
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self):
        """The backbone network."""
        return self._backbone


class WithEvalCell(Cell):
    """Returns (loss, outputs, label) for evaluation metrics."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            from ...ops import _op

            from ...common import dtype as mstype

            outputs = _op("cast", outputs, dtype="float32")
            if label.dtype in (mstype.float16, mstype.bfloat16, mstype.float64):  # class indices stay integers
                label = _op("cast", label, dtype="float32")
        loss = self._loss_fn(outputs, label)
        return loss, outputs, label


class TrainOneStepCell(Cell):
    """One training step: loss = network(*inputs); gradients of sens * loss
    with respect to the optimizer's parameters; optimizer(gradients).
    Returns the loss (and the gradients by parameter name when return_grad)."""

    def __init__(self, network, optimizer, sens=1.0, return_grad=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"For 'TrainOneStepCell', 'network' must be a Cell, but got {type(network).__name__}.")
        if not isinstance(optimizer, Cell) or not hasattr(optimizer, "parameters"):
            raise TypeError(f"For 'TrainOneStepCell', 'optimizer' must be an Optimizer, but got "
                            f"{type(optimizer).__name__}.")
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = self.optimizer.parameters
        self.sens = 1.0 if sens is None else sens
        self.return_grad = return_grad
        self.reducer_flag = False
        self.grad_reducer = None
        self._grad_fn = _bridge.ForwardAndGrad(self.network, self.weights)
        self.parallel_mode = _check_trainable_parallel_mode("TrainOneStepCell")
        if self.parallel_mode == ParallelMode.DATA_PARALLEL:
            self.reducer_flag = True
            self.grad_reducer = DistributedGradReducer(self.weights, _get_gradients_mean(), _get_device_num())

    def __call__(self, *inputs):
        # One call is one training step: PYNATIVE_MODE's iteration (dumps, profiler).
        outputs = super().__call__(*inputs)
        _C.advance_step()
        return outputs

    def construct(self, *inputs):
        with _span("forward_backward"):
            loss, grads = self._grad_fn(inputs, self.sens)
        with _span("update"):
            if self.grad_reducer is not None:
                grads = self.grad_reducer(grads)
            self.optimizer(grads)
        if self.return_grad:
            return loss, {w.name: g for w, g in zip(self.weights, grads)}
        return loss


class ParameterUpdate(Cell):
    """Assigns its input to `param` (ops.assign) and returns it: the new value."""

    def __init__(self, param):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError(f"For 'ParameterUpdate', 'param' must be 'Parameter', but got {type(param).__name__}.")
        self._param = param

    def construct(self, x):
        F.assign(self._param, x)
        return x


class ForwardValueAndGrad(Cell):
    """`cell(*inputs)` returns (network(*inputs), gradients), the gradients as
    `ops.GradOperation(get_all, get_by_list, sens_param)` gives them (of the
    first input, of all inputs, of `weights`, or (inputs, weights)); with
    `sens_param` the last input is the sens. One forward pass serves both."""

    def __init__(self, network, weights=None, get_all=False, get_by_list=False, sens_param=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, (Cell, types.FunctionType, types.MethodType)):
            raise TypeError(f"For 'ForwardValueAndGrad', the argument 'network' must be cell, function type or "
                            f"method type, but got '{type(network).__name__}'")
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'ForwardValueAndGrad', the type of '{name}' must be bool, but got "
                                f"'{type(value).__name__}'")
        if get_by_list and not (isinstance(weights, (list, tuple)) and all(isinstance(w, Parameter) for w in weights)):
            raise TypeError(f"For 'ForwardValueAndGrad', when 'get_by_list' is set to True, the argument 'weights' "
                            f"must be Parameters array, but got {type(weights).__name__}")
        from ... import _grad

        self.network = network
        if isinstance(network, Cell):
            network.set_grad()
        self.weights = weights
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param
        grad = _grad.GradOperation(get_all=get_all, get_by_list=get_by_list, sens_param=sens_param)
        self._value_and_grad = grad._with_value(network, weights if get_by_list else None)

    def construct(self, *inputs):
        return self._value_and_grad(*inputs)
