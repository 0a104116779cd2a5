"""RMSProp (fused apply_rms_prop / apply_centered_rms_prop, one op per parameter)."""
from ...ops import _op
from .optimizer import Optimizer, _clone_params, _scalar

__all__ = ["RMSProp"]


def _check_float(value, name, prim_name, positive=False):
    if not isinstance(value, float):
        raise TypeError(f"For '{prim_name}', the argument '{name}' must be float, but got {type(value).__name__}.")
    if positive and not value > 0.0:  # NaN too
        raise ValueError(f"For '{prim_name}', the argument '{name}' must be greater than 0, but got {value}.")
    if not positive and not value >= 0.0:
        raise ValueError(f"For '{prim_name}', the argument '{name}' must be non-negative, but got {value}.")


def _check_bool(value, name, prim_name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{prim_name}', the argument '{name}' must be bool, but got {type(value).__name__}.")


class RMSProp(Optimizer):
    """Root Mean Square Propagation, as MindSpore's ApplyRMSProp computes it:

        ms = decay * ms + (1 - decay) * g^2                   (ms starts at ones)
        moment = momentum * moment + lr * g / sqrt(ms + epsilon)
        param -= moment

    centered=True (ApplyCenteredRMSProp) also keeps mg = decay * mg + (1 - decay) * g
    and divides by sqrt(ms - mg^2 + epsilon). Weight decay adds
    weight_decay * param to the gradients of parameters without 'beta'/'gamma'
    in their names (or per group), before the loss scale is undone.
    """

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, loss_scale=1.0, weight_decay=0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        _check_float(decay, "decay", self.cls_name)
        _check_float(momentum, "momentum", self.cls_name)
        _check_float(epsilon, "epsilon", self.cls_name, positive=True)
        _check_bool(use_locking, "use_locking", self.cls_name)
        _check_bool(centered, "centered", self.cls_name)
        self.centered = centered
        self.use_locking = use_locking
        if centered:
            self.mg = _clone_params(self._parameters, "mean_grad", "zeros")
        self.ms = _clone_params(self._parameters, "mean_square", "ones")
        self.moment = _clone_params(self._parameters, "moment", "zeros")
        self.decay = _scalar(decay)
        self.momentum = _scalar(momentum)
        self.epsilon = _scalar(epsilon)

    def construct(self, gradients):
        gradients = self.flatten_gradients(gradients)
        gradients = self.decay_weight(gradients)
        gradients = self.gradients_centralization(gradients)
        gradients = self.scale_grad(gradients)
        lrs = self._lrs(self.get_lr())
        decay, momentum, eps = self.decay, self.momentum, self.epsilon
        for i, (param, grad) in enumerate(zip(self._parameters, gradients)):
            if self.centered:
                _op("apply_centered_rms_prop", param, self.mg[i], self.ms[i], self.moment[i], grad, lrs[i], decay,
                    momentum, eps)
            else:
                _op("apply_rms_prop", param, self.ms[i], self.moment[i], lrs[i], grad, decay, momentum, eps)
        return True
