"""Gradient hooks: ops.HookBackward and Cell.register_backward_hook (with
their MindSpore documentation examples), forward hooks under a gradient, and
handles that remove them; hooks are skipped with a warning in compiled graphs."""
import numpy as np
import pytest
import torch

import msrt as ms
from msrt import nn, ops
from msrt import Tensor


def test_hook_backward_sees_the_gradient_as_mindspores_example():
    seen = []
    hook = ops.HookBackward(lambda grad: seen.append(grad))

    def hook_test(x, y):
        z = x * y
        z = hook(z)
        return z * y

    gx, gy = ops.GradOperation(get_all=True)(hook_test)(Tensor(1, ms.float32), Tensor(2, ms.float32))
    assert float(gx.asnumpy()) == 4 and float(gy.asnumpy()) == 4
    assert len(seen) == 1 and float(seen[0].asnumpy()) == 2  # d(z*y)/dz = y


def test_hook_backward_replaces_the_gradient():
    hook = ops.HookBackward(lambda grad: grad * 10)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    g = ms.grad(lambda a: ops.sum(ops.tanh(hook(a * 3.0))))(Tensor(x))
    t = torch.tensor(x, requires_grad=True)
    u = t * 3.0
    u.register_hook(lambda grad: grad * 10)
    (want,) = torch.autograd.grad(torch.tanh(u).sum(), t)
    np.testing.assert_allclose(g.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-7)
    # Forward unchanged, also with several inputs.
    two = ops.HookBackward(lambda grads: None)(Tensor(x), Tensor(x * 2))
    assert isinstance(two, tuple) and np.array_equal(two[1].asnumpy(), x * 2)


def test_hook_backward_errors():
    with pytest.raises(TypeError, match="hook_fn"):
        ops.HookBackward(3)
    with pytest.raises(TypeError, match="Tensor"):
        ops.HookBackward(print)(1.0)
    bad = ops.HookBackward(lambda grad: (grad, grad))
    with pytest.raises(ValueError, match="1 gradient"):
        ms.grad(lambda a: ops.sum(bad(a) * 2))(Tensor(np.ones(2, np.float32)))
    wrong_shape = ops.HookBackward(lambda grad: Tensor(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="shape"):
        ms.grad(lambda a: ops.sum(wrong_shape(a) * 2))(Tensor(np.ones(2, np.float32)))


class ReluNet(nn.Cell):
    def __init__(self, hook_fn):
        super().__init__()
        self.relu = nn.ReLU()
        self.handle = self.relu.register_backward_hook(hook_fn)

    def construct(self, x):
        x = x + x
        return self.relu(x)


def test_register_backward_hook_as_mindspores_example():
    calls = []
    net = ReluNet(lambda cell_id, grad_input, grad_output: calls.append((cell_id, grad_input, grad_output)))
    (g,) = ops.GradOperation(get_all=True)(net)(Tensor(np.ones([1]).astype(np.float32)))
    np.testing.assert_array_equal(g.asnumpy(), [2.0])
    (cell_id, grad_input, grad_output), = calls
    assert cell_id.startswith("ReLU(")
    np.testing.assert_array_equal(grad_input[0].asnumpy(), [1.0])  # gradient of the ReLU's output
    np.testing.assert_array_equal(grad_output[0].asnumpy(), [1.0])  # gradient of its input
    net.handle.remove()
    ops.GradOperation(get_all=True)(net)(Tensor(np.ones([1]).astype(np.float32)))
    assert len(calls) == 1


def test_backward_hook_replaces_input_gradients_like_pytorch():
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    ms.set_seed(1)
    dense = nn.Dense(3, 2)
    dense.register_backward_hook(lambda cid, gin, gout: tuple(g * 3 for g in gout))
    g = ms.grad(lambda a: ops.sum(ops.tanh(dense(a * 2.0))))(Tensor(x))
    t = torch.tensor(x, requires_grad=True)
    w = torch.tensor(dense.weight.asnumpy())
    b = torch.tensor(dense.bias.asnumpy())
    u = t * 2.0
    u.register_hook(lambda grad: grad * 3)
    (want,) = torch.autograd.grad(torch.tanh(u @ w.T + b).sum(), t)
    np.testing.assert_allclose(g.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-7)
    with pytest.raises(TypeError, match="register_backward_hook"):
        dense.register_backward_hook("no")


def test_forward_hooks_change_what_is_differentiated():
    dense = nn.Dense(2, 2)
    pre = dense.register_forward_pre_hook(lambda cell, inputs: (inputs[0] * 2,))
    post = dense.register_forward_hook(lambda cell, inputs, out: out * out)
    x = np.array([[0.5, -1.0]], np.float32)
    g = ms.grad(lambda a: ops.sum(dense(a)))(Tensor(x))
    w, b = dense.weight.asnumpy(), dense.bias.asnumpy()
    y = (2 * x) @ w.T + b
    np.testing.assert_allclose(g.asnumpy(), (2 * y) @ w * 2, rtol=1e-5)
    pre.remove()
    post.remove()
    np.testing.assert_allclose(ms.grad(lambda a: ops.sum(dense(a)))(Tensor(x)).asnumpy(), w.sum(0)[None], rtol=1e-6)
    with pytest.raises(TypeError, match="register_forward_hook"):
        dense.register_forward_hook(None)
    with pytest.raises(TypeError, match="register_forward_pre_hook"):
        dense.register_forward_pre_hook(1)


def test_gradient_hooks_are_skipped_with_a_warning_in_graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    calls = []
    net = ReluNet(lambda cell_id, gin, gout: calls.append(1))
    with pytest.warns(ms.MsrtWarning, match="only supported in PYNATIVE_MODE"):
        (g,) = ops.GradOperation(get_all=True)(net)(Tensor(np.ones([1]).astype(np.float32)))
    np.testing.assert_array_equal(g.asnumpy(), [2.0])
    assert calls == []
