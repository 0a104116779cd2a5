"""Momentum (fused apply_momentum, one op per parameter)."""
from ...common.parameter import Parameter
from ...ops import _op
from .optimizer import Optimizer, _clone_params, _scalar

__all__ = ["Momentum"]


class Momentum(Optimizer):
    """accum = momentum * accum + grad; param -= lr * accum
    (nesterov: param -= lr * (grad + momentum * accum))."""

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if isinstance(momentum, int) and not isinstance(momentum, bool):
            momentum = float(momentum)
        if not isinstance(momentum, float):
            raise TypeError(f"For 'Momentum', the argument 'momentum' must be float, "
                            f"but got {type(momentum).__name__}.")
        if momentum < 0.0:
            raise ValueError(f"For 'Momentum', the argument 'momentum' should be at least 0.0, but got {momentum}.")
        if not isinstance(use_nesterov, bool):
            raise TypeError(f"For 'Momentum', the argument 'use_nesterov' must be bool, "
                            f"but got {type(use_nesterov).__name__}.")
        self.momentum = Parameter(_scalar(momentum), name="momentum", requires_grad=False)
        self.params = self._parameters
        self.use_nesterov = use_nesterov
        self.moments = _clone_params(self.params, "moments", "zeros")

    def construct(self, gradients):
        gradients = self.decay_weight(gradients)
        gradients = self.gradients_centralization(gradients)
        gradients = self.scale_grad(gradients)
        lrs = self._lrs(self.get_lr())
        momentum, nesterov = self.momentum, self.use_nesterov
        for param, moment, lr, grad in zip(self.params, self.moments, lrs, gradients):
            _op("apply_momentum", param, moment, lr, grad, momentum, use_nesterov=nesterov)
        return True
