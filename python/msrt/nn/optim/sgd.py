"""SGD with momentum, dampening, nesterov and weight decay (MindSpore's SGD op semantics)."""
from ...common.parameter import Parameter
from ...ops import _op
from .optimizer import Optimizer, _clone_params, _scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as MindSpore's SGD op computes it:

        g = grad + weight_decay * param
        if momentum > 0:
            accum = g on the first step, else momentum * accum + (1 - dampening) * g
            g = g + momentum * accum if nesterov else accum
        param -= lr * g

    Weight decay applies to every parameter (the op does it, not the
    optimizer's beta/gamma filter).
    """

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if isinstance(momentum, int) and not isinstance(momentum, bool):
            momentum = float(momentum)
        if not isinstance(momentum, float):
            raise TypeError(f"For 'SGD', the argument 'momentum' must be float type, "
                            f"but got {type(momentum).__name__}.")
        if not momentum >= 0.0:  # NaN too
            raise ValueError(f"For 'SGD', the argument 'momentum' must be at least 0.0, but got {momentum}")
        if isinstance(dampening, int) and not isinstance(dampening, bool):
            dampening = float(dampening)
        if not isinstance(dampening, float):
            raise TypeError(f"For 'SGD', the argument 'dampening' must be float type, "
                            f"but got {type(dampening).__name__}.")
        if dampening < 0.0:
            raise ValueError(f"For 'SGD', the argument 'dampening' must be at least 0.0, "
                             f"but got 'dampening' {dampening}")
        if not isinstance(nesterov, bool):
            raise TypeError(f"For 'SGD', the argument 'nesterov' must be bool, but got {type(nesterov).__name__}.")
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must "
                             f"equal to 0.0, but got 'momentum' {momentum}, 'dampening' {dampening}")
        self.dampening = dampening
        self.nesterov = nesterov
        self._momentum_value = momentum
        # The SGD op takes the optimizer's weight decay as given (groups carry it times loss_scale).
        if self.is_group:
            decays = list(self.group_weight_decay)
        else:
            decays = [float(weight_decay)] * self.param_length
        self._sgd_decays = tuple(_scalar(wd) if wd > 0 else None for wd in decays)
        self.momentum = Parameter(_scalar(momentum), name="momentum", requires_grad=False)
        self.accum = _clone_params(self._parameters, "accum", "zeros")
        self.stat = _clone_params(self._parameters, "stat", "ones")
        self._one_minus_dampening = _scalar(1.0 - dampening)
        self._stat_cleared = False

    def construct(self, gradients):
        gradients = self.gradients_centralization(gradients)
        gradients = self.scale_grad(gradients)
        lrs = self._lrs(self.get_lr())
        momentum = self.momentum
        for i, (param, grad) in enumerate(zip(self._parameters, gradients)):
            lr = lrs[i]
            decay = self._sgd_decays[i]
            if decay is not None:
                grad = _op("add", grad, _op("mul", param, decay))
            if self._momentum_value <= 0.0:
                _op("apply_gradient_descent", param, lr, grad)
            elif self.dampening == 0.0:
                # With accum starting at zero, the first step's accum = grad as well.
                _op("apply_momentum", param, self.accum[i], lr, grad, momentum, use_nesterov=self.nesterov)
            else:
                self._dampened_step(param, self.accum[i], self.stat[i], lr, grad)
        if self._momentum_value > 0.0 and self.dampening == 0.0 and not self._stat_cleared:
            for stat in self.stat:
                _op("assign", stat, _op("zeros_like", stat))
            self._stat_cleared = True
        return True

    def _dampened_step(self, param, accum, stat, lr, grad):
        # accum = stat * grad + (1 - stat) * (momentum * accum + (1 - dampening) * grad); stat = 0
        running = _op("add", _op("mul", accum, self.momentum), _op("mul", grad, self._one_minus_dampening))
        new_accum = _op("add", _op("mul", stat, grad), _op("mul", _op("sub", _op("ones_like", stat), stat), running))
        _op("assign", accum, new_accum)
        _op("assign", stat, _op("zeros_like", stat))
        update = _op("add", grad, _op("mul", accum, self.momentum)) if self.nesterov else accum
        _op("apply_gradient_descent", param, lr, update)
