"""Adagrad (fused apply_adagrad, one op per parameter)."""
import numpy as np

from ..._tensor import Tensor
from ...common.parameter import Parameter
from ...ops import _op
from ..cell import ParameterTuple
from .optimizer import Optimizer
from .rmsprop import _check_bool, _check_float

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as MindSpore's ApplyAdagrad computes it (no epsilon):

        accum += g^2   (when update_slots; accum starts at `accum`)
        param -= lr * g / sqrt(accum)

    Weight decay adds weight_decay * param to the gradients of parameters
    without 'beta'/'gamma' in their names (or per group).
    """

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        _check_float(accum, "accum", self.cls_name)
        _check_bool(update_slots, "update_slots", self.cls_name)
        self.update_slots = update_slots
        accums = [Parameter(Tensor(np.full(p.shape, accum, np.float32)).astype(p.dtype), name=f"accum.{p.name}")
                  for p in self._parameters]
        self.accum = ParameterTuple(accums) if ParameterTuple is not tuple else tuple(accums)

    def construct(self, gradients):
        gradients = self.flatten_gradients(gradients)
        gradients = self.decay_weight(gradients)
        gradients = self.gradients_centralization(gradients)
        gradients = self.scale_grad(gradients)
        lrs = self._lrs(self.get_lr())
        for param, accum, lr, grad in zip(self._parameters, self.accum, lrs, gradients):
            _op("apply_adagrad", param, accum, lr, grad, update_slots=self.update_slots)
        return True
