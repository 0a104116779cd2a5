"""Loss scaling: nn.TrainOneStepWithLossScaleCell with a Tensor or an update
cell, DynamicLossScaleUpdateCell / FixedLossScaleUpdateCell, the loss scale
managers, Model(loss_scale_manager=...), and O2 training against float32."""
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import amp, nn, ops
from msrt.train import Model

MODES = [ms.PYNATIVE_MODE, ms.GRAPH_MODE]


def _step(scale_sense, lr=0.1, net=None):
    ms.set_seed(3)
    net = net if net is not None else nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), lr)
    return net, nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), opt, scale_sense)


def _xy(value=1.0):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 4)) * value).astype(np.float32)
    return ms.Tensor(x), ms.Tensor(np.zeros((2, 3), np.float32))


def _weights(net):
    return [p.asnumpy().copy() for p in net.trainable_params()]


@pytest.mark.parametrize("mode", MODES)
def test_overflow_skips_the_step_and_lowers_the_scale(mode):
    ms.set_context(mode=mode)
    net, step = _step(nn.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 1000))
    x, y = _xy()
    loss, overflow, scale = step(x, y)
    assert not bool(overflow.asnumpy()) and float(scale.asnumpy()) == 1024
    before = _weights(net)
    big, _ = _xy(1e30)  # squared in the loss: inf in float32
    loss, overflow, scale = step(big, y)
    assert bool(overflow.asnumpy()) and float(scale.asnumpy()) == 1024  # the scale the step used
    for a, b in zip(before, _weights(net)):
        np.testing.assert_array_equal(a, b)  # no update
    assert float(step.scale_sense.asnumpy()) == 512  # lowered for the next step
    loss, overflow, scale = step(x, y)
    assert not bool(overflow.asnumpy()) and float(scale.asnumpy()) == 512
    assert any(not np.array_equal(a, b) for a, b in zip(before, _weights(net)))


@pytest.mark.parametrize("mode", MODES)
def test_scale_grows_after_scale_window_good_steps_and_matches_the_manager(mode):
    ms.set_context(mode=mode)
    manager = amp.DynamicLossScaleManager(init_loss_scale=64, scale_factor=2, scale_window=3)
    cell = manager.get_update_cell()
    assert isinstance(cell, nn.DynamicLossScaleUpdateCell) and cell.get_loss_scale() == 64
    scale = ms.Parameter(ms.Tensor(64.0, ms.float32), name="scale", requires_grad=False)
    flags = [False, False, False, False, True, False, False, False, False, False, False, True, True, False]
    device, host = [], []
    for flag in flags:
        out = cell(scale, ms.Tensor(flag))
        assert bool(out.asnumpy()) == flag
        device.append(float(scale.asnumpy()))
        manager.update_loss_scale(flag)
        host.append(float(manager.get_loss_scale()))
    assert device == host
    assert device[:5] == [64, 64, 128, 128, 64]  # grows on the 3rd good step, halves on overflow


def test_scale_never_goes_below_one_nor_to_inf():
    cell = nn.DynamicLossScaleUpdateCell(2.0, 2, 1)
    scale = ms.Parameter(ms.Tensor(2.0, ms.float32), name="s", requires_grad=False)
    for _ in range(3):
        cell(scale, ms.Tensor(True))
    assert float(scale.asnumpy()) == 1.0
    scale.set_data(ms.Tensor(np.float32(3e38)))
    cell(scale, ms.Tensor(False))
    assert float(scale.asnumpy()) == np.float32(3e38)  # doubling would overflow float32: kept


@pytest.mark.parametrize("mode", MODES)
def test_tensor_scale_sense_is_fixed_and_gradients_are_unscaled(mode):
    ms.set_context(mode=mode)
    net, step = _step(ms.Tensor(np.float32(256.0)))
    ms.set_seed(3)
    ref = nn.Dense(4, 3)
    ref_step = nn.TrainOneStepCell(nn.WithLossCell(ref, nn.MSELoss()), nn.SGD(ref.trainable_params(), 0.1))
    x, y = _xy()
    for _ in range(3):
        loss, overflow, scale = step(x, y)
        ref_loss = ref_step(x, y)
        assert float(scale.asnumpy()) == 256 and not bool(overflow.asnumpy())
        np.testing.assert_allclose(loss.asnumpy(), ref_loss.asnumpy(), rtol=1e-6)
    for a, b in zip(_weights(net), _weights(ref)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    step.set_sense_scale(ms.Tensor(np.float32(8.0)))
    assert float(step(x, y)[2].asnumpy()) == 8
    big, _ = _xy(1e30)
    before = _weights(net)
    assert bool(step(big, y)[1].asnumpy())
    assert all(np.array_equal(a, b) for a, b in zip(before, _weights(net)))
    assert float(step.scale_sense.asnumpy()) == 8  # a Tensor scale is not adjusted


def test_train_one_step_with_loss_scale_errors():
    net = nn.Dense(4, 3)
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    opt = nn.SGD(net.trainable_params(), 0.1)
    with pytest.raises(TypeError, match="scale_sense"):
        nn.TrainOneStepWithLossScaleCell(loss_net, opt, 128.0)
    with pytest.raises(ValueError, match=r"\(1,\) or \(\)"):
        nn.TrainOneStepWithLossScaleCell(loss_net, opt, ms.Tensor(np.ones(2, np.float32)))
    step = nn.TrainOneStepWithLossScaleCell(loss_net, opt, ms.Tensor(np.ones(1, np.float32)))
    with pytest.raises(TypeError, match="Tensor"):
        step.set_sense_scale(2.0)
    with pytest.raises(ValueError, match="scale_window"):
        nn.DynamicLossScaleUpdateCell(8.0, 2, 0)
    with pytest.raises(TypeError, match="scale_window"):
        nn.DynamicLossScaleUpdateCell(8.0, 2, 1.5)
    with pytest.raises(ValueError, match="loss_scale"):
        amp.FixedLossScaleManager(0.5)
    with pytest.raises(TypeError, match="drop_overflow_update"):
        amp.FixedLossScaleManager(8.0, drop_overflow_update="yes")
    with pytest.raises(ValueError, match="init_loss_scale"):
        amp.DynamicLossScaleManager(init_loss_scale=0.5)
    with pytest.raises(ValueError, match="scale_window"):
        amp.DynamicLossScaleManager(scale_window=0)
    with pytest.raises(TypeError, match="scale_window"):
        amp.DynamicLossScaleManager(scale_window=2.0)
    with pytest.raises(ValueError, match="scale_factor"):
        amp.DynamicLossScaleManager(scale_factor=0)
    with pytest.raises(ValueError, match="finite"):
        amp.FixedLossScaleManager(float("nan"))
    with pytest.raises(ValueError, match="finite"):
        nn.DynamicLossScaleUpdateCell(float("inf"), 2, 10)
    with pytest.raises(TypeError, match="loss_scale_manager"):
        Model(net, nn.MSELoss(), opt, loss_scale_manager=128)
    with pytest.raises(TypeError, match="loss_scale_manager"):
        amp.build_train_network(net, opt, nn.MSELoss(), level="O2", loss_scale_manager="dynamic")
    assert ms.FixedLossScaleManager is amp.FixedLossScaleManager
    assert ms.DynamicLossScaleManager is ms.train.DynamicLossScaleManager


def test_fixed_manager_with_and_without_dropping_overflow():
    net = nn.Dense(4, 3)
    opt = nn.SGD(net.trainable_params(), 0.1)
    dropping = amp.FixedLossScaleManager(64.0)
    assert dropping.get_drop_overflow_update() and dropping.get_loss_scale() == 64.0
    step = amp.build_train_network(net, opt, nn.MSELoss(), level="O0", loss_scale_manager=dropping)
    assert isinstance(step, nn.TrainOneStepWithLossScaleCell)
    assert isinstance(step.loss_scaling_manager, nn.FixedLossScaleUpdateCell)
    big, y = _xy(1e30)
    before = _weights(net)
    loss, overflow, scale = step(big, y)
    assert bool(overflow.asnumpy()) and float(scale.asnumpy()) == 64
    assert all(np.array_equal(a, b) for a, b in zip(before, _weights(net)))
    assert float(step.scale_sense.asnumpy()) == 64

    # Not dropping: the loss is scaled by 64 and the optimizer (loss_scale=64) undoes it.
    ms.set_seed(5)
    scaled = nn.Dense(4, 3)
    ms.set_seed(5)
    plain = nn.Dense(4, 3)
    keep = amp.FixedLossScaleManager(64.0, drop_overflow_update=False)
    assert keep.get_update_cell() is None
    step = amp.build_train_network(scaled, nn.SGD(scaled.trainable_params(), 0.1, loss_scale=64.0), nn.MSELoss(),
                                   level="O0", loss_scale_manager=keep)
    assert type(step) is nn.TrainOneStepCell
    ref = nn.TrainOneStepCell(nn.WithLossCell(plain, nn.MSELoss()), nn.SGD(plain.trainable_params(), 0.1))
    x, y = _xy()
    for _ in range(3):
        step(x, y)
        ref(x, y)
    for a, b in zip(_weights(scaled), _weights(plain)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(8, 16)
        self.bn = nn.BatchNorm1d(16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(16, 4)

    def construct(self, x):
        return self.fc2(self.relu(self.bn(self.fc1(x))))


def _regression(steps):
    rng = np.random.default_rng(1)
    proj = rng.standard_normal((8, 4)).astype(np.float32)
    rows = []
    for _ in range(steps):
        x = rng.standard_normal((16, 8)).astype(np.float32)
        rows.append((ms.Tensor(x), ms.Tensor(np.tanh(x @ proj).astype(np.float32))))
    return rows


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [ms.float16, ms.bfloat16])
def test_o2_training_matches_float32_training(mode, dtype):
    ms.set_context(mode=mode)
    data = _regression(10)
    results = {}
    for level in ("O0", "O2"):
        ms.set_seed(7)
        net = MLP()
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
        manager = amp.DynamicLossScaleManager(init_loss_scale=2.0 ** 10, scale_factor=2, scale_window=1000)
        step = amp.build_train_network(net, opt, nn.MSELoss(), level=level, dtype=dtype,
                                       loss_scale_manager=manager if level == "O2" else None)
        net.set_train()
        losses = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # low-precision kernels computed through float32
            for x, y in data:
                out = step(x, y)
                if level == "O2":
                    out, overflow, _ = out
                    assert not bool(overflow.asnumpy())
                losses.append(float(out.asnumpy()))
        if level == "O2":
            assert net.fc1.weight.dtype == ms.float32  # master weights
            assert step.network._backbone._backbone.fc1._amp_dtype == dtype
        results[level] = (losses, _weights(net))
    # float16 keeps ~3 decimal digits, bfloat16 ~2.
    rtol = 2e-2 if dtype == ms.float16 else 8e-2
    np.testing.assert_allclose(results["O2"][0], results["O0"][0], rtol=rtol, atol=rtol)
    for a, b in zip(results["O2"][1], results["O0"][1]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    assert results["O0"][0][-1] < 0.8 * results["O0"][0][0]


def test_model_with_loss_scale_manager_trains():
    ms.set_seed(2)
    net = MLP()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    manager = amp.DynamicLossScaleManager(init_loss_scale=2.0 ** 24, scale_factor=2, scale_window=4)
    model = Model(net, nn.MSELoss(), opt, amp_level="O3", loss_scale_manager=manager)
    assert isinstance(model.train_network, nn.TrainOneStepWithLossScaleCell)
    outs = []

    class Record(ms.train.Callback):
        def on_train_step_end(self, run_context):
            outs.append(run_context.original_args().net_outputs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.train(3, _regression(10), callbacks=[Record()])
    overflows = [bool(o[1].asnumpy()) for o in outs]
    scales = [float(o[2].asnumpy()) for o in outs]
    assert overflows[0] and scales[0] == 2.0 ** 24  # 2**24 overflows float16 gradients here
    for i in range(1, len(outs)):
        if overflows[i - 1]:
            assert scales[i] == scales[i - 1] / 2
    assert not overflows[-1]
    assert net.bn.gamma.dtype == ms.float32


def test_a_subclass_with_its_own_construct_uses_mindspores_helpers():
    class MyStep(nn.TrainOneStepWithLossScaleCell):
        def construct(self, x, y):
            weights = self.weights
            loss = self.network(x, y)
            scaling_sens = self.scale_sense
            status, scaling_sens = self.start_overflow_check(loss, scaling_sens)
            sens = ops.ones_like(loss) * ops.cast(scaling_sens, loss.dtype)
            grads = self.grad(self.network, weights)(x, y, sens)
            grads = tuple(g / scaling_sens for g in grads)
            cond = self.get_overflow_status(status, grads)
            overflow = self.process_loss_scale(cond)
            if not overflow:
                self.optimizer(grads)
            return loss, cond, scaling_sens

    ms.set_seed(3)
    net = nn.Dense(4, 3)
    step = MyStep(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1),
                  nn.DynamicLossScaleUpdateCell(16.0, 2, 100))
    _, mine = _step(nn.DynamicLossScaleUpdateCell(16.0, 2, 100))
    x, y = _xy()
    for _ in range(3):
        a, b = step(x, y), mine(x, y)
        np.testing.assert_allclose(a[0].asnumpy(), b[0].asnumpy(), rtol=1e-6)
    big, _ = _xy(1e30)
    loss, cond, _ = step(big, y)
    assert bool(cond.asnumpy()) and float(step.scale_sense.asnumpy()) == 8
