"""The fuse_pairs backend pass (Note [Fused pairs] in src/compiler/fusion.cc): conv2d then bias_add runs as one
conv2d_bias op (one oneDNN convolution with a bias), with a following relu as its epilogue; results and gradients
are the unfused graph's in either layout."""
import os

import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops
from msrt.ops import _op

UNFUSED = "fuse_pairs"
NCHW_ONLY = "channels_last"


class ConvBias(nn.Cell):
    def __init__(self, cin, cout, kernel, stride, group, relu, dtype=ms.float32):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride=stride, group=group, pad_mode="pad", padding=1,
                              has_bias=True, bias_init="normal", dtype=dtype)
        self.relu = nn.ReLU() if relu else None

    def construct(self, x):
        y = self.conv(x)
        return self.relu(y) if self.relu is not None else y


def _backend_ir(report):
    return open(next(f for f in report["files"] if "_backend_" in os.path.basename(f))).read()


def _gradients(disabled, tmp_path, stride, group, relu, dtype=np.float32):
    """The output, the gradients of sum(sens * output) with respect to x, weight and bias, and the compile report
    of one GRAPH_MODE function compiled without the passes `disabled`."""
    disabled = [p for p in disabled if p]
    ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags="--disable_pass=" + ",".join(disabled) if disabled else "",
                   save_graphs=1, save_graphs_path=str(tmp_path / ("_".join(disabled) or "fused")))
    ms.set_seed(11)
    net = ConvBias(4, 6, 3, stride, group, relu, ms.float64 if dtype == np.float64 else ms.float32)
    rng = np.random.default_rng(4)
    x = ms.Tensor(rng.standard_normal((3, 4, 9, 9)).astype(dtype))
    out_shape = net(x).shape
    sens = ms.Tensor(rng.standard_normal(out_shape).astype(dtype))

    def loss(x):
        out = net(x)
        return (out * sens).sum(), out

    grad_fn = ms.jit(ms.value_and_grad(loss, grad_position=0, weights=net.trainable_params(), has_aux=True))
    (value, out), (dx, (dw, db)) = grad_fn(x)
    return ([value.asnumpy(), out.asnumpy(), dx.asnumpy(), dw.asnumpy(), db.asnumpy()],
            ms._jit.compile_report(grad_fn)[-1])


@pytest.mark.parametrize("layout", ["", NCHW_ONLY])
@pytest.mark.parametrize("stride,group", [(1, 1), (2, 1), (1, 2), (2, 2)])
@pytest.mark.parametrize("relu", [False, True])
def test_fused_forward_and_gradients_match_the_unfused_graph(tmp_path, layout, stride, group, relu):
    fused, report = _gradients([layout], tmp_path, stride, group, relu)
    plain, plain_report = _gradients([layout, UNFUSED], tmp_path, stride, group, relu)
    assert report["fused_pairs"] == 1 and plain_report["fused_pairs"] == 0
    for name, got, expected in zip(["loss", "output", "dx", "dweight", "dbias"], fused, plain):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=name)
    if relu:
        assert (fused[1] == 0).any() and (fused[1] > 0).any()  # the relu did clip
        assert report["fused_epilogues"] == 1
    text = _backend_ir(report)
    layout_name = "NCHW" if layout else "NHWC"
    epilogue = ", __epilogue: ['relu']" if relu else ""
    assert f"group: {group}, data_format: '{layout_name}'{epilogue}}} : Float32" in text
    assert "conv2d_bias(" in text and " conv2d(" not in text and " bias_add(" not in text
    assert "bias_add_grad(%" in text and " relu(" not in text
    plain_text = _backend_ir(plain_report)
    assert "conv2d_bias(" not in plain_text and " conv2d(" in plain_text and " bias_add(" in plain_text


def test_a_float64_pair_runs_the_reference_kernel(tmp_path):
    fused, report = _gradients([], tmp_path, 1, 1, True, dtype=np.float64)
    plain, plain_report = _gradients([UNFUSED], tmp_path, 1, 1, True, dtype=np.float64)
    assert report["fused_pairs"] == 1 and plain_report["fused_pairs"] == 0
    # The reference kernel applies no epilogue: the relu runs with its own kernel, in place right after conv2d_bias
    # (Note [In-place tails]).
    assert report["fused_epilogues"] == 0 and report["in_place_tails"] == 1
    assert "__in_place_tail: ['relu']" in _backend_ir(report)
    for got, expected in zip(fused, plain):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_a_pre_bias_value_read_elsewhere_is_not_fused():
    conv = nn.Conv2d(2, 3, 3, has_bias=False)
    bias = ms.Tensor(np.array([0.5, -1.0, 2.0], np.float32))
    x = ms.Tensor(np.random.default_rng(1).standard_normal((2, 2, 6, 6)).astype(np.float32))

    @ms.jit
    def f(x):
        y = conv(x)
        return _op("bias_add", y, bias), y

    with_bias, y = f(x)
    np.testing.assert_allclose(with_bias.asnumpy(), y.asnumpy() + bias.asnumpy()[None, :, None, None], rtol=1e-6)
    assert ms._jit.compile_report(f)[-1]["fused_pairs"] == 0


def test_jit_level_o0_keeps_conv2d_and_bias_add(tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": "O0"}, save_graphs=1, save_graphs_path=str(tmp_path))
    net = ConvBias(2, 3, 3, 1, 1, True)
    f = ms.jit(net.construct)
    f(ms.Tensor(np.ones((1, 2, 5, 5), np.float32)))
    report = ms._jit.compile_report(f)[-1]
    assert report["fused_pairs"] == 0 and "conv2d_bias(" not in _backend_ir(report)


def test_a_bias_on_another_axis_than_the_convolutions_channels_is_not_fused():
    """bias_add with data_format 'NHWC' on an NCHW convolution's output adds along its last axis (the width, here
    as wide as the channels): the attributes disagree, so the pair stays two ops."""
    conv = nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=False)
    bias = ms.Tensor(np.array([0.5, -1.0, 2.0], np.float32))
    x = ms.Tensor(np.random.default_rng(2).standard_normal((2, 2, 6, 5)).astype(np.float32))

    @ms.jit
    def f(x):
        return _op("bias_add", conv(x), bias, data_format="NHWC")

    ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags=f"--disable_pass={NCHW_ONLY}")
    got = f(x).asnumpy()
    np.testing.assert_allclose(got, conv(x).asnumpy() + bias.asnumpy(), rtol=1e-6)
    assert ms._jit.compile_report(f)[-1]["fused_pairs"] == 0


# --- a weight gradient's matmul and its Momentum update (matmul_apply_momentum) -------------------------------------
class _MLP(nn.Cell):
    def __init__(self, inputs=512, width=512):
        super().__init__()
        self.fc1 = nn.Dense(inputs, width)
        self.fc2 = nn.Dense(width, width)
        self.fc3 = nn.Dense(width, 5)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class _ClippedStep(nn.TrainOneStepCell):
    """A training step whose update reads the gradients clipped to a global norm."""

    def construct(self, *inputs):
        loss, grads = self._grad_fn(inputs, self.sens)
        self.optimizer(ops.clip_by_global_norm(grads, 0.5))
        return loss


def _momentum_training(tmp_path, disabled, steps=4, nesterov=False, step_cell=nn.TrainOneStepCell,
                       momentum_values=None, widths=(512, 512), **step_args):
    """Losses, parameters, moments and compile report of `steps` GRAPH_MODE O1 training steps of _MLP(*widths)
    with Momentum; momentum_values: the optimizer's momentum before each step."""
    ms.set_context(mode=ms.GRAPH_MODE, memory_optimize_level="O1", save_graphs=1,
                   save_graphs_path=str(tmp_path / (disabled or "fused")),
                   graph_kernel_flags=f"--disable_pass={disabled}" if disabled else "")
    ms.set_seed(3)
    net = _MLP(*widths)
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9, use_nesterov=nesterov)
    with_loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = step_cell(with_loss, opt, **step_args)
    step.set_train()
    rng = np.random.default_rng(6)
    x = ms.Tensor(rng.standard_normal((16, widths[0])).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 5, 16).astype(np.int32))
    losses = []
    for i in range(steps):
        if momentum_values is not None:
            opt.momentum.set_data(ms.Tensor(np.float32(momentum_values[i])))
        out = step(x, y)
        losses.append(float((out[0] if isinstance(out, tuple) else out).asnumpy()))
    state = [p.asnumpy().copy() for p in net.trainable_params()] + [m.asnumpy().copy() for m in opt.moments]
    return losses, state, ms._jit.compile_report(step)[-1]


def _assert_same_training(fused, plain):
    # Observed bit-identical on oneDNN 2.6 (AVX-512); the bound allows oneDNN's scaling of accum by momentum and
    # its addition of the product to round twice where apply_momentum's loop may round once (Note [Products into
    # the accumulation]): half an ulp of accum per step, carried through a few steps.
    np.testing.assert_allclose(fused[0], plain[0], rtol=1e-6)
    for got, expected in zip(fused[1], plain[1]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_a_weight_gradient_is_accumulated_into_the_momentum_in_place(tmp_path):
    """A dense layer's weight gradient dy^T x read only by its apply_momentum: the pair runs as one
    matmul_apply_momentum, which writes the product into the accumulation (no gradient buffer), with the unfused
    graph's results. fc1 (no input gradient) and fc2 (its input gradient dy W made first, as its weight is the
    larger) fuse, their 512 x 512 gradients 1 MiB each; fc3's weight (5 x 512) is smaller than its input
    (16 x 512), so its gradient is made before dy W
    reads the weight, and the update could not move up to the product (Note [Fused pairs]): that pair stays, as
    do the bias gradients' (reduce_sum) updates."""
    fused = _momentum_training(tmp_path, "")
    plain = _momentum_training(tmp_path, UNFUSED)
    assert fused[2]["fused_pairs"] == 2 and plain[2]["fused_pairs"] == 0
    _assert_same_training(fused, plain)
    text = _backend_ir(fused[2])
    assert text.count("matmul_apply_momentum(") == 2 and text.count(" apply_momentum(") == 4
    assert "transpose_a: True, transpose_b: False, use_nesterov: False}" in text
    assert "(5, 512)\n      # Default/optimizer-Momentum/apply_momentum" in text
    # The largest gradient (fc2's, 512 x 512 float32) no longer needs bytes of its own in the plan.
    assert fused[2]["planned_bytes"] <= plain[2]["planned_bytes"] - 3 * 512 * 512


def test_a_gradient_under_a_mebibyte_keeps_its_pair(tmp_path):
    """An update's fused kernel pays only by the gradient buffer it removes (Note [Fused pairs]): the same
    network with 64-wide layers (16 KiB gradients) keeps every matmul and apply_momentum apart."""
    fused = _momentum_training(tmp_path, "", widths=(40, 64))
    assert fused[2]["fused_pairs"] == 0 and "matmul_apply_momentum(" not in _backend_ir(fused[2])
    _assert_same_training(fused, _momentum_training(tmp_path, UNFUSED, widths=(40, 64)))


def test_a_changed_or_zero_momentum_gives_the_unfused_results(tmp_path):
    """The momentum is the sum post-op's scale, fixed in a oneDNN primitive: a new value takes a new primitive;
    0 runs the product apart (Note [Products into the accumulation])."""
    values = [0.9, 0.5, 0.0, 0.9]
    fused = _momentum_training(tmp_path, "", momentum_values=values)
    plain = _momentum_training(tmp_path, UNFUSED, momentum_values=values)
    assert fused[2]["fused_pairs"] == 2
    _assert_same_training(fused, plain)


def test_nesterov_momentum_keeps_the_gradient(tmp_path):
    fused = _momentum_training(tmp_path, "", nesterov=True)
    assert fused[2]["fused_pairs"] == 0 and "matmul_apply_momentum(" not in _backend_ir(fused[2])
    _assert_same_training(fused, _momentum_training(tmp_path, UNFUSED, nesterov=True))


@pytest.mark.parametrize("step_cell,step_args", [(_ClippedStep, {}), (nn.TrainOneStepCell, {"return_grad": True})],
                         ids=["clipped", "returned"])
def test_a_gradient_read_elsewhere_is_not_fused(tmp_path, step_cell, step_args):
    """The gradients clipped to a global norm first (their norm reads them), or returned from the step: the
    matmul's product has another reader than apply_momentum, so each pair stays."""
    fused = _momentum_training(tmp_path, "", step_cell=step_cell, **step_args)
    assert fused[2]["fused_pairs"] == 0 and "matmul_apply_momentum(" not in _backend_ir(fused[2])
    _assert_same_training(fused, _momentum_training(tmp_path, UNFUSED, step_cell=step_cell, **step_args))
