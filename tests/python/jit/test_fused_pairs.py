"""The fuse_pairs backend pass (Note [Fused pairs] in src/compiler/fusion.cc): conv2d then bias_add runs as one
conv2d_bias op (one oneDNN convolution with a bias), with a following relu as its epilogue; results and gradients
are the unfused graph's in either layout."""
import os

import numpy as np
import pytest

import msrt as ms
from msrt import nn
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
    # The reference kernel applies no epilogue: the relu stays an op after conv2d_bias.
    assert report["fused_epilogues"] == 0 and " relu(" in _backend_ir(report)
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
