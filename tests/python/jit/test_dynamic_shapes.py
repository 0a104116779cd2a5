"""Dynamic dimensions (Note [Dynamic shapes] in msrt/_jit.py): a GRAPH_MODE
Cell with None in set_inputs, or a jit function with such an
input_signature, compiles once for every size, gives PYNATIVE's and NumPy's
numbers, gradients included; Python code that depends on a size compiles per
shape instead, with a warning, and stays correct."""
import glob
import os

import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops
from msrt._warnings import MsrtWarning

SIZES = (1, 3, 8, 17)
RNG = np.random.default_rng(11)


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(8, 3)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def mlp_numpy(net, x):
    w1, b1 = net.fc1.weight.asnumpy(), net.fc1.bias.asnumpy()
    w2, b2 = net.fc2.weight.asnumpy(), net.fc2.bias.asnumpy()
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def batch(rows):
    return RNG.standard_normal((rows, 4)).astype(np.float32)


def graphs(cell_or_fn):
    return ms._jit.compile_report(cell_or_fn)


@pytest.mark.parametrize("memory_level", ["O0", "O1"])
def test_cell_compiles_once_for_every_batch_size(memory_level):
    ms.set_context(mode=ms.GRAPH_MODE, memory_optimize_level=memory_level)
    net = MLP()
    net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32))
    inputs = [batch(rows) for rows in SIZES]
    got = [net(ms.Tensor(x)).asnumpy() for x in inputs]
    assert len(graphs(net)) == 1, "one compile for every size"
    report = graphs(net)[0]
    assert report["dynamic"] and report["shape_plans"] == len(SIZES)
    assert net(ms.Tensor(inputs[1])).shape == (3, 3)  # a size seen before reuses its plan
    assert graphs(net)[0]["shape_plans"] == len(SIZES)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for x, y in zip(inputs, got):
        assert y.shape == (x.shape[0], 3)
        np.testing.assert_allclose(y, net(ms.Tensor(x)).asnumpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(y, mlp_numpy(net, x), rtol=1e-5, atol=1e-5)


def test_gradients_compile_once_and_match_pynative():
    net = MLP()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    loss_net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32), ms.Tensor(shape=[None, 3], dtype=ms.float32))
    weights = net.trainable_params()
    data = [(batch(rows), RNG.standard_normal((rows, 3)).astype(np.float32)) for rows in SIZES]

    def run(mode):
        ms.set_context(mode=mode)
        grad_fn = ms.value_and_grad(loss_net, None, weights)
        results = []
        for x, y in data:
            loss, grads = grad_fn(ms.Tensor(x), ms.Tensor(y))
            results.append((loss.asnumpy(), [g.asnumpy() for g in grads]))
        return grad_fn, results

    grad_fn, compiled = run(ms.GRAPH_MODE)
    assert len(graphs(grad_fn)) == 1 and graphs(grad_fn)[0]["dynamic"]
    _, eager = run(ms.PYNATIVE_MODE)
    for (x, y), (loss, grads), (want_loss, want_grads) in zip(data, compiled, eager):
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
        np.testing.assert_allclose(loss, ((mlp_numpy(net, x) - y) ** 2).mean(), rtol=1e-5)
        for g, w in zip(grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_flatten_network_trains_with_one_compile():
    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(6, 2)

        def construct(self, x):
            return self.fc(self.flatten(x))

    net = Head()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    loss_net.set_inputs(ms.Tensor(shape=[None, 2, 3], dtype=ms.float32),
                        ms.Tensor(shape=[None, 2], dtype=ms.float32))
    data = [(RNG.standard_normal((rows, 2, 3)).astype(np.float32), RNG.standard_normal((rows, 2)).astype(np.float32))
            for rows in SIZES]

    def run(mode):
        ms.set_context(mode=mode)
        grad_fn = ms.value_and_grad(loss_net, None, net.trainable_params())
        return grad_fn, [[g.asnumpy() for g in grad_fn(ms.Tensor(x), ms.Tensor(y))[1]] for x, y in data]

    grad_fn, compiled = run(ms.GRAPH_MODE)
    assert len(graphs(grad_fn)) == 1 and graphs(grad_fn)[0]["dynamic"]
    _, eager = run(ms.PYNATIVE_MODE)
    for got, want in zip(compiled, eager):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_grad_operation_of_a_dynamic_cell():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = MLP()
    net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32))
    grad = ops.GradOperation()(net)
    got = [grad(ms.Tensor(batch(rows))).asnumpy() for rows in SIZES]
    w1, w2 = net.fc1.weight.asnumpy(), net.fc2.weight.asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for g in got:
        assert g.shape[1] == 4
    x = batch(5)
    ms.set_context(mode=ms.GRAPH_MODE)
    dx = grad(ms.Tensor(x)).asnumpy()
    mask = (x @ w1.T + net.fc1.bias.asnumpy()) > 0
    np.testing.assert_allclose(dx, (np.ones((5, 3)) @ w2 * mask) @ w1, rtol=1e-5, atol=1e-6)


def test_jit_input_signature_compiles_once():
    @ms.jit(input_signature=ms.Tensor(shape=[None, 2], dtype=ms.float32))
    def f(x):
        return (x * x + 1.0).sum(1)

    for rows in SIZES:
        x = RNG.standard_normal((rows, 2)).astype(np.float32)
        np.testing.assert_allclose(f(ms.Tensor(x)).asnumpy(), (x * x + 1).sum(1), rtol=1e-6)
    assert len(graphs(f)) == 1 and graphs(f)[0]["dynamic"]
    with pytest.raises(ValueError, match="dimension 1 of the 0th input must be 2 as 'input_signature'"):
        f(ms.Tensor(np.ones((3, 3), np.float32)))


def test_fused_graph_infers_each_size():
    ms.set_context(mode=ms.GRAPH_MODE, enable_graph_kernel=True)

    class Chain(nn.Cell):
        def construct(self, x, y):
            return ops.relu(x * 2.0 + y) - 1.0

    net = Chain()
    net.set_inputs(ms.Tensor(shape=[None, 5], dtype=ms.float32), ms.Tensor(shape=[None, 5], dtype=ms.float32))
    for rows in SIZES:
        x, y = (RNG.standard_normal((rows, 5)).astype(np.float32) for _ in range(2))
        np.testing.assert_allclose(net(ms.Tensor(x), ms.Tensor(y)).asnumpy(), np.maximum(x * 2 + y, 0) - 1,
                                   rtol=1e-6)
    assert len(graphs(net)) == 1 and graphs(net)[0]["fused_chains"] >= 1
    # Inputs the graph gives one shape must keep one shape: (3, 5) and (1, 5) broadcast, but the fused
    # kernel was planned for equal shapes.
    with pytest.raises((RuntimeError, ValueError), match="compiled once for dynamic shapes"):
        net(ms.Tensor(np.ones((3, 5), np.float32)), ms.Tensor(np.ones((1, 5), np.float32)))


class FlattenByShape(nn.Cell):
    def construct(self, x):
        return ops.reshape(x, (x.shape[0], -1)) * 2.0


class FlattenByMinusOne(nn.Cell):
    def construct(self, x):
        return ops.reshape(x, (-1, 6)) * 2.0


class BranchOnSize(nn.Cell):
    def construct(self, x):
        if x.shape[0] > 15:
            return x * 2.0
        return x * 3.0


def run_sizes(net, shape_tail):
    results = []
    for rows in SIZES:
        x = RNG.standard_normal((rows, *shape_tail)).astype(np.float32)
        results.append((x, net(ms.Tensor(x)).asnumpy()))
    return results


def test_reading_a_dynamic_dimension_compiles_per_shape():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = FlattenByShape()
    net.set_inputs(ms.Tensor(shape=[None, 2, 3], dtype=ms.float32))
    with pytest.warns(MsrtWarning, match=r"compiled once per input shape .* has shape=\[13, -1\] at one size and "
                                         r"\[19, -1\] at the other: an attribute depends on a dynamic dimension"):
        results = run_sizes(net, (2, 3))
    for x, y in results:
        np.testing.assert_allclose(y, x.reshape(x.shape[0], -1) * 2, rtol=1e-6)
    assert len(graphs(net)) == len(SIZES) and not any(r["dynamic"] for r in graphs(net))
    assert "dynamic dimension" in net._graph_cache.per_shape


def test_shape_free_reshape_compiles_once():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = FlattenByMinusOne()
    net.set_inputs(ms.Tensor(shape=[None, 2, 3], dtype=ms.float32))
    for x, y in run_sizes(net, (2, 3)):
        np.testing.assert_allclose(y, x.reshape(-1, 6) * 2, rtol=1e-6)
    assert len(graphs(net)) == 1 and graphs(net)[0]["dynamic"]


def test_control_flow_on_a_size_compiles_per_shape():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = BranchOnSize()
    net.set_inputs(ms.Tensor(shape=[None, 2], dtype=ms.float32))
    with pytest.warns(MsrtWarning, match="uses the size of a dynamic dimension"):
        results = run_sizes(net, (2,))
    for x, y in results:
        np.testing.assert_allclose(y, x * (2.0 if x.shape[0] > 15 else 3.0), rtol=1e-6)


def test_len_of_a_dynamic_dimension_compiles_per_shape():
    ms.set_context(mode=ms.GRAPH_MODE)

    class Scale(nn.Cell):
        def construct(self, x):
            return x / len(x)

    net = Scale()
    net.set_inputs(ms.Tensor(shape=[None, 2], dtype=ms.float32))
    with pytest.warns(MsrtWarning, match="uses the size of a dynamic dimension"):
        results = run_sizes(net, (2,))
    for x, y in results:
        np.testing.assert_allclose(y, x / x.shape[0], rtol=1e-6)


def test_static_dimensions_can_be_read():
    ms.set_context(mode=ms.GRAPH_MODE)

    class Mean(nn.Cell):
        def construct(self, x):
            return x.sum(1) / x.shape[1]

    net = Mean()
    net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32))
    for x, y in run_sizes(net, (4,)):
        np.testing.assert_allclose(y, x.mean(1), rtol=1e-6)
    assert len(graphs(net)) == 1


def test_save_graphs_shows_the_dynamic_dimension(tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE, save_graphs=True, save_graphs_path=str(tmp_path))
    net = MLP()
    net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32))
    for rows in (2, 5):
        net(ms.Tensor(batch(rows)))
    files = glob.glob(os.path.join(str(tmp_path), "**", "*.ir"), recursive=True)
    assert files
    text = "".join(open(f).read() for f in files)
    assert "Float32(-1, 4)" in text and "Float32(-1, 3)" in text


def test_calls_not_matching_the_signature_are_refused():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = MLP()
    net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32))
    net(ms.Tensor(batch(2)))
    with pytest.raises(ValueError, match="must have 2 dimensions"):
        net(ms.Tensor(np.ones((2, 4, 1), np.float32)))
    with pytest.raises(ValueError, match="dimension 1 of the 0th input must be 4"):
        net(ms.Tensor(np.ones((2, 5), np.float32)))
    with pytest.raises(TypeError, match="dtype of the 0th input must be Float32"):
        net(ms.Tensor(np.ones((2, 4), np.float64)))
    assert len(graphs(net)) == 1


def test_compiled_graph_refuses_inputs_that_do_not_fit():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = MLP()
    net.set_inputs(ms.Tensor(shape=[None, 4], dtype=ms.float32))
    net(ms.Tensor(batch(2)))
    compiled = list(net._graph_cache.values())[0].compiled
    weights = [None] * len(compiled.weight_names())
    with pytest.raises(ValueError, match=r"must be Float32\(-1, 4\) \(-1: any size\)"):
        compiled.run([ms.Tensor(np.ones((2, 5), np.float32))._t], weights)
    out = compiled.run([ms.Tensor(np.ones((6, 4), np.float32))._t], weights)
    assert tuple(out[0].shape) == (6, 3)
