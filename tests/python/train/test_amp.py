"""Mixed precision: ms.amp and Model(amp_level=...) compute the casted cells
in float16/bfloat16 (BatchNorm in float32 at O2), keep float32 master
weights and a float32 loss, and still train, in both modes."""
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import amp, nn
from msrt.train import Callback, Model


class RecConv(nn.Conv2d):
    def construct(self, x):
        self.seen.append((x.dtype, self.weight.dtype))
        return super().construct(x)


class RecBN(nn.BatchNorm2d):
    def construct(self, x):
        self.seen.append((x.dtype, self.gamma.dtype))
        return super().construct(x)


class RecDense(nn.Dense):
    def construct(self, x):
        self.seen.append((x.dtype, self.weight.dtype))
        return super().construct(x)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = RecConv(1, 4, 3, pad_mode="valid")
        self.bn = RecBN(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = RecDense(4 * 6 * 6, 3)
        for cell in (self.conv, self.bn, self.fc):
            cell.seen = []

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv(x)))))


def _data(batches=8, batch=16):
    rng = np.random.default_rng(0)
    proj = rng.standard_normal((64, 3)).astype(np.float32)
    rows = []
    for _ in range(batches):
        x = rng.standard_normal((batch, 1, 8, 8)).astype(np.float32)
        y = np.argmax(x.reshape(batch, -1) @ proj, axis=1).astype(np.int32)
        rows.append((ms.Tensor(x), ms.Tensor(y)))
    return rows


class Losses(Callback):
    def __init__(self):
        self.values = []
        self.overflows = []
        self.scales = []

    def on_train_step_end(self, run_context):
        out = run_context.original_args().net_outputs
        if isinstance(out, tuple):  # TrainOneStepWithLossScaleCell: (loss, overflow, scale)
            out, overflow, scale = out
            self.overflows.append(bool(overflow.asnumpy()))
            self.scales.append(float(scale.asnumpy()))
        self.values.append(float(out.asnumpy()))


def _train(level, epochs=6, losses=None, **model_kwargs):
    ms.set_seed(1)
    net = Net()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    model = Model(net, loss, opt, amp_level=level, **model_kwargs)
    losses = Losses() if losses is None else losses
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 kernels computed through float32
        model.train(epochs, _data(), callbacks=[losses])
    if ms.get_context("mode") == ms.GRAPH_MODE:
        step = model.train_network
        compiled = step._scaled if isinstance(step, nn.TrainOneStepWithLossScaleCell) else step
        assert ms._jit.compile_report(compiled), "the training step was not compiled"
    return net, losses.values


def _assert_converges(values):
    first, last = np.mean(values[:8]), np.mean(values[-8:])
    assert np.isfinite(values).all() and last < 0.7 * first, (first, last)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_o2_casts_conv_dense_keeps_batchnorm_and_master_weights_float32(mode):
    ms.set_context(mode=mode)
    losses = Losses()
    net, values = _train("O2", losses=losses)
    assert net.conv.seen[-1] == (ms.float16, ms.float16)
    assert net.fc.seen[-1] == (ms.float16, ms.float16)
    assert net.bn.seen[-1] == (ms.float32, ms.float32)
    assert all(p.dtype == ms.float32 for p in net.trainable_params())
    # O2 trains with MindSpore's default DynamicLossScaleManager: 2**24 overflows float16, so the first steps
    # are dropped and the scale halves until the gradients fit.
    assert losses.scales[0] == 2.0 ** 24 and losses.overflows[0]
    first_ok = losses.overflows.index(False)
    assert all(losses.overflows[:first_ok]) and losses.scales[first_ok] == 2.0 ** (24 - first_ok)
    _assert_converges(values)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_o3_casts_everything(mode):
    ms.set_context(mode=mode)
    net, values = _train("O3")
    assert net.bn.seen[-1] == (ms.float16, ms.float16)
    assert net.bn.moving_mean.dtype == ms.float32
    assert float(np.abs(net.bn.moving_mean.asnumpy()).sum()) > 0  # running statistics were updated
    _assert_converges(values)


def test_o0_and_o1():
    net, values = _train("O0", epochs=2)
    assert net.conv.seen[-1] == (ms.float32, ms.float32)
    net = Net()
    amp.auto_mixed_precision(net, "O1")
    out = net(_data(1)[0][0])
    assert net.conv.seen[-1] == (ms.float16, ms.float16) and net.bn.seen[-1] == (ms.float32, ms.float32)
    assert out.dtype == ms.float32  # white-listed cells hand float32 on


def test_bfloat16_network_output_and_gradients():
    inner = Net()
    net = amp.auto_mixed_precision(inner, "O3", dtype=ms.bfloat16)
    x, y = _data(1)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = net(x)
        grads = ms.grad(lambda a: net(a).sum(), grad_position=None, weights=net.trainable_params())(x)
    # O3 computes in bfloat16 and casts the network's output back to float32, as MindSpore does.
    assert out.dtype == ms.float32 and inner.conv.seen[-1] == (ms.bfloat16, ms.bfloat16)
    assert inner.fc.seen[-1] == (ms.bfloat16, ms.bfloat16)
    assert all(g.dtype == ms.float32 and np.isfinite(g.asnumpy()).all() for g in grads)


def test_enable_auto_mixed_precision_trains_as_o2():
    ms.context.set_profile("r1.0")
    ms.set_context(enable_auto_mixed_precision=True)
    net, _ = _train("O0", epochs=1)
    assert net.conv.seen[-1] == (ms.float16, ms.float16) and net.bn.seen[-1] == (ms.float32, ms.float32)


def test_build_train_network_and_errors():
    net = Net()
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    step = amp.build_train_network(net, opt, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                                   level="O2")
    x, y = _data(1)[0]
    assert isinstance(step, nn.TrainOneStepWithLossScaleCell)  # O2's default DynamicLossScaleManager
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss, overflow, scale = step(x, y)
    assert loss.dtype == ms.float32 and net.fc.seen[-1][0] == ms.float16
    assert bool(overflow.asnumpy()) and float(scale.asnumpy()) == 2.0 ** 24
    with pytest.raises(ValueError, match="amp_level"):
        amp.auto_mixed_precision(Net(), "O4")
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        amp.auto_mixed_precision(Net(), "O2", dtype=ms.float64)
    with pytest.raises(TypeError, match="Cell"):
        amp.auto_mixed_precision("net", "O2")
    with pytest.raises(ValueError, match="dst_type"):
        Net().to_float(ms.int32)


def test_loss_scalers_and_all_finite():
    assert bool(amp.all_finite((ms.Tensor(np.ones(3, np.float32)), ms.Tensor(np.ones(2, np.float16)))).asnumpy())
    assert not bool(amp.all_finite([ms.Tensor(np.array([1.0, np.inf], np.float32))]).asnumpy())
    assert not bool(amp.all_finite(ms.Tensor(np.array([np.nan], np.float16))).asnumpy())
    static = amp.StaticLossScaler(8)
    np.testing.assert_allclose(static.scale(ms.Tensor(np.float32(2))).asnumpy(), 16)
    np.testing.assert_allclose(static.unscale((ms.Tensor(np.float32(16)),))[0].asnumpy(), 2)
    dyn = amp.DynamicLossScaler(1024, 2, 2)
    ok, bad = ms.Tensor(True), ms.Tensor(False)
    dyn.adjust(ok)
    assert float(dyn.scale_value.asnumpy()) == 1024
    dyn.adjust(ok)
    assert float(dyn.scale_value.asnumpy()) == 2048 and int(dyn.counter.asnumpy()) == 0
    dyn.adjust(bad)
    assert float(dyn.scale_value.asnumpy()) == 1024
    with pytest.raises(ValueError, match="scale_value"):
        amp.StaticLossScaler(0)
    with pytest.raises(ValueError, match="finite"):
        amp.DynamicLossScaler(float("inf"), 2, 2)
    with pytest.raises(ValueError, match="scale_window"):
        amp.DynamicLossScaler(8, 2, 0)


def test_lists_and_output_casts_as_mindspore_defines_them():
    names = [c.__name__ for c in amp.get_white_list()]
    assert "Dense" in names and "Conv2d" in names
    assert all(n in amp._WHITE_LIST_NAMES for n in names)
    black = amp.get_black_list()
    assert nn.BatchNorm1d in black and nn.BatchNorm2d in black
    black.append(nn.Dense)  # a copy
    assert nn.Dense not in amp.get_black_list()
    x = _data(1)[0][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for level, out_dtype in (("O1", ms.float32), ("O2", ms.float32), ("O3", ms.float32)):
            inner = Net()
            net = amp.auto_mixed_precision(inner, level)
            assert net(x).dtype == out_dtype
            conv_in = ms.float16 if level != "O0" else ms.float32
            bn_in = ms.float16 if level == "O3" else ms.float32
            assert inner.conv.seen[-1][0] == conv_in and inner.bn.seen[-1][0] == bn_in, level
        inner = Net()
        assert amp.auto_mixed_precision(inner, "O0") is inner
        assert inner(x).dtype == ms.float32 and inner.conv.seen[-1][0] == ms.float32


def test_o1_casts_white_listed_primitives_held_by_cells():
    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.matmul = ms.ops.MatMul(transpose_b=True)
            self.w = ms.Parameter(ms.Tensor(np.random.default_rng(2).standard_normal((5, 7)).astype(np.float32)),
                                  name="w")

        def construct(self, x):
            return self.matmul(x, self.w)

    def is_float16(a):
        return np.array_equal(a, a.astype(np.float16).astype(np.float32))

    x = np.random.default_rng(3).standard_normal((4, 7)).astype(np.float32)
    head = Head()
    ref = head(ms.Tensor(x)).asnumpy()
    assert not is_float16(ref)
    amp.auto_mixed_precision(head, "O1")
    assert head.matmul.name == "MatMul"  # the primitive's attributes are still there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = head(ms.Tensor(x))
        grads = ms.grad(lambda a: head(a).sum(), grad_position=None, weights=head.trainable_params())(ms.Tensor(x))
    assert out.dtype == ms.float32 and is_float16(out.asnumpy())  # computed in float16, handed on as float32
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=2e-2, atol=2e-2)
    assert grads[0].dtype == ms.float32 and head.w.dtype == ms.float32


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_transformer_encoder_under_o2_computes_attention_in_the_amp_dtype(mode, dtype):
    # MultiheadAttention reads out_proj's weight and bias itself (not through out_proj's construct): under amp
    # they are cast with the attention's own parameters, so the fused op gets one dtype and trains.
    ms.set_context(mode=mode)
    ms.set_seed(3)
    layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu", batch_first=True)
    net = nn.SequentialCell([nn.TransformerEncoder(layer, 2), nn.Flatten(), nn.Dense(5 * 16, 3)])
    seen = []
    attn = net[0].layers[0].self_attn
    attn.register_forward_hook(lambda cell, inputs, outputs: seen.append(outputs[0].dtype))
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = amp.build_train_network(net, opt, loss, level="O2", dtype=dtype, loss_scale_manager=None)
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((8, 5, 16)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 3, 8).astype(np.int32))
    values = [float(step(x, y).asnumpy()) for _ in range(30)]
    if mode == ms.PYNATIVE_MODE:
        assert seen and seen[-1] == dtype
    assert attn.out_proj.weight.dtype == ms.float32  # master weights stay float32
    assert np.isfinite(values).all() and np.mean(values[-5:]) < 0.7 * np.mean(values[:5]), values
