"""Lamb (fused lamb op, one per parameter)."""
import numpy as np

from ..._tensor import Tensor
from ...common.parameter import Parameter
from ...ops import _op
from .adam import _check_param_value
from .optimizer import Optimizer, _clone_params, _scalar

__all__ = ["Lamb"]


class Lamb(Optimizer):
    """Layer-wise Adaptive Moments (MindSpore's nn.Lamb), per parameter, t the step from 1:

        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
        m^ = m / (1 - beta1^t);  v^ = v / (1 - beta2^t)
        ratio = ||param|| / ||m^ / sqrt(v^ + eps) + weight_decay * param||, or 1 when ||param|| or ||g|| is 0,
                clipped to [0, 10]
        param -= ratio * lr * (m^ / (sqrt(v^) + eps) + weight_decay * param)

    The decay term of the update applies to parameters without 'beta'/'gamma'
    in their names (or per group); the ratio's norm includes it for all, as in
    MindSpore. Gradients are not weight-decayed or loss-scaled beforehand.
    """

    def __init__(self, params, learning_rate, beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay)
        _check_param_value(beta1, beta2, eps, self.cls_name)
        self.beta1 = _scalar(beta1)
        self.beta2 = _scalar(beta2)
        self.eps = _scalar(eps)
        self.moments1 = _clone_params(self._parameters, "lamb_m", "zeros")
        self.moments2 = _clone_params(self._parameters, "lamb_v", "zeros")
        if not self.dynamic_lr:  # get_lr() counts the steps otherwise
            self.global_step = Parameter(Tensor(np.zeros([1], np.int32)), name="global_step", requires_grad=False)
            self._one = Tensor(np.ones([1], np.int32))

    def construct(self, gradients):
        gradients = self.flatten_gradients(gradients)
        gradients = self.gradients_centralization(gradients)
        lrs = self._lrs(self.get_lr())
        if not self.dynamic_lr:
            _op("assign_add", self.global_step, self._one)
        step = _op("cast", self.global_step, dtype="float32")
        decays = self._weight_decay_tensors
        b1, b2, eps = self.beta1, self.beta2, self.eps
        for param, m, v, lr, wd, flag, grad in zip(self._parameters, self.moments1, self.moments2, lrs, decays,
                                                   self.decay_flags, gradients):
            _op("lamb", param, m, v, lr, b1, b2, eps, wd, step, grad, decay_flag=flag)
        return True
