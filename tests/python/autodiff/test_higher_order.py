"""Higher-order gradients (grad of grad): the tape records the gradient rules
while a nested gradient is computed (Note [Higher-order gradients] in
src/autodiff/autodiff.cc). Second and third derivatives against PyTorch's
double backward, in PYNATIVE_MODE, GRAPH_MODE and jit; ops whose gradient is
a kernel of its own raise instead of returning a wrong second derivative."""
import numpy as np
import pytest
import torch

import msrt as ms
from msrt import nn, ops

RNG = np.random.default_rng(4)
X = RNG.uniform(0.2, 1.5, (3, 4)).astype(np.float32)
W = RNG.standard_normal((4, 2)).astype(np.float32)
LN_G = RNG.uniform(0.5, 1.5, 4).astype(np.float32)
LN_B = RNG.uniform(-0.5, 0.5, 4).astype(np.float32)
LN_W = RNG.standard_normal((3, 4)).astype(np.float32)

# (msrt function, torch function) pairs of scalar-valued functions of one tensor.
FUNCTIONS = {
    "tanh_exp_mul": (lambda x: ops.sum(ops.tanh(x) * ops.exp(x) * x),
                     lambda x: (torch.tanh(x) * torch.exp(x) * x).sum()),
    "sigmoid_log_div": (lambda x: ops.sum(ops.sigmoid(x) * ops.log(x * x + 1.0) / (x + 2.0)),
                        lambda x: (torch.sigmoid(x) * torch.log(x * x + 1.0) / (x + 2.0)).sum()),
    "matmul_tanh": (lambda x: ops.sum(ops.tanh(ops.matmul(x, ms.Tensor(W))) ** 2),
                    lambda x: (torch.tanh(x @ torch.tensor(W, dtype=x.dtype)) ** 2).sum()),
    "softmax_sqrt": (lambda x: ops.sum(ops.softmax(x, axis=-1) * ops.sqrt(x)),
                     lambda x: (torch.softmax(x, -1) * torch.sqrt(x)).sum()),
    "mean_of_square": (lambda x: ops.mean(ops.square(x - ops.mean(x))),
                       lambda x: ((x - x.mean()) ** 2).mean()),
    # activations whose gradient is one kernel (relu_grad, silu_grad, ...)
    "silu_relu_leaky": (lambda x: ops.sum(ops.silu(x) * ops.relu(x - 0.7) + ops.leaky_relu(x - 1.0, 0.3) ** 3),
                        lambda x: (torch.nn.functional.silu(x) * torch.relu(x - 0.7)
                                   + torch.nn.functional.leaky_relu(x - 1.0, 0.3) ** 3).sum()),
}


def _torch_derivatives(fn, x, order):
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = fn(t)
    results = []
    for k in range(order):
        (g,) = torch.autograd.grad(out, t, create_graph=k + 1 < order)
        results.append(g.detach().numpy())
        out = g.sum()
    return results


def _msrt_derivatives(fn, order):
    fns, current = [], fn
    for _ in range(order):
        g = ms.grad(current)
        fns.append(g)
        current = (lambda h: lambda x: ops.sum(h(x)))(g)
    return fns


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_second_and_third_derivatives_match_pytorch(name):
    fn, tfn = FUNCTIONS[name]
    expected = _torch_derivatives(tfn, X.astype(np.float64), 3)
    for k, (g, want) in enumerate(zip(_msrt_derivatives(fn, 3), expected)):
        np.testing.assert_allclose(g(ms.Tensor(X)).asnumpy(), want, rtol=2e-4, atol=2e-5, err_msg=f"order {k + 1}")


def test_layer_norm_second_derivative_matches_pytorch():
    """layer_norm's gradient is one kernel (layer_norm_grad), but under create_graph it is built from
    ops, so it can be differentiated again."""
    def fn(x):
        y = ops.LayerNorm(-1, -1, 1e-5)(x * x, ms.Tensor(LN_G), ms.Tensor(LN_B))[0]
        return ops.sum(ops.sigmoid(y) * ms.Tensor(LN_W))

    def tfn(x):
        y = torch.nn.functional.layer_norm(x * x, (4,), torch.tensor(LN_G, dtype=x.dtype),
                                           torch.tensor(LN_B, dtype=x.dtype), 1e-5)
        return (torch.sigmoid(y) * torch.tensor(LN_W, dtype=x.dtype)).sum()

    expected = _torch_derivatives(tfn, X.astype(np.float64), 2)
    for k, (g, want) in enumerate(zip(_msrt_derivatives(fn, 2), expected)):
        np.testing.assert_allclose(g(ms.Tensor(X)).asnumpy(), want, rtol=2e-4, atol=2e-5, err_msg=f"order {k + 1}")


def test_layer_norm_third_derivative_matches_the_normalization_written_out():
    """Up to the third derivative, through a nonlinear input. The reference is the normalization
    written with PyTorch's elementwise ops and means: PyTorch's own layer_norm gives a wrong third
    derivative here (its double-backward formula is not differentiated correctly)."""
    def fn(x):
        y = ops.LayerNorm(-1, -1, 1e-5)(x * x, ms.Tensor(LN_G.astype(np.float64)),
                                        ms.Tensor(LN_B.astype(np.float64)))[0]
        return ops.sum(y * ms.Tensor(LN_W.astype(np.float64)))

    def tfn(x):
        u = x * x
        c = u - u.mean(-1, keepdim=True)
        y = c * torch.rsqrt((c * c).mean(-1, keepdim=True) + 1e-5) * torch.tensor(LN_G, dtype=x.dtype)
        return ((y + torch.tensor(LN_B, dtype=x.dtype)) * torch.tensor(LN_W, dtype=x.dtype)).sum()

    x = X.astype(np.float64)
    expected = _torch_derivatives(tfn, x, 3)
    for k, (g, want) in enumerate(zip(_msrt_derivatives(fn, 3), expected)):
        np.testing.assert_allclose(g(ms.Tensor(x)).asnumpy(), want, rtol=1e-9, atol=1e-9, err_msg=f"order {k + 1}")


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 5)
        self.fc2 = nn.Dense(5, 1)

    def construct(self, x):
        return self.fc2(ops.tanh(self.fc1(x)))


def _gradient_penalty_reference(net, x):
    w1, b1, w2, b2 = (torch.tensor(p.asnumpy(), dtype=torch.float64, requires_grad=True)
                      for p in net.trainable_params())
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = torch.tanh(t @ w1.T + b1) @ w2.T + b2
    (dx,) = torch.autograd.grad(out.sum(), t, create_graph=True)
    penalty = (dx * dx).sum()
    grads = torch.autograd.grad(penalty, (w1, b1, w2, b2), allow_unused=True)  # b2 does not reach dx
    return [g.numpy() if g is not None else np.zeros(p.shape) for g, p in zip(grads, (w1, b1, w2, b2))]


@pytest.mark.parametrize("route", ["pynative", "graph", "jit"])
def test_gradient_penalty_weight_gradients_match_pytorch(route):
    """d/dw of ||d net(x)/dx||^2 (WGAN-GP's penalty) goes through the tape twice."""
    ms.set_seed(0)
    net = MLP()
    weights = net.trainable_params()
    dx = ms.grad(lambda x: ops.sum(net(x)))

    def penalty(x):
        g = dx(x)
        return ops.sum(g * g)

    grad_w = ms.grad(penalty, grad_position=None, weights=weights)
    if route == "graph":
        ms.set_context(mode=ms.GRAPH_MODE)
    elif route == "jit":
        grad_w = ms.jit(grad_w)
    got = grad_w(ms.Tensor(X))
    if route == "graph":
        assert ms._jit.compile_report(grad_w), "the gradient was not compiled"
    for g, want in zip(got, _gradient_penalty_reference(net, X.astype(np.float64))):
        np.testing.assert_allclose(g.asnumpy(), want, rtol=2e-4, atol=1e-5)


def test_value_and_grad_and_grad_operation_nest():
    inner = ops.GradOperation()(lambda x: ops.sum(x ** 3))  # 3x^2
    value, g = ms.value_and_grad(lambda x: ops.sum(inner(x) * x))(ms.Tensor(X))  # d/dx 3x^3 = 9x^2
    np.testing.assert_allclose(value.asnumpy(), np.sum(3 * X ** 3), rtol=1e-5)
    np.testing.assert_allclose(g.asnumpy(), 9 * X ** 2, rtol=1e-5)


def test_mixed_partial_derivative():
    def f(x, y):
        return ops.sum(ops.exp(x * y))

    dfdx = ms.grad(f, grad_position=0)
    d2 = ms.grad(lambda x, y: ops.sum(dfdx(x, y)), grad_position=1)  # d/dy (y e^{xy}) = e^{xy}(1 + xy)
    y = X[::-1].copy()
    np.testing.assert_allclose(d2(ms.Tensor(X), ms.Tensor(y)).asnumpy(), np.exp(X * y) * (1 + X * y), rtol=1e-5)


def test_ops_without_a_gradient_of_their_own_raise():
    data = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    x = ms.Tensor(data)
    pool = nn.MaxPool2d(2, 2)
    first = ms.grad(lambda a: ops.sum(pool(a) ** 2))
    t = torch.tensor(data, requires_grad=True)
    (want,) = torch.autograd.grad((torch.nn.functional.max_pool2d(t, 2, 2) ** 2).sum(), t)
    np.testing.assert_allclose(first(x).asnumpy(), want.numpy(), rtol=1e-6)  # first order works
    with pytest.raises(RuntimeError, match="higher-order gradients are not supported through op 'max_pool2d_grad'"):
        ms.grad(lambda a: ops.sum(first(a)))(x)


def test_compiled_inner_calls_raise_for_higher_order():
    fn = ms.jit(lambda a: ops.sum(ops.tanh(a) * a))
    first = ms.grad(fn)
    with pytest.raises(RuntimeError, match="compiled call"):
        ms.grad(lambda a: ops.sum(first(a)))(ms.Tensor(X))


def test_batch_norm_in_training_raises_for_higher_order():
    bn = nn.BatchNorm1d(3)
    bn.set_train()
    x = ms.Tensor(RNG.random((4, 3)).astype(np.float32))
    first = ms.grad(lambda a: ops.sum(bn(a) ** 3))
    assert first(x).shape == (4, 3)
    with pytest.raises(RuntimeError, match="through op 'batch_norm_grad'"):
        ms.grad(lambda a: ops.sum(first(a)))(x)
