"""`nn.Optimizer`: learning rates, weight decay, loss scale and parameter
groups as MindSpore handles them; subclasses apply one fused catalogue op
per parameter."""
from collections.abc import Iterable

import numpy as np

from ..._tensor import Tensor
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ... import _jit
from ...ops import _op
from ..cell import Cell, ParameterTuple
from ..learning_rate_schedule import LearningRateSchedule, _HostSchedule

__all__ = ["Optimizer"]

_GROUP_KEYS = ("params", "lr", "weight_decay", "grad_centralization", "order_params")


def _scalar(value, dtype=mstype.float32):
    return Tensor(value, dtype)


def _clone_params(params, prefix, init="zeros"):
    """New Parameters shaped like `params`, named "<prefix>.<name>"."""
    out = []
    for p in params:
        data = p.copy() if init == "same" else initializer(init, list(p.shape), p.dtype)
        out.append(Parameter(data, name=f"{prefix}.{p.name}"))
    return ParameterTuple(out) if ParameterTuple is not tuple else tuple(out)


class _IteratorLearningRate(Cell):
    """A 1-D learning-rate tensor read at the global step (the last value
    once the steps run past its end)."""

    def __init__(self, learning_rate, name):
        super().__init__()
        self.learning_rate = Parameter(learning_rate, name=name)
        self._values = [float(v) for v in np.asarray(learning_rate.asnumpy()).reshape(-1)]
        self._tensors = {}

    def lr_at(self, step):
        return self._values[min(int(step), len(self._values) - 1)]

    def construct(self, global_step):
        if isinstance(global_step, Tensor):
            global_step = int(np.asarray(global_step.asnumpy()).reshape(-1)[0])
        index = min(int(global_step), len(self._values) - 1)
        tensor = self._tensors.get(index)
        if tensor is None:
            tensor = self._tensors[index] = _scalar(self._values[index])
        return tensor


class Optimizer(Cell):
    """Base class of optimizers (MindSpore's `nn.Optimizer`).

    learning_rate: float, int, 0-d Tensor (fixed), 1-D Tensor or iterable (the
    i-th step uses the i-th value), or a LearningRateSchedule. parameters: a
    list of Parameters, or of dicts with "params" and optional "lr",
    "weight_decay", "grad_centralization" (and one "order_params").
    """

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        parameters = self._parameters_base_check(parameters, "parameters")
        if not all(isinstance(x, Parameter) for x in parameters) and not all(isinstance(x, dict) for x in parameters):
            raise TypeError("For 'Optimizer', all elements of the argument 'parameters' must be 'Parameter' or 'dict'.")
        if isinstance(loss_scale, int) and not isinstance(loss_scale, bool):
            loss_scale = float(loss_scale)
        if not isinstance(loss_scale, float):
            raise TypeError(f"For '{self.cls_name}', the argument 'loss_scale' must be float, "
                            f"but got {type(loss_scale).__name__}.")
        if loss_scale <= 0.0:
            raise ValueError(f"For '{self.cls_name}', the argument 'loss_scale' must be greater than 0, "
                             f"but got {loss_scale}.")
        self.loss_scale = loss_scale
        self.dynamic_lr = False
        self.is_group = False
        self.is_group_lr = False
        self.is_group_params_ordered = False
        self.grad_centralization = False
        weight_decay = self._preprocess_weight_decay(weight_decay)
        learning_rate = self._preprocess_single_lr(learning_rate)
        if isinstance(parameters[0], dict):
            self.is_group = True
            self.group_params = []
            self.group_lr = []
            self.group_weight_decay = []
            self.group_grad_centralization = []
            self._init_group_params(parameters, learning_rate, weight_decay)

        self._step = 0  # host mirror of global_step
        if self.dynamic_lr:
            self.global_step = Parameter(Tensor(np.zeros([1], np.int32)), name="global_step", requires_grad=False)
            self._one = Tensor(np.ones([1], np.int32))

        if self.is_group_lr:
            unique = []
            for lr in self.group_lr:
                if all(lr is not u for u in unique):
                    unique.append(lr)
            if all(isinstance(lr, Parameter) for lr in unique):
                self.learning_rate = ParameterTuple(unique) if ParameterTuple is not tuple else tuple(unique)
            else:
                from ..layer.container import CellList

                self.learning_rate = CellList([_ConstantLR(lr) if isinstance(lr, Parameter) else lr
                                               for lr in unique], auto_prefix=False)
                self.group_lr = [_ConstantLR(lr) if isinstance(lr, Parameter) else lr for lr in self.group_lr]
        else:
            self.learning_rate = self._build_single_lr(learning_rate, "learning_rate")

        if self.is_group:
            params = list(self.group_params)
            self.weight_decay = tuple(self.group_weight_decay)
            self.decay_flags = tuple(wd > 0 for wd in self.group_weight_decay)
            self.grad_centralization_flags = tuple(self.group_grad_centralization)
            wd_tensors = {}
            self._weight_decay_tensors = tuple(wd_tensors.setdefault(wd, _scalar(wd)) for wd in self.weight_decay)
        else:
            params = list(parameters)
            self.weight_decay = weight_decay
            self.decay_flags = tuple("beta" not in p.name and "gamma" not in p.name for p in params)
            self.grad_centralization_flags = (False,) * len(params)
            self._weight_decay_tensors = (_scalar(weight_decay),) * len(params)
        self.exec_weight_decay = any(
            flag and wd > 0 for flag, wd in zip(self.decay_flags, self._weight_decay_values(len(params)))
        )
        self.parameters = ParameterTuple(params) if ParameterTuple is not tuple else tuple(params)
        self._parameters = self.parameters
        self.param_length = len(params)
        self.need_scale = loss_scale != 1.0
        self.reciprocal_scale = _scalar(1.0 / loss_scale)

    # --- checks and preprocessing ------------------------------------------
    def _weight_decay_values(self, n):
        return self.weight_decay if self.is_group else (self.weight_decay,) * n

    @staticmethod
    def _parameters_base_check(parameters, param_info):
        if parameters is None:
            raise ValueError(f"For 'Optimizer', the argument {param_info} can not be None.")
        if not isinstance(parameters, Iterable):
            raise TypeError(f"For 'Optimizer', the argument {param_info} must be Iterable type, "
                            f"but got {type(parameters).__name__}.")
        parameters = list(parameters)
        if not parameters:
            raise ValueError(f"For 'Optimizer', the argument {param_info} must not be empty.")
        return parameters

    def _preprocess_weight_decay(self, weight_decay):
        if isinstance(weight_decay, (float, int)) and not isinstance(weight_decay, bool):
            weight_decay = float(weight_decay)
            if weight_decay < 0.0:
                raise ValueError(f"For '{self.cls_name}', the argument 'weight_decay' must be non-negative, "
                                 f"but got {weight_decay}.")
            return weight_decay * self.loss_scale
        raise TypeError(f"For '{self.cls_name}', the argument 'weight_decay' must be int or float, "
                        f"but got {type(weight_decay).__name__}.")

    def _preprocess_single_lr(self, learning_rate):
        if isinstance(learning_rate, (float, int)) and not isinstance(learning_rate, bool):
            learning_rate = float(learning_rate)
            if not learning_rate >= 0.0:  # NaN too
                raise ValueError(f"For '{self.cls_name}', the argument 'learning_rate' must be non-negative, "
                                 f"but got {learning_rate}.")
            return learning_rate
        if isinstance(learning_rate, Tensor) and learning_rate.ndim == 0:
            return Tensor(np.asarray(learning_rate.asnumpy(), dtype=np.float32))
        if isinstance(learning_rate, LearningRateSchedule):
            self.dynamic_lr = True
            return learning_rate
        if isinstance(learning_rate, Tensor):
            if learning_rate.ndim > 1:
                raise ValueError(f"For 'Optimizer', if 'learning_rate' is Tensor type, then the dimension of it "
                                 f"should be 0 or 1, but got {learning_rate.ndim}.")
            self.dynamic_lr = True
            return Tensor(np.asarray(learning_rate.asnumpy(), dtype=np.float32))
        if isinstance(learning_rate, Iterable) and not isinstance(learning_rate, (str, bytes, dict)):
            self.dynamic_lr = True
            return Tensor(np.array(list(learning_rate)).astype(np.float32))
        raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be int, float, Tensor, Iterable or "
                        f"LearningRateSchedule, but got {type(learning_rate).__name__}.")

    def _build_single_lr(self, learning_rate, name):
        if isinstance(learning_rate, float):
            return Parameter(_scalar(learning_rate), name=name, requires_grad=False)
        if isinstance(learning_rate, Tensor) and learning_rate.ndim == 0:
            return Parameter(learning_rate, name=name, requires_grad=False)
        if isinstance(learning_rate, Tensor) and learning_rate.ndim == 1:
            return _IteratorLearningRate(learning_rate, name)
        return learning_rate

    def _init_group_params(self, parameters, learning_rate, weight_decay):
        for group in parameters:
            invalid = [k for k in group if k not in _GROUP_KEYS]
            if invalid:
                raise KeyError(f'The key "{invalid}" cannot be recognized in group params.')
        default_lr = self._build_single_lr(learning_rate, "learning_rate")
        ordered = None
        seen_names = set()
        for group_num, group in enumerate(parameters):
            if "order_params" in group:
                if len(group) > 1:
                    raise ValueError("The order params dict in group parameters should only include the "
                                     "'order_params' key.")
                ordered = list(group["order_params"])
                self.is_group_params_ordered = True
                continue
            params = self._parameters_base_check(group["params"], "group `params`")
            if not all(isinstance(p, Parameter) for p in params):
                raise TypeError("The group `params` should be an iterator of Parameter type.")
            if "lr" in group:
                self.is_group_lr = True
                lr = self._build_single_lr(self._preprocess_single_lr(group["lr"]), f"learning_rate_group_{group_num}")
            else:
                lr = default_lr
            wd = self._preprocess_weight_decay(group["weight_decay"]) if "weight_decay" in group else weight_decay
            gc = group.get("grad_centralization", False)
            if not isinstance(gc, bool):
                raise TypeError(f"For 'Optimizer', the 'grad_centralization' must be bool, "
                                f"but got {type(gc).__name__}.")
            for p in params:
                if p.name in seen_names:
                    raise RuntimeError(f"For 'Optimizer', the {p.name} parameter already exists, it does not support "
                                       "repeated setting. Please check whether the optimizer parameter has been set "
                                       "multiple times.")
                seen_names.add(p.name)
                self.group_params.append(p)
                self.group_lr.append(lr)
                self.group_weight_decay.append(wd)
                self.group_grad_centralization.append(gc)
        if ordered is not None:
            if len(ordered) != len(self.group_params):
                raise ValueError("The value of 'order_params' should be same with all group parameters.")
            index = {id(p): i for i, p in enumerate(self.group_params)}
            try:
                order = [index[id(p)] for p in ordered]
            except KeyError as e:
                raise ValueError("The 'order_params' must contain exactly the parameters of the groups.") from e
            for attr in ("group_params", "group_lr", "group_weight_decay", "group_grad_centralization"):
                values = getattr(self, attr)
                setattr(self, attr, [values[i] for i in order])

    # --- the pieces of a step ------------------------------------------------
    def get_lr(self):
        """The learning rate of this step (a tuple per parameter when groups
        set their own); with a dynamic rate, advances the global step."""
        lr = self.learning_rate
        if self.is_group_lr:
            lr = tuple(self._lr_value(x) for x in self.group_lr)
        elif self.dynamic_lr:
            lr = self._lr_value(lr)
        if self.dynamic_lr:
            _jit.host_call(self._advance_host_step)
            _op("assign_add", self.global_step, self._one)
        return lr

    def _advance_host_step(self):
        self._step += 1

    def _lr_value(self, lr):
        if isinstance(lr, Parameter):
            return lr
        if isinstance(lr, _ConstantLR):
            return lr.learning_rate
        if isinstance(lr, (_HostSchedule, _IteratorLearningRate)):
            # Computed on the host at every step, in graph mode too.
            return _jit.host_value(lambda: _scalar(lr.lr_at(self._step)), (), "float32")
        value = lr(self.global_step)  # a user schedule computes from the global step tensor (shape [1])
        if not isinstance(value, Tensor):
            return _scalar(float(value))
        if value.ndim:
            value = _op("reshape", value, shape=[])
        return value

    def get_lr_parameter(self, param):
        """The learning rate (Parameter or schedule) used for `param` (or a list)."""
        params = [param] if isinstance(param, Parameter) else param
        if not isinstance(params, list):
            raise TypeError(f"For 'get_lr_parameter', the 'param' must be 'Parameter' or 'list' type, "
                            f"but got {type(param).__name__}.")
        ids = [id(p) for p in self.parameters]
        out = []
        for p in params:
            if id(p) not in ids:
                raise ValueError(f"For 'get_lr_parameter', the parameter {p.name} is not in optimizer.")
            lr = self.group_lr[ids.index(id(p))] if self.is_group_lr else self.learning_rate
            if isinstance(lr, (_ConstantLR, _IteratorLearningRate)):
                lr = lr.learning_rate
            out.append(lr)
        return out if isinstance(param, list) else out[0]

    def get_weight_decay(self):
        """The weight decay as a float32 Tensor (a tuple per parameter with groups)."""
        if self.is_group:
            return self._weight_decay_tensors
        return self._weight_decay_tensors[0] if self._weight_decay_tensors else _scalar(self.weight_decay)

    def flatten_gradients(self, gradients):
        return gradients

    def decay_weight(self, gradients):
        """gradient + weight_decay * parameter for parameters that decay."""
        if not self.exec_weight_decay:
            return gradients
        out = []
        for param, grad, flag, wd in zip(self._parameters, gradients, self.decay_flags, self._weight_decay_tensors):
            out.append(_op("add", grad, _op("mul", param, wd)) if flag else grad)
        return tuple(out)

    def _check_gradients(self, gradients):
        """One gradient per parameter: zip() would silently skip the rest."""
        if not isinstance(gradients, (tuple, list)) or len(gradients) != self.param_length:
            given = f"{len(gradients)} gradients" if isinstance(gradients, (tuple, list)) else type(gradients).__name__
            raise ValueError(f"For '{type(self).__name__}', the gradients must be a tuple with one Tensor per "
                             f"parameter ({self.param_length}), but got {given}.")
        return gradients

    def gradients_centralization(self, gradients):
        """Subtracts each gradient's mean over all but the first axis where
        its group asked for it (grad_centralization) and it has rank > 1."""
        self._check_gradients(gradients)
        if not self.is_group or not any(self.grad_centralization_flags):
            return gradients
        out = []
        for grad, flag in zip(gradients, self.grad_centralization_flags):
            if flag and len(grad.shape) > 1:
                mean = _op("reduce_mean", grad, axis=list(range(1, len(grad.shape))), keep_dims=True)
                grad = _op("sub", grad, mean)
            out.append(grad)
        return tuple(out)

    def scale_grad(self, gradients):
        """Undoes the loss scale: gradient / loss_scale."""
        if not self.need_scale:
            return gradients
        return tuple(_op("mul", g, self.reciprocal_scale) for g in gradients)

    def _lrs(self, lr):
        return lr if self.is_group_lr else (lr,) * self.param_length

    def construct(self, *hyper_params):
        raise NotImplementedError


class _ConstantLR(Cell):
    """A fixed group learning rate beside dynamic ones."""

    def __init__(self, learning_rate):
        super().__init__(auto_prefix=False)
        self.learning_rate = learning_rate

    def construct(self, global_step):
        return self.learning_rate
