"""ms.grad, ms.value_and_grad, GradOperation, custom bprop, check_bprop and
grad_for_scalar; gradients of a small MLP against finite differences."""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops


def T(a, dtype=np.float32):  # noqa: N802
    return ms.Tensor(np.asarray(a, dtype=dtype))


def arr(t):
    return np.asarray(t.asnumpy())


X = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
Y = np.array([[0.5, -2.0], [1.5, 2.0]], np.float32)


def f(x, y):
    return ops.sum(x * x * y)


# --- ms.grad ---------------------------------------------------------------------
def test_grad_of_the_first_input_by_default():
    g = ms.grad(f)(T(X), T(Y))
    assert isinstance(g, ms.Tensor)
    np.testing.assert_allclose(arr(g), 2 * X * Y, rtol=1e-6)


def test_grad_positions():
    gx, gy = ms.grad(f, grad_position=(0, 1))(T(X), T(Y))
    np.testing.assert_allclose(arr(gx), 2 * X * Y, rtol=1e-6)
    np.testing.assert_allclose(arr(gy), X * X, rtol=1e-6)
    gy = ms.grad(f, grad_position=1)(T(X), T(Y))
    np.testing.assert_allclose(arr(gy), X * X, rtol=1e-6)
    (gy,) = ms.grad(f, grad_position=(1,))(T(X), T(Y))
    np.testing.assert_allclose(arr(gy), X * X, rtol=1e-6)
    gy = ms.grad(f, grad_position=-1)(T(X), T(Y))
    np.testing.assert_allclose(arr(gy), X * X, rtol=1e-6)


def test_same_tensor_at_two_positions_gets_two_gradients():
    x = T(X)
    gx, gy = ms.grad(f, grad_position=(0, 1))(x, x)
    np.testing.assert_allclose(arr(gx), 2 * X * X, rtol=1e-6)
    np.testing.assert_allclose(arr(gy), X * X, rtol=1e-6)


def test_weights_and_positions():
    w = ms.Parameter(T(Y), name="w")
    b = ms.Parameter(T([1.0, 2.0]), name="b")

    def net(x):
        return ops.sum(x * w + b)

    gw = ms.grad(net, grad_position=None, weights=w)(T(X))
    np.testing.assert_allclose(arr(gw), X)
    gws = ms.grad(net, grad_position=None, weights=[w, b])(T(X))
    assert isinstance(gws, tuple) and len(gws) == 2
    np.testing.assert_allclose(arr(gws[1]), [2.0, 2.0])
    gx, (gw, gb) = ms.grad(net, grad_position=0, weights=ms.ParameterTuple([w, b]))(T(X))
    np.testing.assert_allclose(arr(gx), Y)
    np.testing.assert_allclose(arr(gw), X)
    ids = ms.grad(net, grad_position=0, weights=[w], return_ids=True)(T(X))
    assert ids[0][0] == 0 and ids[1][0][0] == "w"
    with pytest.raises(ValueError, match="can not be None at the same time"):
        ms.grad(net, grad_position=None, weights=None)
    with pytest.raises(TypeError, match="weights"):
        ms.grad(net, weights=[T(X)])


def test_frozen_weights_still_get_gradients_and_stay_frozen():
    w = ms.Parameter(T(Y), name="w", requires_grad=False)
    gw = ms.grad(lambda x: ops.sum(x * w), grad_position=None, weights=[w])(T(X))
    np.testing.assert_allclose(arr(gw[0]), X)
    assert w.requires_grad is False


def test_has_aux():
    def fn(x, y):
        return ops.sum(x * y), x + 1, y

    g, aux = ms.grad(fn, has_aux=True)(T(X), T(Y))
    np.testing.assert_allclose(arr(g), Y)
    assert isinstance(aux, tuple) and len(aux) == 2
    np.testing.assert_allclose(arr(aux[0]), X + 1)
    value, g = ms.value_and_grad(fn, grad_position=(0, 1), has_aux=True)(T(X), T(Y))
    assert isinstance(value, tuple) and len(value) == 3
    np.testing.assert_allclose(arr(value[0]), (X * Y).sum(), rtol=1e-6)
    np.testing.assert_allclose(arr(g[1]), X)
    with pytest.raises(ValueError, match="has_aux"):
        ms.grad(lambda x: ops.sum(x), has_aux=True)(T(X))


def test_value_and_grad():
    value, g = ms.value_and_grad(f)(T(X), T(Y))
    np.testing.assert_allclose(arr(value), (X * X * Y).sum(), rtol=1e-6)
    np.testing.assert_allclose(arr(g), 2 * X * Y, rtol=1e-6)
    w = ms.Parameter(T(Y), name="w")
    value, (gx, gw) = ms.value_and_grad(lambda x: ops.sum(x * w), 0, [w])(T(X))
    np.testing.assert_allclose(arr(gw[0]), X)


def test_non_scalar_outputs_use_ones_as_sens():
    g = ms.grad(lambda x: x * 3)(T(X))
    np.testing.assert_allclose(arr(g), np.full_like(X, 3))
    g = ms.grad(lambda x: (x * 2, x * x))(T(X))
    np.testing.assert_allclose(arr(g), 2 + 2 * X)


def test_inputs_that_do_not_matter_get_zeros():
    g = ms.grad(lambda x, y: ops.sum(y), grad_position=(0, 1))(T(X), T(Y))
    np.testing.assert_array_equal(arr(g[0]), np.zeros_like(X))
    np.testing.assert_array_equal(arr(g[1]), np.ones_like(Y))


def test_gradient_through_indexing_and_shape_ops():
    def fn(x):
        return ops.sum(x[0] * 2) + ops.sum(x[:, 1:] ** 2) + ops.sum(x[[1, 1]]) + ops.sum(x.T.reshape(4))

    g = ms.grad(fn)(T(X))
    expected = np.ones_like(X)  # reshape of transpose
    expected[0] += 2
    expected[:, 1:] += 2 * X[:, 1:]
    expected[1] += 2
    np.testing.assert_allclose(arr(g), expected, rtol=1e-6)


def test_stop_gradient():
    g = ms.grad(lambda x: ops.sum(x * ops.stop_gradient(x)))(T(X))
    np.testing.assert_allclose(arr(g), X)


def test_nested_gradients_differentiate_the_inner_gradient():
    inner = ms.grad(lambda x: ops.sum(x * x * x))  # 3x^2
    np.testing.assert_allclose(arr(ms.grad(lambda x: ops.sum(inner(x)))(T(X))), 6 * X, rtol=1e-6)


def test_grad_errors():
    with pytest.raises(ValueError, match="out of range"):
        ms.grad(f, grad_position=2)(T(X), T(Y))
    with pytest.raises(TypeError, match="grad_position"):
        ms.grad(f, grad_position=1.0)
    with pytest.raises(TypeError, match="must return a Tensor"):
        ms.grad(lambda x: 3.0)(T(X))


# --- GradOperation -----------------------------------------------------------------
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(T(Y), name="w")
        self.b = ms.Parameter(T([0.5, -0.5]), name="b")

    def construct(self, x, y):
        return ops.sum((x * self.w + self.b) * y)


def test_grad_operation_flags():
    net = Net()
    x, y = T(X), T(Y)
    g = ops.GradOperation()(net)(x, y)
    assert isinstance(g, ms.Tensor)
    np.testing.assert_allclose(arr(g), Y * Y)
    gs = ops.GradOperation(get_all=True)(net)(x, y)
    assert isinstance(gs, tuple) and len(gs) == 2
    np.testing.assert_allclose(arr(gs[1]), X * Y + [0.5, -0.5])
    params = ms.ParameterTuple(net.trainable_params())
    gw = ops.GradOperation(get_by_list=True)(net, params)(x, y)
    assert len(gw) == 2
    np.testing.assert_allclose(arr(gw[0]), X * Y)
    np.testing.assert_allclose(arr(gw[1]), Y.sum(0))
    (gx, gy), (gw, gb) = ops.GradOperation(get_all=True, get_by_list=True)(net, params)(x, y)
    np.testing.assert_allclose(arr(gb), Y.sum(0))
    with pytest.raises(TypeError, match="get_all"):
        ops.GradOperation(get_all=1)
    with pytest.raises(TypeError, match="weights"):
        ops.GradOperation(get_by_list=True)(net)


def test_grad_operation_sens_param():
    def fn(x):
        return x * x

    sens = T([[1.0, 0.0], [2.0, 3.0]])
    g = ops.GradOperation(sens_param=True)(fn)(T(X), sens)
    np.testing.assert_allclose(arr(g), 2 * X * arr(sens))
    g = ops.GradOperation(get_all=True, sens_param=True)(lambda a, b: (a * b, a + b))(T(X), T(Y), (sens, sens))
    np.testing.assert_allclose(arr(g[0]), arr(sens) * Y + arr(sens))
    with pytest.raises(ValueError, match="shape"):
        ops.GradOperation(sens_param=True)(fn)(T(X), T([1.0]))
    with pytest.raises(ValueError, match="must match the outputs"):
        ops.GradOperation(sens_param=True)(fn)(T(X), (sens, sens))


def test_grad_operation_inside_a_training_cell():
    net = Net()
    weights = ms.ParameterTuple(net.trainable_params())
    grad_fn = ops.GradOperation(get_by_list=True)

    class TrainStep(nn.Cell):
        def __init__(self):
            super().__init__()
            self.net = net

        def construct(self, x, y):
            loss = self.net(x, y)
            grads = grad_fn(self.net, weights)(x, y)
            for p, g in zip(weights, grads):
                ops.assign_sub(p, g * 0.1)
            return loss

    step = TrainStep()
    before = arr(net.w).copy()
    step(T(X), T(Y))
    np.testing.assert_allclose(arr(net.w), before - 0.1 * X * Y, rtol=1e-6)


# --- grad_for_scalar -----------------------------------------------------------------
def test_scalar_inputs_are_not_differentiated_by_default():
    def fn(x, s):
        return ops.sum(x * s)

    gs = ops.GradOperation(get_all=True)(fn)(T(X), 3.0)
    assert len(gs) == 1
    np.testing.assert_allclose(arr(gs[0]), np.full_like(X, 3))
    g = ms.grad(fn, grad_position=(0, 1))(T(X), 3.0)
    assert len(g) == 1


def test_grad_for_scalar_makes_scalars_differentiable():
    seen = []

    def fn(x, s):
        seen.append(type(s))
        return ops.sum(x * s)

    ms.set_context(grad_for_scalar=True)
    gs = ops.GradOperation(get_all=True)(fn)(T(X), 3.0)
    assert len(gs) == 2 and seen[-1] is ms.Tensor
    assert gs[1].shape == () and gs[1].dtype == ms.float32
    np.testing.assert_allclose(arr(gs[1]), X.sum(), rtol=1e-6)
    g = ms.grad(lambda s: s * s)(2.0)
    np.testing.assert_allclose(arr(g), 4.0)


# --- custom bprop ---------------------------------------------------------------------
class Doubler(nn.Cell):
    """Forward x * y; bprop says the gradients are 2 * dout and 3 * dout."""

    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out, dout):
        return dout * 2, dout * 3


def test_custom_bprop_replaces_the_forward_gradient():
    gx, gy = ops.GradOperation(get_all=True)(Doubler())(T(X), T(Y))
    np.testing.assert_allclose(arr(gx), np.full_like(X, 2))
    np.testing.assert_allclose(arr(gy), np.full_like(Y, 3))


def test_custom_bprop_inside_a_bigger_network():
    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = Doubler()

        def construct(self, x, y):
            return ops.sum(self.inner(x * 2, y) * x)

    gx = ms.grad(Outer())(T(X), T(Y))
    # d/dx sum(inner(2x, y) * x) with inner's custom gradient 2 * dout w.r.t. its first input:
    # through the product: inner(2x, y) = 2x*y; through inner: dout = x → d(2x) gets 2 * x → times 2.
    np.testing.assert_allclose(arr(gx), 2 * X * Y + 4 * X, rtol=1e-6)


def test_custom_bprop_receives_out_and_dout():
    seen = {}

    class Probe(nn.Cell):
        def construct(self, x):
            return x * 5, x + 1

        def bprop(self, x, out, dout):
            seen["out"] = [arr(o).copy() for o in out]
            seen["dout"] = [arr(d).copy() for d in dout]
            return (dout[0] + dout[1],)

    g = ms.grad(lambda x: ops.sum(Probe()(x)[0] * 2))(T(X))
    np.testing.assert_allclose(seen["out"][0], X * 5)
    np.testing.assert_allclose(seen["dout"][0], np.full_like(X, 2))
    np.testing.assert_allclose(seen["dout"][1], np.zeros_like(X))  # no gradient flowed there
    np.testing.assert_allclose(arr(g), np.full_like(X, 2))


def test_custom_bprop_on_any_callable_with_bprop():
    class Plain:
        def construct(self, x):
            return x * x

        def __call__(self, x):
            return self.construct(x)

        def bprop(self, x, out, dout):
            return (dout * 10,)

    g = ops.GradOperation()(Plain())(T(X))
    np.testing.assert_allclose(arr(g), np.full_like(X, 10))


def test_without_a_gradient_the_bprop_cell_runs_normally():
    out = Doubler()(T(X), T(Y))
    np.testing.assert_allclose(arr(out), X * Y)


class WrongCount(nn.Cell):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out, dout):
        return (dout,)


class WrongDtype(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, x, out, dout):
        return (ops.cast(dout, ms.float16),)


class WrongShape(nn.Cell):
    def construct(self, x):
        return x * 2

    def bprop(self, x, out, dout):
        return (ops.sum(dout),)


def test_check_bprop_validates_count_dtype_and_shape():
    ms.set_context(check_bprop=True)
    with pytest.raises(TypeError, match="WrongCount.*number of return values\\(1\\).*input arguments\\(2\\)"):
        ops.GradOperation(get_all=True)(WrongCount())(T(X), T(Y))
    with pytest.raises(TypeError, match="WrongDtype.*dtype"):
        ms.grad(WrongDtype())(T(X))
    with pytest.raises(ValueError, match="WrongShape.*shape"):
        ms.grad(WrongShape())(T(X))


def test_without_check_bprop_a_short_bprop_gives_what_it_returns():
    ms.set_context(check_bprop=False)
    gx, gy = ops.GradOperation(get_all=True)(WrongCount())(T(X), T(Y))
    np.testing.assert_allclose(arr(gx), np.ones_like(X))
    np.testing.assert_array_equal(arr(gy), np.zeros_like(Y))
    g = ms.grad(WrongDtype())(T(X))  # the dtype is not checked
    assert g.shape == X.shape
    with pytest.raises(ValueError, match="shape"):  # a wrong shape is an error either way
        ms.grad(WrongShape())(T(X))


# --- an MLP built from functional ops, against finite differences ------------------------
def mlp_loss(x, w1, b1, w2, b2, labels):
    h = ops.tanh(ops.dense(x, w1, b1))
    h = ops.sigmoid(h) * h
    logits = ops.matmul(h, ops.transpose(w2, (1, 0))) + b2
    return ops.cross_entropy(logits, labels) + ops.mean(ops.square(w1)) * 0.1


def test_mlp_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(5, 4))
    params = [rng.normal(size=(6, 4)) * 0.5, rng.normal(size=(6,)) * 0.1, rng.normal(size=(3, 6)) * 0.5,
              rng.normal(size=(3,)) * 0.1]
    labels = ms.Tensor(np.array([0, 2, 1, 1, 0], np.int32))

    def loss_of(values):
        ts = [ms.Tensor(v) for v in values]  # float64 for accurate differences
        return float(mlp_loss(ms.Tensor(x), *ts, labels).asnumpy())

    ws = [ms.Parameter(ms.Tensor(p), name=f"p{i}") for i, p in enumerate(params)]
    value, grads = ms.value_and_grad(lambda inp: mlp_loss(inp, *ws, labels), grad_position=None, weights=ws)(
        ms.Tensor(x))
    np.testing.assert_allclose(float(value.asnumpy()), loss_of(params), rtol=1e-10)
    eps = 1e-6
    for i, p in enumerate(params):
        numeric = np.zeros_like(p)
        for j in range(p.size):
            plus = [q.copy() for q in params]
            minus = [q.copy() for q in params]
            plus[i].reshape(-1)[j] += eps
            minus[i].reshape(-1)[j] -= eps
            numeric.reshape(-1)[j] = (loss_of(plus) - loss_of(minus)) / (2 * eps)
        np.testing.assert_allclose(arr(grads[i]), numeric, rtol=1e-5, atol=1e-8, err_msg=f"parameter {i}")


def test_mlp_training_reduces_the_loss():
    rng = np.random.default_rng(3)
    x = ms.Tensor(rng.normal(size=(16, 4)).astype(np.float32))
    labels = ms.Tensor((rng.normal(size=16) > 0).astype(np.int32))
    ws = [ms.Parameter(ms.Tensor((rng.normal(size=s) * 0.5).astype(np.float32)), name=f"p{i}")
          for i, s in enumerate([(8, 4), (8,), (2, 8), (2,)])]
    step = ms.value_and_grad(lambda inp: mlp_loss(inp, *ws, labels), None, ws)
    first = None
    for _ in range(30):
        loss, grads = step(x)
        first = float(loss.asnumpy()) if first is None else first
        for w, g in zip(ws, grads):
            ops.assign_sub(w, g * 0.5)
    assert float(loss.asnumpy()) < 0.7 * first
