"""Padding layers (and nn.Pad), HSwish / HSigmoid, channel dropout, Unflatten and ClipByNorm against
PyTorch or NumPy (outputs and input gradients, PYNATIVE and GRAPH_MODE), and MindSpore's errors for bad
arguments."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn

from .test_layers_torch import MODES, compare, rand

torch = pytest.importorskip("torch")
tnn = torch.nn

PAD_CASES = [
    (lambda: nn.ConstantPad1d(2, 1.5), lambda: tnn.ConstantPad1d(2, 1.5), (2, 3, 5)),
    (lambda: nn.ConstantPad1d((1, -2), -1), lambda: tnn.ConstantPad1d((1, -2), -1.0), (3, 6)),
    (lambda: nn.ConstantPad2d((1, 0, 2, 3), 0.5), lambda: tnn.ConstantPad2d((1, 0, 2, 3), 0.5), (2, 2, 3, 4)),
    (lambda: nn.ConstantPad3d(1, 2), lambda: tnn.ConstantPad3d(1, 2.0), (1, 2, 2, 3, 2)),
    (lambda: nn.ZeroPad2d((2, 1, 0, 1)), lambda: tnn.ZeroPad2d((2, 1, 0, 1)), (1, 3, 3, 3)),
    (lambda: nn.ZeroPad2d(1), lambda: tnn.ZeroPad2d(1), (3, 2, 2)),
    (lambda: nn.ReflectionPad1d((2, 1)), lambda: tnn.ReflectionPad1d((2, 1)), (2, 3, 5)),
    (lambda: nn.ReflectionPad2d(2), lambda: tnn.ReflectionPad2d(2), (1, 2, 4, 5)),
    (lambda: nn.ReflectionPad3d((1, 1, 0, 2, 1, 0)), lambda: tnn.ReflectionPad3d((1, 1, 0, 2, 1, 0)), (1, 1, 3, 4, 3)),
    (lambda: nn.ReplicationPad1d(3), lambda: tnn.ReplicationPad1d(3), (2, 2, 4)),
    (lambda: nn.ReplicationPad2d((0, 2, 1, 1)), lambda: tnn.ReplicationPad2d((0, 2, 1, 1)), (2, 1, 3, 3)),
    (lambda: nn.ReplicationPad3d(1), lambda: tnn.ReplicationPad3d(1), (1, 2, 2, 2, 3)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", range(len(PAD_CASES)))
def test_padding_layers(mode, case):
    make, make_torch, shape = PAD_CASES[case]
    compare(make(), make_torch(), [rand(*shape)], {}, mode)


def test_padding_errors():
    with pytest.raises(ValueError, match="length of 'padding'"):
        nn.ConstantPad1d((1, 2, 3, 4), 0.0)
    with pytest.raises(ValueError, match="length of 'padding'"):
        nn.ZeroPad2d((1, 2, 3))
    with pytest.raises(TypeError, match="padding"):
        nn.ReflectionPad2d(1.5)
    with pytest.raises(TypeError, match="value"):
        nn.ConstantPad2d(1, "0")
    with pytest.raises(ValueError, match="must not be negative"):
        nn.ReflectionPad1d((-1, 1))
    with pytest.raises(ValueError, match="4-D or 5-D"):
        nn.ConstantPad3d(1, 0.0)(Tensor(rand(2, 3)))
    assert nn.ZeroPad2d(1).padding == (1, 1, 1, 1)


@pytest.mark.parametrize("mode", MODES)
def test_hswish_and_hsigmoid(mode):
    x = np.linspace(-5, 5, 24, dtype=np.float32).reshape(4, 6) + 0.01  # away from the kinks at -3 and 3
    compare(nn.HSwish(), tnn.Hardswish(), [x], {}, mode)
    compare(nn.HSigmoid(), tnn.Hardsigmoid(), [x], {}, mode)
    assert isinstance(nn.get_activation("hswish"), nn.HSwish)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cls, shape", [(nn.Dropout1d, (4, 6, 5)), (nn.Dropout2d, (3, 8, 4, 4)),
                                        (nn.Dropout3d, (2, 5, 2, 3, 3)), (nn.Dropout2d, (16, 3, 3))])
def test_channel_dropout(mode, cls, shape):
    ms.set_context(mode=mode)
    try:
        net = cls(p=0.4)
        x = Tensor(np.ones(shape, np.float32))
        assert np.array_equal(net(x).asnumpy(), np.ones(shape))  # eval mode: the identity
        net.set_train()
        out = net(x).asnumpy()
        spatial = {nn.Dropout1d: 1, nn.Dropout2d: 2, nn.Dropout3d: 3}[cls]
        channels = out.reshape(out.shape[:out.ndim - spatial] + (-1,))
        # every channel is all zero or all 1 / (1 - p)
        first = channels[..., :1]
        assert np.array_equal(channels, np.broadcast_to(first, channels.shape))
        assert np.all(np.isclose(first, 0) | np.isclose(first, 1 / 0.6))
        assert 0 < np.count_nonzero(first == 0) < first.size
        grad = ms.grad(lambda t: (net(t) * 1.0).sum())(x).asnumpy()
        assert np.all(np.isclose(grad, 0) | np.isclose(grad, 1 / 0.6))
        all_dropped = cls(p=1.0)
        all_dropped.set_train()
        assert not all_dropped(x).asnumpy().any()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_channel_dropout_errors():
    with pytest.raises(ValueError, match="'p'"):
        nn.Dropout2d(1.5)
    with pytest.raises(TypeError, match="'p'"):
        nn.Dropout2d("0.5")
    net = nn.Dropout2d(0.5)
    with pytest.raises(ValueError, match="4-D"):
        net(Tensor(rand(2, 3)))


@pytest.mark.parametrize("mode", MODES)
def test_unflatten(mode):
    compare(nn.Unflatten(1, (2, 3)), tnn.Unflatten(1, (2, 3)), [rand(4, 6, 2)], {}, mode)
    compare(nn.Unflatten(-1, [2, 1, 2]), tnn.Unflatten(-1, (2, 1, 2)), [rand(3, 4)], {}, mode)
    with pytest.raises(ValueError, match="product"):
        nn.Unflatten(0, (2, 2))(Tensor(rand(5, 2)))
    with pytest.raises(ValueError, match="axis"):
        nn.Unflatten(3, (1,))(Tensor(rand(5, 2)))
    with pytest.raises(TypeError, match="unflattened_size"):
        nn.Unflatten(0, 4)
    with pytest.raises(TypeError, match="axis"):
        nn.Unflatten(1.0, (2,))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pad_mode, numpy_mode", [("CONSTANT", "constant"), ("REFLECT", "reflect"),
                                                  ("symmetric", "symmetric")])
def test_pad_against_numpy(mode, pad_mode, numpy_mode):
    ms.set_context(mode=mode)
    try:
        paddings = ((0, 1), (2, 1), (1, 2))
        net = nn.Pad(paddings, pad_mode)
        x = rand(2, 3, 4)
        np.testing.assert_array_equal(net(Tensor(x)).asnumpy(), np.pad(x, paddings, mode=numpy_mode))
        # the gradient of sum(w * out) adds up the weights of every copy of an element
        w = rand(*np.pad(x, paddings).shape)
        want = np.zeros_like(x)
        index = np.pad(np.arange(x.size).reshape(x.shape), paddings, mode=numpy_mode)
        if numpy_mode == "constant":
            index = np.pad(np.arange(x.size).reshape(x.shape), paddings, constant_values=-1)
        np.add.at(want.reshape(-1), index[index >= 0], w[index >= 0])
        got = ms.grad(lambda t: (net(t) * Tensor(w)).sum())(Tensor(x)).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_pad_errors():
    with pytest.raises(TypeError, match="paddings"):
        nn.Pad([[1, 1]])
    with pytest.raises(ValueError, match="negative"):
        nn.Pad(((1, -1),))
    with pytest.raises(ValueError, match="mode"):
        nn.Pad(((1, 1),), "WRAP")
    with pytest.raises(ValueError, match="one pair per input axis"):
        nn.Pad(((1, 1),))(Tensor(rand(2, 2)))
    with pytest.raises(ValueError, match="at most 2"):
        nn.Pad(((0, 0), (3, 0)), "REFLECT")(Tensor(rand(2, 3)))
    nn.Pad(((0, 0), (3, 0)), "SYMMETRIC")(Tensor(rand(2, 3)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axis, clip", [(None, 1.0), (1, 0.5), ((0, 1), 100.0)])
def test_clip_by_norm(mode, axis, clip):
    ms.set_context(mode=mode)
    try:
        x = rand(3, 4)
        x[2] = 0.0  # a zero row: its norm is 0, gradients stay finite
        net = nn.ClipByNorm(axis)
        norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=axis, keepdims=True))
        want = x * clip / np.maximum(norm, clip)
        out = net(Tensor(x), Tensor(np.float32(clip)))
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
        tx = torch.tensor(x, requires_grad=True)
        tnorm = torch.sqrt((tx * tx).sum(dim=axis, keepdim=True)) if axis is not None else torch.sqrt((tx * tx).sum())
        (tx * clip / torch.clamp(tnorm, min=clip)).sum().backward()
        got = ms.grad(lambda t: net(t, clip).sum())(Tensor(x)).asnumpy()
        assert np.isfinite(got).all()
        if axis == 1:  # the zero row's torch gradient is nan (sqrt at 0); compare the others
            np.testing.assert_allclose(got[:2], tx.grad.numpy()[:2], rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(got[2], np.ones(4), rtol=1e-6)  # clip / clip: the identity there
        else:
            np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(TypeError, match="axis"):
        nn.ClipByNorm(axis=1.5)
