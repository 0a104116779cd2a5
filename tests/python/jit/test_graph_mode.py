"""Cells in GRAPH_MODE: capture, caching, training, control flow, call depth."""
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops

from .helpers import SmallNet, batches, compiles, make_training


def test_graph_and_pynative_give_the_same_outputs():
    net = SmallNet()
    x = batches(1)[0][0]
    eager = net(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = net(x).asnumpy()
    np.testing.assert_allclose(graph, eager, rtol=1e-6, atol=1e-6)
    assert compiles(net) == 1
    # Switching back mid-script runs eagerly again, with the same result.
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-6, atol=1e-6)
    assert compiles(net) == 1


def test_the_cache_reuses_per_signature_and_recompiles_when_a_compile_key_changes(graph_mode):
    net = SmallNet()
    x4 = batches(1, batch=4)[0][0]
    x2 = batches(1, batch=2)[0][0]
    net(x4)
    net(x4)
    assert compiles(net) == 1
    net(x2)  # another input shape: another graph
    assert compiles(net) == 2
    net(x4)
    assert compiles(net) == 2
    ms.set_context(memory_optimize_level="O1")  # compile-affecting: recompiles
    net(x4)
    assert compiles(net) == 3
    ms.set_context(pynative_synchronize=True)  # not compile-affecting: reuses
    net(x4)
    assert compiles(net) == 3
    net.set_train(True)  # the training flag is part of the key
    net(x4)
    assert compiles(net) == 4


def test_python_scalar_arguments_are_graph_constants(graph_mode):
    class Scale(nn.Cell):
        def construct(self, x, k):
            return x * k

    net = Scale()
    x = ms.Tensor(np.ones((2,), np.float32))
    assert net(x, 2.0).asnumpy().tolist() == [2.0, 2.0]
    assert net(x, 3.0).asnumpy().tolist() == [3.0, 3.0]
    assert compiles(net) == 2


def test_structured_outputs_are_rebuilt(graph_mode):
    class Multi(nn.Cell):
        def construct(self, x):
            return x + 1, {"double": x * 2, "pair": [x, 5]}

    a, rest = Multi()(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    assert a.asnumpy().tolist() == [2.0, 3.0]
    assert rest["double"].asnumpy().tolist() == [2.0, 4.0]
    assert rest["pair"][0].asnumpy().tolist() == [1.0, 2.0] and rest["pair"][1] == 5


@pytest.mark.parametrize("optimizer", ["momentum", "adam"])
def test_a_compiled_training_step_matches_pynative(optimizer):
    data = batches(3)
    results = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        net, step = make_training(optimizer=optimizer)
        losses = [float(step(x, y).asnumpy()) for x, y in data]
        results[mode] = (losses, {p.name: p.asnumpy() for p in net.trainable_params()})
        if mode == ms.GRAPH_MODE:
            assert compiles(step) == 1
    (eager_losses, eager_params), (graph_losses, graph_params) = results[ms.PYNATIVE_MODE], results[ms.GRAPH_MODE]
    np.testing.assert_allclose(graph_losses, eager_losses, rtol=1e-5)
    assert eager_losses[0] != eager_losses[2]  # it trained
    for name, value in eager_params.items():
        np.testing.assert_allclose(graph_params[name], value, rtol=1e-5, atol=1e-6)


def test_a_dynamic_learning_rate_advances_every_compiled_step():
    data = batches(4)
    finals = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        ms.set_seed(5)
        net = SmallNet()
        lr = nn.piecewise_constant_lr([1, 2, 4], [0.5, 0.1, 0.01])
        opt = nn.SGD(net.trainable_params(), learning_rate=lr)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        for x, y in data:
            step(x, y)
        assert opt._step == 4
        finals[mode] = {p.name: p.asnumpy() for p in net.trainable_params()}
    for name, value in finals[ms.PYNATIVE_MODE].items():
        np.testing.assert_allclose(finals[ms.GRAPH_MODE][name], value, rtol=1e-5, atol=1e-6)


def test_model_train_compiles_its_step_in_graph_mode(graph_mode):
    from msrt.train import Model

    net, _ = make_training()
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                  nn.Momentum(net.trainable_params(), 0.05, 0.9))

    class Data:
        def __init__(self):
            self.items = batches(6, seed=1)

        def create_tuple_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
            return iter(self.items)

        def get_dataset_size(self):
            return len(self.items)

    before = net.dense.weight.asnumpy().copy()
    model.train(1, Data())
    assert not np.allclose(before, net.dense.weight.asnumpy())
    assert compiles(model._train_network) == 1


def test_dropout_draws_new_masks_on_every_run(graph_mode):
    drop = nn.Dropout(p=0.5)
    drop.set_train(True)
    x = ms.Tensor(np.ones((64,), np.float32))
    a, b = drop(x).asnumpy(), drop(x).asnumpy()
    assert compiles(drop) == 1
    assert not np.array_equal(a, b)


# --- tensor-dependent control flow -------------------------------------------------------------
class Branchy(nn.Cell):
    def construct(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


def test_strict_syntax_rejects_tensor_dependent_control_flow_naming_the_line(graph_mode):
    ms.set_context(jit_syntax_level=ms.context.STRICT)
    with pytest.raises(RuntimeError, match=r"test_graph_mode.py:\d+: 'if x.sum\(\) > 0:'"):
        Branchy()(ms.Tensor(np.ones(3, np.float32)))


def test_lax_syntax_falls_back_to_eager_with_a_warning(graph_mode):
    net = Branchy()
    with pytest.warns(ms.MsrtWarning, match="runs in PYNATIVE mode instead of as a graph.*if x.sum"):
        out = net(ms.Tensor(np.ones(3, np.float32)))
    assert out.asnumpy().tolist() == [2.0, 2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the decision is cached: no second warning
        assert net(ms.Tensor(-np.ones(3, np.float32))).asnumpy().tolist() == [-2.0, -2.0, -2.0]


# --- call depth ----------------------------------------------------------------------------------------
class Nest(nn.Cell):
    def __init__(self, depth):
        super().__init__()
        self.inner = Nest(depth - 1) if depth > 1 else nn.ReLU()

    def construct(self, x):
        return self.inner(x)


def test_max_call_depth_limits_nested_calls_during_compilation(graph_mode):
    x = ms.Tensor(np.array([-1.0, 2.0], np.float32))
    ms.set_context(max_call_depth=10)
    with pytest.raises(RuntimeError, match="Exceed function call depth limit 10"):
        Nest(20)(x)
    ms.set_context(max_call_depth=50)
    assert Nest(20)(x).asnumpy().tolist() == [0.0, 2.0]


# --- precompile_only -------------------------------------------------------------------------------------------
def test_precompile_only_compiles_without_running(graph_mode):
    net, step = make_training()
    x, y = batches(1)[0]
    before = net.dense.weight.asnumpy().copy()
    ms.set_context(precompile_only=True)
    assert step(x, y) is None
    assert compiles(step) == 1
    np.testing.assert_array_equal(net.dense.weight.asnumpy(), before)


# --- gradients inside graphs ----------------------------------------------------------------------------------
def test_grad_of_a_python_scalar_in_a_compiled_function():
    ms.set_context(grad_for_scalar=True)

    @ms.jit
    def f(x, k):
        return ms.grad(lambda a, b: (a * b).sum(), grad_position=(0, 1))(x, k)

    gx, gk = f(ms.Tensor(np.array([1.0, 2.0], np.float32)), 3.0)
    assert gx.asnumpy().tolist() == [3.0, 3.0]
    assert float(gk.asnumpy()) == 3.0


def test_a_custom_bprop_is_used_and_checked_in_graph_mode(graph_mode):
    class Clip(nn.Cell):
        def construct(self, x):
            return x * 3

        def bprop(self, x, out, dout):
            return (ops.clip_by_value(dout, -1.0, 1.0) * 0 + 7,)

    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.clip = Clip()

        def construct(self, x):
            return ms.grad(lambda v: self.clip(v).sum())(x)

    g = Loss()(ms.Tensor(np.array([1.0, 2.0], np.float32)))
    assert g.asnumpy().tolist() == [7.0, 7.0]


def test_check_bprop_validates_custom_bprops_inside_compiled_functions():
    class WrongShape(nn.Cell):
        def construct(self, x):
            return x * 2

        def bprop(self, x, out, dout):
            return (dout.sum(),)

    class WrongDtype(nn.Cell):
        def construct(self, x):
            return x * 2

        def bprop(self, x, out, dout):
            return (ms.ops.cast(dout, ms.float16),)

    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    ms.set_context(check_bprop=True)
    with pytest.raises(TypeError, match="WrongDtype.*dtype"):
        ms.jit(lambda v: ms.grad(WrongDtype())(v))(x)
    with pytest.raises(ValueError, match="WrongShape.*shape"):
        ms.jit(lambda v: ms.grad(WrongShape())(v))(x)
    ms.set_context(check_bprop=False)  # a compile key: recompiled without the check
    assert ms.jit(lambda v: ms.grad(WrongDtype())(v))(x).shape == (2,)
