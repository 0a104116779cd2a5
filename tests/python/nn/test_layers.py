"""Layers against NumPy references: shapes, defaults, names, initial values."""
import math

import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn
from msrt.common.initializer import Normal, One

from . import nnref


def t(a, dtype=np.float32):
    return Tensor(np.asarray(a, dtype=dtype))


@pytest.fixture(autouse=True)
def _seed():
    ms.set_seed(0)


# --- Dense -----------------------------------------------------------------------
def test_dense_shapes_names_and_reference():
    net = nn.Dense(5, 3)
    assert tuple(net.weight.shape) == (3, 5) and tuple(net.bias.shape) == (3,)
    assert net.weight.name == "weight" and net.bias.name == "bias"
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    expected = x @ net.weight.asnumpy().T + net.bias.asnumpy()
    np.testing.assert_allclose(net(t(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_dense_default_init_is_he_uniform_sqrt5_and_bias_uniform():
    fan_in = 400
    net = nn.Dense(fan_in, 300)
    w = net.weight.asnumpy()
    # HeUniform(negative_slope=sqrt(5)) bound: sqrt(6 / ((1 + 5) * fan_in)) = 1 / sqrt(fan_in)
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound + 1e-7
    assert np.abs(w).max() > 0.9 * bound
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.05)
    b = net.bias.asnumpy()
    assert np.abs(b).max() <= bound + 1e-7


def test_dense_without_bias_activation_and_3d_input():
    net = nn.Dense(4, 2, weight_init=One(), has_bias=False, activation="relu")
    assert net.bias is None
    assert [p.name for p in net.get_parameters()] == ["weight"]
    x = np.array([[[1, -2, 0.5, 0.25]], [[-1, -1, -1, -1]]], np.float32)  # (2, 1, 4)
    out = net(t(x)).asnumpy()
    assert out.shape == (2, 1, 2)
    np.testing.assert_allclose(out, np.maximum(x.sum(-1, keepdims=True), 0).repeat(2, -1))


def test_dense_normal_init_and_errors():
    net = nn.Dense(400, 120, weight_init=Normal(0.02))
    np.testing.assert_allclose(net.weight.asnumpy().std(), 0.02, rtol=0.05)
    with pytest.raises(ValueError):
        nn.Dense(0, 3)
    with pytest.raises(TypeError):
        nn.Dense(2.5, 3)
    with pytest.raises(ValueError):
        nn.Dense(2, 3, weight_init=t(np.zeros((2, 3))))


# --- Conv2d ------------------------------------------------------------------------
@pytest.mark.parametrize("pad_mode,padding,stride,dilation,group", [
    ("valid", 0, 1, 1, 1),
    ("same", 0, 1, 1, 1),
    ("same", 0, 2, 1, 1),
    ("pad", 1, 1, 1, 1),
    ("pad", (1, 2, 0, 1), 2, 1, 1),
    ("valid", 0, 1, 2, 1),
    ("same", 0, 1, 1, 2),
])
def test_conv2d_matches_numpy(pad_mode, padding, stride, dilation, group):
    rng = np.random.default_rng(2)
    net = nn.Conv2d(4, 6, 3, stride=stride, pad_mode=pad_mode, padding=padding, dilation=dilation, group=group,
                    has_bias=True)
    x = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
    pad = padding if isinstance(padding, tuple) else (padding,) * 4
    expected = nnref.conv2d(x.astype(np.float64), net.weight.asnumpy().astype(np.float64), (stride, stride), pad_mode,
                            pad, (dilation, dilation), group) + net.bias.asnumpy().reshape(1, -1, 1, 1)
    out = net(t(x)).asnumpy()
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_conv2d_defaults_names_and_init():
    net = nn.Conv2d(3, 8, 5)
    assert net.pad_mode == "same" and net.stride == (1, 1) and not net.has_bias and net.bias is None
    assert tuple(net.weight.shape) == (8, 3, 5, 5)
    assert [name for name, _ in net.parameters_and_names()] == ["weight"]
    bound = 1 / math.sqrt(3 * 25)
    w = net.weight.asnumpy()
    assert np.abs(w).max() <= bound + 1e-7 and np.abs(w).max() > 0.8 * bound
    biased = nn.Conv2d(3, 8, (3, 5), has_bias=True)
    assert tuple(biased.weight.shape) == (8, 3, 3, 5)
    assert np.abs(biased.bias.asnumpy()).max() <= 1 / math.sqrt(45) + 1e-7
    assert nn.Conv2d(3, 8, 3, pad_mode="same")(t(np.zeros((1, 3, 7, 7)))).shape == (1, 8, 7, 7)


def test_conv2d_errors():
    with pytest.raises(ValueError, match="padding"):
        nn.Conv2d(1, 1, 3, pad_mode="same", padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(1, 1, 3, pad_mode="full")
    with pytest.raises(ValueError, match="group"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="'NCHW' or 'NHWC', but got 'CHWN'"):
        nn.Conv2d(1, 1, 3, data_format="CHWN")


@pytest.mark.parametrize("has_bias", [False, True])
def test_conv2d_and_pooling_take_channels_last_input(has_bias):
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 8)).astype(np.float32)
    ms.set_seed(1)
    plain = nn.SequentialCell(nn.Conv2d(3, 5, 3, has_bias=has_bias), nn.MaxPool2d(2, 2), nn.AvgPool2d(2, 1))
    ms.set_seed(1)
    nhwc = nn.SequentialCell(nn.Conv2d(3, 5, 3, has_bias=has_bias, data_format="NHWC"),
                             nn.MaxPool2d(2, 2, data_format="NHWC"), nn.AvgPool2d(2, 1, data_format="NHWC"))
    expected = plain(t(x)).asnumpy()
    got = nhwc(t(np.ascontiguousarray(x.transpose(0, 2, 3, 1)))).asnumpy()
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), expected, rtol=1e-5, atol=1e-6)


# --- pooling -------------------------------------------------------------------------
@pytest.mark.parametrize("kernel,stride,pad_mode", [(2, 2, "valid"), (3, 1, "valid"), (3, 2, "same"), (2, 2, "SAME")])
def test_max_pool_matches_numpy(kernel, stride, pad_mode):
    x = np.random.default_rng(3).standard_normal((2, 3, 7, 6)).astype(np.float32)
    out = nn.MaxPool2d(kernel, stride, pad_mode)(t(x)).asnumpy()
    np.testing.assert_allclose(out, nnref.pool2d(x, (kernel, kernel), (stride, stride), pad_mode.lower(), "max"),
                               rtol=1e-6)


def test_avg_pool_matches_numpy_and_defaults():
    x = np.random.default_rng(4).standard_normal((2, 3, 6, 6)).astype(np.float32)
    out = nn.AvgPool2d(kernel_size=2, stride=2)(t(x)).asnumpy()
    np.testing.assert_allclose(out, nnref.pool2d(x, (2, 2), (2, 2), "valid", "avg"), rtol=1e-5, atol=1e-6)
    pool = nn.MaxPool2d()
    assert pool.kernel_size == (1, 1) and pool.stride == (1, 1) and pool.pad_mode == "VALID"
    # Unbatched (C, H, W) input.
    assert nn.MaxPool2d(2, 2)(t(x[0])).shape == (3, 3, 3)


# --- activations -------------------------------------------------------------------------
ACTIVATIONS = [
    (nn.ReLU, lambda x: np.maximum(x, 0)),
    (nn.ReLU6, lambda x: np.clip(x, 0, 6)),
    (nn.Sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh, np.tanh),
    (nn.SiLU, lambda x: x / (1 + np.exp(-x))),
    (nn.GELU, lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.Softmax, nnref.softmax),
    (nn.LogSoftmax, nnref.log_softmax),
]


@pytest.mark.parametrize("cls,ref", ACTIVATIONS, ids=[c.__name__ for c, _ in ACTIVATIONS])
def test_activations(cls, ref):
    x = np.linspace(-8, 8, 24, dtype=np.float32).reshape(4, 6)
    np.testing.assert_allclose(cls()(t(x)).asnumpy(), ref(x.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_gelu_erf_softmax_axis_and_get_activation():
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(nn.GELU(approximate=False)(t(x)).asnumpy(), 0.5 * x * (1 + erf(x / math.sqrt(2))),
                               rtol=1e-4, atol=1e-5)
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(nn.Softmax(axis=0)(t(y)).asnumpy(), nnref.softmax(y, 0), rtol=1e-5)
    assert isinstance(nn.get_activation("relu"), nn.ReLU)
    assert nn.get_activation(None) is None
    with pytest.raises(KeyError):
        nn.get_activation("nope")
    np.testing.assert_allclose(nn.LeakyReLU(0.1)(t(x)).asnumpy(), np.where(x > 0, x, 0.1 * x), rtol=1e-6)


# --- Flatten, Identity, Dropout -----------------------------------------------------------------
def test_flatten_and_identity():
    x = t(np.arange(24).reshape(2, 3, 4))
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(start_dim=0)(x).shape == (24,)
    assert nn.Flatten(1, 1)(x).shape == (2, 3, 4)
    np.testing.assert_array_equal(nn.Flatten()(x).asnumpy(), np.arange(24).reshape(2, 12))
    assert nn.Identity()(x) is x


def test_dropout_training_and_eval():
    drop = nn.Dropout(p=0.25)
    assert drop.keep_prob == 0.75 and not drop.training
    x = np.ones((64, 64), np.float32)
    np.testing.assert_array_equal(drop(t(x)).asnumpy(), x)  # eval mode: identity
    drop.set_train()
    out = drop(t(x)).asnumpy()
    assert set(np.unique(out)).issubset({0.0, np.float32(1 / 0.75)})
    assert 0.2 < (out == 0).mean() < 0.3
    assert nn.Dropout().p == 0.5
    with pytest.warns(Warning, match="keep_prob"):
        assert nn.Dropout(keep_prob=0.9).p == pytest.approx(0.1)
    with pytest.raises(ValueError):
        nn.Dropout(p=1.0)
    with pytest.raises(ValueError):
        nn.Dropout(keep_prob=0.0)
    nn.Dropout(p=0.0).set_train()  # p=0 is the identity even while training


def test_dropout_is_reproducible_with_seed():
    drop = nn.Dropout(p=0.5).set_train()
    x = t(np.ones((8, 8)))
    ms.set_seed(7)
    a = drop(x).asnumpy()
    ms.set_seed(7)
    b = drop(x).asnumpy()
    np.testing.assert_array_equal(a, b)


# --- BatchNorm -------------------------------------------------------------------------------
def test_batchnorm2d_training_updates_running_stats():
    bn = nn.BatchNorm2d(3, momentum=0.9)
    names = [n for n, _ in bn.parameters_and_names()]
    assert names == ["moving_mean", "moving_variance", "gamma", "beta"]
    assert [p.name for p in bn.get_parameters()] == ["mean", "variance", "gamma", "beta"]
    assert [p.name for p in bn.trainable_params()] == ["gamma", "beta"]
    x = np.random.default_rng(5).standard_normal((4, 3, 5, 5)).astype(np.float32) * 2 + 1
    bn.set_train()
    y = bn(t(x)).asnumpy()
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    expected = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
    unbiased = x.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.1 * mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), 0.9 + 0.1 * unbiased, rtol=1e-4)


def test_batchnorm_eval_uses_running_stats_and_use_batch_statistics():
    bn = nn.BatchNorm2d(2, gamma_init="ones", beta_init="zeros")
    x = np.random.default_rng(6).standard_normal((2, 2, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(bn(t(x)).asnumpy(), x / np.sqrt(1 + 1e-5), rtol=1e-5)
    np.testing.assert_array_equal(bn.moving_mean.asnumpy(), [0, 0])  # eval: no update
    always = nn.BatchNorm2d(2, use_batch_statistics=True)
    out = always(t(x)).asnumpy()
    assert abs(out.mean()) < 1e-5
    with pytest.raises(ValueError, match="dimension"):
        bn(t(np.zeros((2, 2))))


def test_batchnorm1d():
    bn = nn.BatchNorm1d(4).set_train()
    x = np.random.default_rng(7).standard_normal((8, 4)).astype(np.float32)
    y = bn(t(x)).asnumpy()
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm1d(4, momentum=1.5)
    with pytest.raises(ValueError, match="num_features"):
        nn.BatchNorm1d(0)


# --- containers -----------------------------------------------------------------------------
def test_sequential_cell_names_and_forward():
    seq = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])
    assert [p.name for p in seq.get_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and isinstance(seq[-1], nn.Dense)
    x = np.ones((2, 3), np.float32)
    h = np.maximum(x @ seq[0].weight.asnumpy().T + seq[0].bias.asnumpy(), 0)
    expected = h @ seq[2].weight.asnumpy().T + seq[2].bias.asnumpy()
    np.testing.assert_allclose(seq(t(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    seq.append(nn.Sigmoid())
    assert len(seq) == 4
    assert len(seq[1:3]) == 2


def test_sequential_from_ordered_dict_and_nesting():
    from collections import OrderedDict

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.features = nn.SequentialCell(OrderedDict([("fc", nn.Dense(2, 2)), ("act", nn.ReLU())]))
            self.heads = nn.CellList([nn.Dense(2, 1), nn.Dense(2, 1)])

        def construct(self, x):
            x = self.features(x)
            return self.heads[0](x) + self.heads[1](x)

    net = Net()
    assert [p.name for p in net.get_parameters()] == [
        "features.fc.weight", "features.fc.bias", "heads.0.weight", "heads.0.bias", "heads.1.weight", "heads.1.bias"]
    assert net(t(np.ones((3, 2)))).shape == (3, 1)
    with pytest.raises(NotImplementedError):
        net.heads(t(np.ones((1, 2))))
    with pytest.raises(TypeError):
        nn.SequentialCell([nn.ReLU(), 3])
