"""Forward and backward of a network in one pass, for TrainOneStepCell.

The network runs once under the autodiff API's tape (`ms.value_and_grad`,
which also routes Cells with a custom `bprop`); the gradients of
sens * loss with respect to the weights come from the same recording —
MindSpore's GradOperation(get_by_list=True, sens_param=True) without a second
forward pass.
"""
from .. import _grad
from .._grad import value_and_grad
from .._tensor import Tensor
from ..ops import _op


class ForwardAndGrad:
    """`(inputs, sens) -> (loss, grads)` for `network` and `weights`."""

    def __init__(self, network, weights, seed_backward=False):
        self.network = network
        self.weights = list(weights)
        self.seed_backward = seed_backward
        self._value_and_grad = value_and_grad(network, grad_position=None, weights=self.weights)

    def __call__(self, inputs, sens=1.0):
        if self.seed_backward:
            # The backward pass starts from sens (a loss scale keeps float16 gradients from underflowing).
            def seed(outputs):
                _check_loss(outputs[0] if len(outputs) == 1 else tuple(outputs))
                return [_op("mul", _op("ones_like", outputs[0]), _op("cast", sens, dtype=outputs[0]._t.dtype_name))]

            loss, _, grads = _grad._run(self.network, inputs, {}, (), self.weights, seed, False)
            _check_loss(loss)
            return loss, tuple(grads)
        loss, grads = self._value_and_grad(*inputs)
        _check_loss(loss)
        if isinstance(sens, Tensor) or sens != 1.0:
            # d(sens * loss)/dw = sens * dloss/dw for a scalar sens.
            scale = sens if isinstance(sens, Tensor) else Tensor(float(sens), loss.dtype)
            grads = tuple(_op("mul", g, scale) for g in grads)
        return loss, tuple(grads)


def _check_loss(loss):
    if not isinstance(loss, Tensor):
        raise TypeError(
            f"For 'TrainOneStepCell', the network must return one loss Tensor, but got {type(loss).__name__}."
        )
