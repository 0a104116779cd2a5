"""The same gradients whichever way they are asked for.

Every route (the PYNATIVE tape, a GRAPH_MODE Cell, an @jit function, grad of
jit, jit of grad, compiled calls inside an eager function being
differentiated, TrainOneStepCell in both modes, Model.train) is compared
with the PYNATIVE tape on three small networks (an MLP, a conv net, a net
with BatchNorm and Dropout in eval), and the tape with PyTorch on the same
weights. Casts and mixed precision go through the same routes.
"""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops

RTOL, ATOL = 2e-4, 2e-5


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(6, 8)
        self.fc2 = nn.Dense(8, 3)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class ConvNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="valid", has_bias=True)
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 2 * 2, 3)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.conv(x)))))


class NormNet(nn.Cell):
    """BatchNorm and Dropout, differentiated in eval mode."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(p=0.5)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 6 * 6, 3)

    def construct(self, x):
        return self.fc(self.drop(self.flatten(ops.tanh(self.bn(self.conv(x))))))


class CastNet(nn.Cell):
    """An MLP computing its middle in float16 and its loss in float64."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(6, 8)
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        h = ops.cast(self.fc1(x), ms.float16)
        h = ops.cast(ops.tanh(h), ms.float32)
        return ops.cast(self.fc2(h), ms.float64)


NETS = {
    "mlp": (MLP, (4, 6)),
    "conv": (ConvNet, (2, 2, 6, 6)),
    "norm": (NormNet, (2, 2, 6, 6)),
    "cast": (CastNet, (4, 6)),
}
TOLERANCE = {"cast": (2e-2, 2e-3)}


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, 3, shape[0]).astype(np.int32)
    return x, y


def _build(name):
    ms.set_seed(7)
    cls, shape = NETS[name]
    net = cls()
    if name == "norm":  # running statistics that are not the identity
        rng = np.random.default_rng(3)
        net.bn.moving_mean.set_data(ms.Tensor(rng.standard_normal(4).astype(np.float32) * 0.1))
        net.bn.moving_variance.set_data(ms.Tensor(rng.uniform(0.5, 2.0, 4).astype(np.float32)))
    net.set_train(False)
    x, y = _data(shape)
    return net, x, y


class Loss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, x, y):
        return self.loss(ops.cast(self.net(x), ms.float32), y)


def _named(params, grads):
    return {p.name: np.asarray(g.asnumpy(), np.float64) for p, g in zip(params, grads)}


def _tape(net, x, y):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    loss = Loss(net)
    params = loss.trainable_params()
    gx, gw = ms.grad(loss, grad_position=0, weights=params)(ms.Tensor(x), ms.Tensor(y))
    return gx.asnumpy(), _named(params, gw)


def _route_graph_cell(net, x, y):
    ms.set_context(mode=ms.GRAPH_MODE)
    loss = Loss(net)
    params = loss.trainable_params()
    gx, gw = ms.grad(loss, grad_position=0, weights=params)(ms.Tensor(x), ms.Tensor(y))
    return gx.asnumpy(), _named(params, gw)


def _route_graph_value_and_grad(net, x, y):
    """The MindSpore tutorial's loop: a forward function of Cells, value_and_grad, GRAPH_MODE."""
    ms.set_context(mode=ms.GRAPH_MODE)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def forward(data, label):
        return loss_fn(ops.cast(net(data), ms.float32), label)

    params = net.trainable_params()
    _, (gx, gw) = ms.value_and_grad(forward, 0, params)(ms.Tensor(x), ms.Tensor(y))
    return gx.asnumpy(), _named(params, gw)


def _route_jit_function(net, x, y, mode=ms.PYNATIVE_MODE):
    ms.set_context(mode=mode)
    loss = Loss(net)

    @ms.jit
    def f(data, label):
        return loss(data, label)

    params = loss.trainable_params()
    gx, gw = ms.grad(f, grad_position=0, weights=params)(ms.Tensor(x), ms.Tensor(y))
    return gx.asnumpy(), _named(params, gw)


def _route_jit_inside_eager(net, x, y):
    """PYNATIVE: an eager function calling a jit function (a compiled call on the tape)."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    loss = Loss(net)
    compiled = ms.jit(lambda data, label: loss(data, label))

    def f(data, label):
        return compiled(data * 1.0, label)

    params = loss.trainable_params()
    gx, gw = ms.grad(f, grad_position=0, weights=params)(ms.Tensor(x), ms.Tensor(y))
    return gx.asnumpy(), _named(params, gw)


def _route_graph_cells_inside_eager(net, x, y):
    """GRAPH_MODE: a forward function that cannot be compiled whole (it reads a
    tensor's value) runs eagerly; its Cells run compiled, on the tape."""
    ms.set_context(mode=ms.GRAPH_MODE)
    loss = Loss(net)

    def forward(data, label):
        if float(data.asnumpy().sum()) > 1e30:  # tensor-dependent: no whole-graph capture
            return loss(data * 2.0, label)
        return loss(data, label)

    params = loss.trainable_params()
    with pytest.warns(Warning, match="PYNATIVE"):
        gx, gw = ms.grad(forward, grad_position=0, weights=params)(ms.Tensor(x), ms.Tensor(y))
    assert len(loss._graph_cache) == 1  # the Cell ran compiled
    return gx.asnumpy(), _named(params, gw)


def _route_grad_op(net, x, y):
    ms.set_context(mode=ms.GRAPH_MODE)
    loss = Loss(net)
    params = ms.ParameterTuple(loss.trainable_params())
    gx, gw = ops.GradOperation(get_all=True, get_by_list=True)(loss, params)(ms.Tensor(x), ms.Tensor(y))
    return gx[0].asnumpy(), _named(params, gw)


def _route_jit_of_grad(net, x, y):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    loss = Loss(net)
    params = loss.trainable_params()
    grad_fn = ms.grad(loss, grad_position=0, weights=params)

    @ms.jit
    def step(data, label):
        return grad_fn(data, label)

    gx, gw = step(ms.Tensor(x), ms.Tensor(y))
    return gx.asnumpy(), _named(params, gw)


def _route_train_one_step(net, x, y, mode):
    ms.set_context(mode=mode)
    loss = Loss(net)
    params = loss.trainable_params()
    before = {p.name: p.asnumpy().copy() for p in params}
    opt = nn.SGD(params, learning_rate=0.0)
    step = nn.TrainOneStepCell(loss, opt, return_grad=True)
    step.set_train(False)  # BatchNorm and Dropout in eval
    _, grads = step(ms.Tensor(x), ms.Tensor(y))
    for p in params:  # lr 0: nothing moved
        np.testing.assert_array_equal(p.asnumpy(), before[p.name])
    return None, {k: np.asarray(v.asnumpy(), np.float64) for k, v in grads.items()}


def _route_model_train(net, x, y, mode):
    """Model.train with SGD(lr=1): each parameter moves by minus its gradient."""
    ms.set_context(mode=mode)
    params = net.trainable_params()
    before = {p.name: p.asnumpy().astype(np.float64) for p in params}
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    class Float32(nn.Cell):
        def __init__(self, inner):
            super().__init__(auto_prefix=False)
            self.inner = inner

        def construct(self, data):
            return ops.cast(self.inner(data), ms.float32)

    model = ms.train.Model(Float32(net), loss_fn, nn.SGD(params, learning_rate=1.0))
    model.train(1, [(x, y)])
    grads = {p.name: before[p.name] - p.asnumpy().astype(np.float64) for p in params}
    for p in params:
        p.set_data(ms.Tensor(before[p.name].astype(np.float32)))
    return None, grads


ROUTES = {
    "graph_cell": _route_graph_cell,
    "graph_value_and_grad": _route_graph_value_and_grad,
    "jit_function": _route_jit_function,
    "jit_function_graph_mode": lambda n, x, y: _route_jit_function(n, x, y, ms.GRAPH_MODE),
    "grad_operation_graph": _route_grad_op,
    "jit_of_grad": _route_jit_of_grad,
    "jit_inside_eager": _route_jit_inside_eager,
    "graph_cells_inside_eager": _route_graph_cells_inside_eager,
    "train_one_step_pynative": lambda n, x, y: _route_train_one_step(n, x, y, ms.PYNATIVE_MODE),
    "train_one_step_graph": lambda n, x, y: _route_train_one_step(n, x, y, ms.GRAPH_MODE),
    "model_train_pynative": lambda n, x, y: _route_model_train(n, x, y, ms.PYNATIVE_MODE),
    "model_train_graph": lambda n, x, y: _route_model_train(n, x, y, ms.GRAPH_MODE),
}


def _compare(name, got, want, what):
    rtol, atol = TOLERANCE.get(name, (RTOL, ATOL))
    gx, gw = got
    wx, ww = want
    if gx is not None:
        np.testing.assert_allclose(gx, wx, rtol=rtol, atol=atol, err_msg=f"{what}: input gradient")
    assert set(gw) == set(ww), what
    for key in ww:
        assert np.abs(ww[key]).max() > 0, f"{key} has an all-zero reference gradient"
        np.testing.assert_allclose(gw[key], ww[key], rtol=rtol, atol=atol, err_msg=f"{what}: {key}")


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("name", sorted(NETS))
def test_route_matches_the_tape(name, route):
    if route.startswith("model_train") and name == "norm":
        pytest.skip("Model.train trains in train mode, where Dropout and BatchNorm differ from eval")
    net, x, y = _build(name)
    want = _tape(net, x, y)
    got = ROUTES[route](net, x, y)
    _compare(name, got, want, f"{name} via {route}")


# --- against PyTorch ---------------------------------------------------------------------
def _torch_grads(name, net, x, y):
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    p = {q.name: torch.tensor(q.asnumpy(), dtype=torch.float64, requires_grad=True)
         for q in net.trainable_params()}
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)

    def dense(prefix, h):
        return h @ p[f"{prefix}.weight"].T + p[f"{prefix}.bias"]

    if name == "mlp":
        out = dense("fc2", torch.relu(dense("fc1", xt)))
    elif name == "conv":
        h = tnn.functional.conv2d(xt, p["conv.weight"], p["conv.bias"])
        h = tnn.functional.max_pool2d(torch.relu(h), 2, 2)
        out = dense("fc", h.flatten(1))
    elif name == "norm":
        h = tnn.functional.conv2d(xt, p["conv.weight"], padding=1)
        mean = torch.tensor(net.bn.moving_mean.asnumpy(), dtype=torch.float64)
        var = torch.tensor(net.bn.moving_variance.asnumpy(), dtype=torch.float64)
        h = tnn.functional.batch_norm(h, mean, var, p["bn.gamma"], p["bn.beta"], training=False, eps=1e-5)
        out = dense("fc", torch.tanh(h).flatten(1))
    else:
        out = dense("fc2", torch.tanh(dense("fc1", xt)))
    loss = tnn.functional.cross_entropy(out, torch.tensor(y, dtype=torch.long))
    loss.backward()
    return xt.grad.numpy(), {f"net.{k}": v.grad.numpy() for k, v in p.items()}


@pytest.mark.parametrize("name", sorted(NETS))
def test_tape_matches_pytorch(name):
    net, x, y = _build(name)
    want = _torch_grads(name, net, x, y)
    got = _tape(net, x, y)
    _compare(name, got, want, f"{name} against PyTorch")


# --- mixed precision ------------------------------------------------------------------------
@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
def test_mixed_precision_routes_agree(level):
    results = {}
    for route in ("tape", "graph_cell", "jit_function", "train_one_step_graph"):
        net, x, y = _build("mlp")
        net = ms.amp.auto_mixed_precision(net, level)
        fn = _tape if route == "tape" else ROUTES[route]
        results[route] = fn(net, x, y)
    for route, got in results.items():
        _compare("cast", got, results["tape"], f"amp {level} via {route}")


# --- learning ---------------------------------------------------------------------------
def _train_with_value_and_grad(mode, steps=40):
    ms.set_context(mode=mode)
    ms.set_seed(1)
    net = MLP()
    rng = np.random.default_rng(5)
    x = ms.Tensor(rng.standard_normal((32, 6)).astype(np.float32))
    y = ms.Tensor((rng.standard_normal(32) > 0).astype(np.int32))
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)

    def forward(data, label):
        return loss_fn(net(data), label)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)
    losses = []
    for _ in range(steps):
        loss, grads = grad_fn(x, y)
        opt(grads)
        losses.append(float(loss.asnumpy()))
    return losses


def test_graph_mode_value_and_grad_loop_learns_as_pynative_does():
    eager = _train_with_value_and_grad(ms.PYNATIVE_MODE)
    graph = _train_with_value_and_grad(ms.GRAPH_MODE)
    assert eager[-1] < 0.5 * eager[0]
    np.testing.assert_allclose(graph, eager, rtol=1e-3, atol=1e-5)


# --- integer inputs and casts ----------------------------------------------------------------
@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_integer_inputs_get_zero_gradients_of_their_dtype(mode):
    ms.set_context(mode=mode)

    @ms.jit
    def compiled(a, b):
        return ops.sum(ops.cast(a, ms.float32) * b)

    def eager(a, b):
        return ops.sum(ops.cast(a, ms.float32) * b)

    a = ms.Tensor(np.array([1, 2, 3], np.int32))
    b = ms.Tensor(np.array([0.5, 1.5, 2.5], np.float32))
    for fn in (eager, compiled):
        ga, gb = ms.grad(fn, grad_position=(0, 1))(a, b)
        assert ga.dtype == ms.int32
        np.testing.assert_array_equal(ga.asnumpy(), [0, 0, 0])
        np.testing.assert_allclose(gb.asnumpy(), [1.0, 2.0, 3.0])


def test_no_gradient_flows_through_an_integer_value():
    def f(x):
        return ops.sum(ops.cast(ops.cast(x * 3.0, ms.int32), ms.float32) + x)

    g = ms.grad(f)(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_allclose(g.asnumpy(), [1.0, 1.0])


@pytest.mark.parametrize("dtype", [ms.float16, ms.float64])
@pytest.mark.parametrize("compiled", [False, True])
def test_gradient_through_float_casts(dtype, compiled):
    def f(x):
        return ops.sum(ops.cast(x * x, dtype) * 2)

    fn = ms.jit(f) if compiled else f
    g = ms.grad(fn)(ms.Tensor(np.array([1.0, -2.0, 0.5], np.float32)))
    assert g.dtype == ms.float32
    np.testing.assert_allclose(g.asnumpy(), [4.0, -8.0, 2.0], rtol=1e-3)


def test_grad_inside_a_jit_function_with_weights():
    net, x, y = _build("mlp")
    want = _tape(net, x, y)
    loss = Loss(net)
    params = loss.trainable_params()

    @ms.jit
    def step(data, label):
        return ms.grad(loss, grad_position=0, weights=params)(data, label)

    gx, gw = step(ms.Tensor(x), ms.Tensor(y))
    _compare("mlp", (gx.asnumpy(), _named(params, gw)), want, "grad inside jit")


def test_compiled_call_inside_a_longer_eager_computation():
    """A compiled call in the middle of eager ops: gradients flow through both."""
    ms.set_context(mode=ms.PYNATIVE_MODE)

    @ms.jit
    def middle(a, b):
        return a * b + ops.tanh(a), a - b

    def f(x, y):
        u, v = middle(x * 2.0, y)
        return ops.sum(u * v) + ops.sum(x)

    x = np.array([0.3, -1.2, 2.0], np.float32)
    y = np.array([1.5, 0.2, -0.7], np.float32)
    gx, gy = ms.grad(f, grad_position=(0, 1))(ms.Tensor(x), ms.Tensor(y))
    a = 2 * x
    u, v = a * y + np.tanh(a), a - y
    want_gx = 2 * ((y + 1 - np.tanh(a) ** 2) * v + u) + 1
    want_gy = a * v - u
    np.testing.assert_allclose(gx.asnumpy(), want_gx, rtol=1e-5)
    np.testing.assert_allclose(gy.asnumpy(), want_gy, rtol=1e-5)
    assert len(middle._graph_cache) == 1  # the forward ran compiled


# --- the forward's effects happen once -----------------------------------------------------
class TrainBN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(2, momentum=0.5)

    def construct(self, x):
        return ops.sum(self.bn(x) * x)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_batchnorm_statistics_update_once_per_differentiated_call(mode):
    ms.set_context(mode=mode)
    net = TrainBN()
    net.set_train(True)
    x = ms.Tensor(np.random.default_rng(0).standard_normal((4, 2, 3, 3)).astype(np.float32))
    grad_fn = ms.value_and_grad(net, 0, net.trainable_params())
    for _ in range(3):
        grad_fn(x)
    batch_mean = x.asnumpy().mean(axis=(0, 2, 3))
    # momentum 0.5 applied three times from zeros: (1 - 0.5**3) of the batch mean
    np.testing.assert_allclose(net.bn.moving_mean.asnumpy(), batch_mean * (1 - 0.5 ** 3), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_print_in_a_differentiated_compiled_call_prints_once(mode, capfd):
    ms.set_context(mode=mode)

    @ms.jit
    def f(x):
        ops.print_("value:", x)
        return ops.sum(x * x)

    g = ms.grad(f)(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_allclose(g.asnumpy(), [2.0, 4.0])
    ms._C.synchronize()
    assert capfd.readouterr().out.count("value:") == 1


def test_top_level_gradient_calls_compile_whole_in_graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    net, x, y = _build("mlp")
    loss = Loss(net)
    grad_fn = ms.value_and_grad(loss, None, loss.trainable_params())
    for _ in range(3):
        grad_fn(ms.Tensor(x), ms.Tensor(y))
    reports = ms._jit.compile_report(grad_fn)
    assert len(reports) == 1  # one graph, forward and backward, compiled once
    assert loss.__dict__.get("_graph_cache", {}) == {}  # the Cell was inlined, not called as its own graph


def test_grad_of_a_jit_function_compiles_whole_in_pynative_mode():
    ms.set_context(mode=ms.PYNATIVE_MODE)

    @ms.jit
    def f(a):
        return ops.sum(ops.tanh(a) * a)

    grad_fn = ms.grad(f)
    a = np.array([0.5, -1.0], np.float32)
    g = grad_fn(ms.Tensor(a))
    np.testing.assert_allclose(g.asnumpy(), np.tanh(a) + a * (1 - np.tanh(a) ** 2), rtol=1e-5)
    assert len(ms._jit.compile_report(grad_fn)) == 1
    assert f._graph_cache == {}  # inlined into the gradient's graph
