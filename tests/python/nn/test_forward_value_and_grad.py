"""nn.ForwardValueAndGrad: (loss, gradients) from one forward pass, with
GradOperation's get_all / get_by_list / sens_param, in both modes, against
PyTorch."""
import numpy as np
import pytest
import torch

import msrt as ms
from msrt import nn, ops

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
Y = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)
        self.calls = 0

    def construct(self, x, y):
        self.calls += 1
        return ops.sum((ops.tanh(self.fc(x)) - y) ** 2)


def _torch(net, sens=1.0):
    w = torch.tensor(net.fc.weight.asnumpy(), requires_grad=True)
    b = torch.tensor(net.fc.bias.asnumpy(), requires_grad=True)
    x = torch.tensor(X, requires_grad=True)
    y = torch.tensor(Y, requires_grad=True)
    loss = ((torch.tanh(x @ w.T + b) - y) ** 2).sum()
    grads = torch.autograd.grad(loss * sens, (x, y, w, b))
    return loss.item(), [g.numpy() for g in grads]


def _close(got, want):
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_values_and_gradients_match_pytorch(mode):
    ms.set_context(mode=mode)
    net = Net()
    loss_ref, (gx, gy, gw, gb) = _torch(net)
    weights = ms.ParameterTuple(net.trainable_params())

    loss, g = nn.ForwardValueAndGrad(net)(ms.Tensor(X), ms.Tensor(Y))
    np.testing.assert_allclose(loss.asnumpy(), loss_ref, rtol=1e-5)
    _close(g, gx)

    loss, (ins, ws) = nn.ForwardValueAndGrad(net, weights, get_all=True, get_by_list=True)(ms.Tensor(X), ms.Tensor(Y))
    _close(ins[0], gx)
    _close(ins[1], gy)
    _close(ws[0], gw)
    _close(ws[1], gb)

    sens = ms.Tensor(np.float32(3.0))
    calls = net.calls
    step = nn.ForwardValueAndGrad(net, weights, get_by_list=True, sens_param=True)
    loss, ws = step(ms.Tensor(X), ms.Tensor(Y), sens)
    if mode == ms.PYNATIVE_MODE:
        assert net.calls == calls + 1  # one forward pass for the value and the gradients
    _, (_, _, gw3, gb3) = _torch(net, 3.0)
    np.testing.assert_allclose(loss.asnumpy(), loss_ref, rtol=1e-5)
    _close(ws[0], gw3)
    _close(ws[1], gb3)


def test_forward_value_and_grad_trains_like_mindspores_example():
    ms.set_seed(0)
    net = Net()
    weights = ms.ParameterTuple(net.trainable_params())
    step = nn.ForwardValueAndGrad(net, weights=weights, get_by_list=True)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    losses = []
    for _ in range(20):
        loss, grads = step(ms.Tensor(X), ms.Tensor(Y))
        opt(grads)
        losses.append(float(loss.asnumpy()))
    assert losses[-1] < 0.2 * losses[0]


def test_errors():
    net = Net()
    with pytest.raises(TypeError, match="network"):
        nn.ForwardValueAndGrad(3)
    with pytest.raises(TypeError, match="get_all"):
        nn.ForwardValueAndGrad(net, get_all=1)
    with pytest.raises(TypeError, match="weights"):
        nn.ForwardValueAndGrad(net, weights=None, get_by_list=True)
    fn = nn.ForwardValueAndGrad(lambda x: ops.sum(x * x))
    loss, g = fn(ms.Tensor(X))
    _close(g, 2 * X)
