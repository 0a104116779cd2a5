"""Adam and AdamWeightDecay (fused adam / adam_weight_decay ops)."""
import numpy as np

from ..._tensor import Tensor
from ...common.parameter import Parameter
from ...ops import _op
from .optimizer import Optimizer, _clone_params, _scalar

__all__ = ["Adam", "AdamWeightDecay"]


def _check_param_value(beta1, beta2, eps, prim_name):
    for arg, value in (("beta1", beta1), ("beta2", beta2), ("eps", eps)):
        if not isinstance(value, float):
            raise TypeError(f"For '{prim_name}', the argument '{arg}' must be float, but got {type(value).__name__}.")
    if not 0.0 < beta1 < 1.0:
        raise ValueError(f"For '{prim_name}', the argument 'beta1' must be in range (0.0, 1.0), but got {beta1}.")
    if not 0.0 < beta2 < 1.0:
        raise ValueError(f"For '{prim_name}', the argument 'beta2' must be in range (0.0, 1.0), but got {beta2}.")
    if not eps > 0.0:  # NaN too
        raise ValueError(f"For '{prim_name}', the argument 'eps' must be greater than 0, but got {eps}.")


class Adam(Optimizer):
    """Adam (MindSpore's Adam op):

        m = m + (1 - beta1) * (g - m);  v = v + (1 - beta2) * (g^2 - v)
        lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
        param -= lr_t * m / (sqrt(v) + eps)   (nesterov: (beta1 * m + (1 - beta1) * g) in place of m)

    weight_decay adds weight_decay * param to the gradients of parameters
    without 'beta'/'gamma' in their names (or per group).
    """

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, use_locking=False,
                 use_nesterov=False, weight_decay=0.0, loss_scale=1.0, use_amsgrad=False, **kwargs):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        _check_param_value(beta1, beta2, eps, self.cls_name)
        for arg, value in (("use_locking", use_locking), ("use_nesterov", use_nesterov), ("use_amsgrad", use_amsgrad)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'Adam', the argument '{arg}' must be bool, but got {type(value).__name__}.")
        if use_amsgrad:
            raise NotImplementedError("For 'Adam', 'use_amsgrad' is not supported by msrt yet.")
        if kwargs.get("use_lazy") or kwargs.get("use_offload"):
            raise NotImplementedError("For 'Adam', 'use_lazy' and 'use_offload' are not supported by msrt.")
        self.beta1 = _scalar(beta1)
        self.beta2 = _scalar(beta2)
        self.eps = _scalar(eps)
        self.use_locking = use_locking
        self.use_nesterov = use_nesterov
        self.beta1_power = Parameter(Tensor(np.ones([1], np.float32)), name="beta1_power", requires_grad=False)
        self.beta2_power = Parameter(Tensor(np.ones([1], np.float32)), name="beta2_power", requires_grad=False)
        self.moment1 = _clone_params(self._parameters, "moment1", "zeros")
        self.moment2 = _clone_params(self._parameters, "moment2", "zeros")

    def construct(self, gradients):
        gradients = self.decay_weight(gradients)
        gradients = self.gradients_centralization(gradients)
        gradients = self.scale_grad(gradients)
        lrs = self._lrs(self.get_lr())
        _op("assign", self.beta1_power, _op("mul", self.beta1_power, self.beta1))
        _op("assign", self.beta2_power, _op("mul", self.beta2_power, self.beta2))
        b1p, b2p, b1, b2, eps = self.beta1_power, self.beta2_power, self.beta1, self.beta2, self.eps
        for param, m, v, lr, grad in zip(self._parameters, self.moment1, self.moment2, lrs, gradients):
            _op("adam", param, m, v, b1p, b2p, lr, b1, b2, eps, grad, use_nesterov=self.use_nesterov)
        return True


class AdamWeightDecay(Optimizer):
    """Adam with decoupled weight decay and no bias correction (MindSpore's AdamWeightDecay):

        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
        param -= lr * (m / (sqrt(v) + eps) + weight_decay * param)

    Parameters with 'beta' or 'gamma' in their names do not decay (unless
    groups say otherwise).
    """

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        _check_param_value(beta1, beta2, eps, self.cls_name)
        self.beta1 = _scalar(beta1)
        self.beta2 = _scalar(beta2)
        self.eps = _scalar(eps)
        self.moments1 = _clone_params(self._parameters, "adam_m", "zeros")
        self.moments2 = _clone_params(self._parameters, "adam_v", "zeros")
        self._zero = _scalar(0.0)

    def construct(self, gradients):
        self._check_gradients(gradients)
        lrs = self._lrs(self.get_lr())
        decays = [wd if flag else self._zero for wd, flag in zip(self._weight_decay_tensors, self.decay_flags)]
        b1, b2, eps = self.beta1, self.beta2, self.eps
        for param, m, v, lr, wd, grad in zip(self._parameters, self.moments1, self.moments2, lrs, decays, gradients):
            _op("adam_weight_decay", param, m, v, lr, b1, b2, eps, wd, grad)
        return True
