"""Forward and backward of a network in one pass, for TrainOneStepCell.

The network runs once under the autodiff API's tape (`ms.value_and_grad`,
which also routes Cells with a custom `bprop`); the gradients of
sens * loss with respect to the weights come from the same recording —
MindSpore's GradOperation(get_by_list=True, sens_param=True) without a second
forward pass.
"""
from .._grad import value_and_grad
from .._tensor import Tensor
from ..ops import _op


class ForwardAndGrad:
    """`(inputs, sens) -> (loss, grads)` for `network` and `weights`."""

    def __init__(self, network, weights):
        self.network = network
        self.weights = list(weights)
        self._value_and_grad = value_and_grad(network, grad_position=None, weights=self.weights)

    def __call__(self, inputs, sens=1.0):
        loss, grads = self._value_and_grad(*inputs)
        if not isinstance(loss, Tensor):
            raise TypeError(
                f"For 'TrainOneStepCell', the network must return one loss Tensor, but got {type(loss).__name__}."
            )
        if isinstance(sens, Tensor) or sens != 1.0:
            # d(sens * loss)/dw = sens * dloss/dw for a scalar sens.
            scale = sens if isinstance(sens, Tensor) else Tensor(float(sens), loss.dtype)
            grads = tuple(_op("mul", g, scale) for g in grads)
        return loss, tuple(grads)
