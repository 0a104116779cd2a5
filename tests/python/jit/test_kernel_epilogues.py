"""The fuse_epilogues backend pass: a unary elementwise op after a conv2d, matmul or dense runs inside that op's kernel
(a oneDNN post-op) in every optimized graph, not only with graph-kernel fusion; jit_level O0 keeps it separate."""
import os
import re

import numpy as np
import pytest

import msrt as ms
from msrt import nn

from .helpers import SmallNet


class ConvDenseNet(nn.Cell):
    """conv → relu → pool → dense → relu → dense: two relus whose inputs nothing else reads."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 6, 3, pad_mode="pad", padding=1, has_bias=False)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(6 * 4 * 4, 12)
        self.fc2 = nn.Dense(12, 5)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.pool(self.relu(self.conv(x)))
        return self.fc2(self.relu(self.fc1(self.flatten(x))))


def _data(batch=4, seed=0):
    rng = np.random.default_rng(seed)
    return (ms.Tensor(rng.standard_normal((batch, 2, 8, 8)).astype(np.float32)),
            ms.Tensor(rng.integers(0, 5, batch).astype(np.int32)))


def _train(steps, **context):
    """Losses and final weights of `steps` Momentum steps in GRAPH_MODE with `context`, the compile report and the
    initial weights."""
    ms.set_context(mode=ms.GRAPH_MODE, **context)
    ms.set_seed(5)
    net = ConvDenseNet()
    initial = {p.name: p.asnumpy().copy() for p in net.trainable_params()}
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                               nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9))
    losses = [float(step(*_data(seed=i)).asnumpy()) for i in range(steps)]
    weights = {p.name: p.asnumpy() for p in net.trainable_params()}
    return losses, weights, ms._jit.compile_report(step)[-1], initial


def _backend_ir(report):
    return open(next(f for f in report["files"] if "_backend_" in os.path.basename(f))).read()


def test_fused_training_matches_unfused_forward_and_backward(tmp_path):
    fused = _train(4, save_graphs=1, save_graphs_path=str(tmp_path / "fused"))
    plain = _train(4, graph_kernel_flags="--disable_pass=fuse_epilogues")
    # relu's gradient reads relu's output, which the fused kernel writes: the weights follow the same path.
    assert fused[2]["fused_epilogues"] == 2 and plain[2]["fused_epilogues"] == 0
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-5)
    for name, value in plain[1].items():
        np.testing.assert_allclose(fused[1][name], value, rtol=1e-4, atol=1e-6, err_msg=name)
    # The steps moved every weight (the comparison above is not one of untouched initial values).
    for name, value in fused[3].items():
        assert not np.allclose(fused[1][name], value), name


def test_the_backend_ir_shows_the_epilogue_and_no_separate_relu(tmp_path):
    _, _, report, _ = _train(1, save_graphs=1, save_graphs_path=str(tmp_path))
    text = _backend_ir(report)
    assert text.count("__epilogue: ['relu']") == 2
    assert "conv2d(" in text.split("__epilogue: ['relu']")[0].rsplit("\n", 1)[1]
    assert " relu(" not in text and "relu_grad(" in text


def test_jit_level_o0_keeps_the_relu_a_separate_op(tmp_path):
    _, _, report, _ = _train(1, jit_config={"jit_level": "O0"}, save_graphs=1, save_graphs_path=str(tmp_path))
    assert report["fused_epilogues"] == 0
    text = _backend_ir(report)
    assert "__epilogue" not in text and text.count(" relu(") == 2


@pytest.mark.parametrize("activation", ["relu", "sigmoid", "tanh"])
def test_inference_with_an_epilogue_matches_pynative(activation):
    dense = nn.Dense(7, 9)
    x = ms.Tensor(np.random.default_rng(2).standard_normal((3, 7)).astype(np.float32))
    act = getattr(ms.ops, activation)
    expected = act(dense(x)).asnumpy()

    @ms.jit
    def f(x):
        return act(dense(x))

    np.testing.assert_allclose(f(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert ms._jit.compile_report(f)[-1]["fused_epilogues"] == 1


def test_a_pre_activation_read_elsewhere_is_not_fused():
    conv = nn.Conv2d(2, 3, 3, has_bias=False)
    x = ms.Tensor(np.random.default_rng(1).standard_normal((2, 2, 6, 6)).astype(np.float32))

    @ms.jit
    def f(x):
        y = conv(x)
        return ms.ops.relu(y), y

    got_relu, got_y = f(x)
    np.testing.assert_allclose(got_relu.asnumpy(), np.maximum(got_y.asnumpy(), 0), rtol=0, atol=0)
    assert (got_y.asnumpy() < 0).any()  # the unfused value really is the pre-activation
    assert ms._jit.compile_report(f)[-1]["fused_epilogues"] == 0


def _biased_training(mode, **context):
    ms.set_context(mode=mode, **context)
    ms.set_seed(7)
    net = SmallNet(in_channels=2, has_bias=True)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                               nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9))
    losses = [float(step(*_data(seed=i)).asnumpy()) for i in range(3)]
    return losses, {p.name: p.asnumpy() for p in net.trainable_params()}, step


def test_a_conv_bias_runs_channels_last_with_the_relu_inside_its_kernel(tmp_path):
    """conv2d and bias_add run as one conv2d_bias on NHWC activations (data_format 'NHWC', no transposes around
    it, Note [Fused pairs]), the relu runs as its post-op, and the bias gradient sums dy's channels-last rows
    (bias_add_grad); results are PYNATIVE's."""
    eager = _biased_training(ms.PYNATIVE_MODE)
    losses, weights, step = _biased_training(ms.GRAPH_MODE, save_graphs=1, save_graphs_path=str(tmp_path))
    np.testing.assert_allclose(losses, eager[0], rtol=1e-5)
    for name, value in eager[1].items():
        np.testing.assert_allclose(weights[name], value, rtol=1e-4, atol=1e-6, err_msg=name)
    report = ms._jit.compile_report(step)[-1]
    text = _backend_ir(report)
    assert ("conv2d_bias(%3, %2, %4) {stride: [1, 1], pad_mode: 'valid', pad: [0, 0, 0, 0], dilation: [1, 1], "
            "group: 1, data_format: 'NHWC', __epilogue: ['relu']} : Float32(4, 6, 6, 4)") in text
    # The dense layer's weight gradient is under a mebibyte: it stays apart from its update (Note [Fused pairs]).
    assert report["fused_pairs"] == 1 and "matmul_apply_momentum(" not in text
    assert " conv2d(" not in text and " bias_add(" not in text
    assert re.search(r"bias_add_grad\(%\d+\) \{data_format: 'NHWC'\} : Float32\(4,\)", text)
    # x goes in, the pooled value out to flatten and its gradient back: none around the bias.
    assert text.count("transpose(") == 3
    assert " relu(" not in text and report["fused_epilogues"] == 1


class ConvBnNet(nn.Cell):
    """conv → batch_norm → relu → conv → batch_norm → add → relu: the first relu follows batch_norm's y alone."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 2, 3, pad_mode="same", has_bias=False)
        self.bn2 = nn.BatchNorm2d(2)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.dense = nn.Dense(2 * 8 * 8, 5)

    def construct(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)) + x)
        return self.dense(self.flatten(y))


def test_a_relu_after_batch_norm_runs_inside_its_kernel_and_trains_the_same(tmp_path):
    results = {}
    for flags in ("", "--disable_pass=fuse_epilogues"):
        ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags=flags, save_graphs=1,
                       save_graphs_path=str(tmp_path / ("plain" if flags else "fused")))
        ms.set_seed(9)
        net = ConvBnNet()
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                                   nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9))
        losses = [float(step(*_data(seed=i)).asnumpy()) for i in range(3)]
        params = {p.name: p.asnumpy() for p in net.get_parameters()}  # moving statistics included
        results[flags] = losses, params, ms._jit.compile_report(step)[-1]
    (losses, params, report), (plain_losses, plain_params, plain_report) = results.values()
    np.testing.assert_allclose(losses, plain_losses, rtol=1e-5)
    for name, value in plain_params.items():
        np.testing.assert_allclose(params[name], value, rtol=1e-4, atol=1e-6, err_msg=name)
    text = _backend_ir(report)
    assert report["fused_epilogues"] == 1 and plain_report["fused_epilogues"] == 0
    assert text.count("batch_norm(") == 2 and text.count("__epilogue: ['relu']") == 1
    assert "batch_norm(" in text.split("__epilogue: ['relu']")[0].rsplit("\n", 1)[1]
    # The one after the residual add runs in place right after the add (Note [In-place tails]).
    assert text.count(" relu(") == 0 and text.count("__in_place_tail: ['relu']") == 1
    assert "add(" in text.split("__in_place_tail: ['relu']")[0].rsplit("\n", 1)[1]


def test_a_float64_batch_norm_keeps_its_relu():
    """The reference batch_norm kernel (float64) applies no epilogue, so the relu stays an op."""
    rng = np.random.default_rng(3)
    x = ms.Tensor(rng.standard_normal((2, 3, 4, 4)))
    mean, var = ms.Tensor(rng.standard_normal(3)), ms.Tensor(rng.uniform(0.5, 2, 3))
    scale, shift = ms.Tensor(rng.standard_normal(3)), ms.Tensor(rng.standard_normal(3))

    def body(x):
        return ms.ops.relu(ms.ops.batch_norm(x, mean, var, scale, shift))

    expected = body(x).asnumpy()
    assert (expected == 0).any() and (expected > 0).any()
    f = ms.jit(body)
    np.testing.assert_allclose(f(x).asnumpy(), expected, rtol=1e-12)
    assert ms._jit.compile_report(f)[-1]["fused_epilogues"] == 0
