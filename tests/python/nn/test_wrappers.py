"""WithLossCell, WithEvalCell and TrainOneStepCell."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn


def t(a, dtype=np.float32):
    return Tensor(np.asarray(a, dtype=dtype))


def blobs(n=64, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n).astype(np.int32)
    centers = np.array([[2, 0], [-2, 1], [0, -2]], np.float32)
    x = centers[labels] + 0.5 * rng.standard_normal((n, 2)).astype(np.float32)
    return x, labels


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(2, 16)
        self.act = nn.Tanh()
        self.fc2 = nn.Dense(16, 3)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_with_loss_cell():
    ms.set_seed(1)
    net = MLP()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    x, y = blobs(8)
    with_loss = nn.WithLossCell(net, loss_fn)
    assert with_loss.backbone_network is net
    np.testing.assert_allclose(with_loss(t(x), t(y, np.int32)).asnumpy(),
                               loss_fn(net(t(x)), t(y, np.int32)).asnumpy(), rtol=1e-6)


def test_with_eval_cell():
    net = MLP()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    x, y = blobs(8)
    loss, out, label = nn.WithEvalCell(net, loss_fn)(t(x), t(y, np.int32))
    assert out.shape == (8, 3) and label.shape == (8,) and loss.shape == ()


@pytest.mark.parametrize("make_opt", [
    lambda p: nn.Momentum(p, 0.1, 0.9),
    lambda p: nn.SGD(p, 0.2),
    lambda p: nn.Adam(p, 0.02),
    lambda p: nn.AdamWeightDecay(p, 0.02, weight_decay=1e-4),
])
def test_train_one_step_cell_reduces_loss(make_opt):
    ms.set_seed(2)
    net = MLP()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), make_opt(net.trainable_params()))
    train.set_train()
    x, y = t(blobs()[0]), t(blobs()[1], np.int32)
    first = float(train(x, y).asnumpy())
    for _ in range(40):
        last = float(train(x, y).asnumpy())
    assert last < 0.5 * first
    logits = net(x).asnumpy()
    assert (logits.argmax(1) == blobs()[1]).mean() > 0.9


def test_train_one_step_gradients_match_numeric_and_sens():
    ms.set_seed(3)
    net = nn.Dense(3, 2)
    loss_fn = nn.MSELoss()
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    w0, b0 = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), 0.1), sens=2.0,
                                return_grad=True)
    loss, grads = train(t(x), t(y))
    pred = x @ w0.T + b0
    dpred = 2 * (pred - y) / pred.size
    np.testing.assert_allclose(loss.asnumpy(), ((pred - y) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(grads["weight"].asnumpy(), 2.0 * dpred.T @ x, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["bias"].asnumpy(), 2.0 * dpred.sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(net.weight.asnumpy(), w0 - 0.1 * 2.0 * dpred.T @ x, rtol=1e-4, atol=1e-6)


def test_train_one_step_with_batchnorm_and_dropout():
    ms.set_seed(4)
    net = nn.SequentialCell([nn.Dense(2, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(p=0.1), nn.Dense(8, 3)])
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.Momentum(net.trainable_params(), 0.05, 0.9))
    train.set_train()
    x, y = t(blobs()[0]), t(blobs()[1], np.int32)
    losses = [float(train(x, y).asnumpy()) for _ in range(30)]
    assert losses[-1] < losses[0]
    assert np.abs(net[1].moving_mean.asnumpy()).sum() > 0  # running stats moved


def test_parameter_update_assigns_and_returns_the_value():
    net = nn.Dense(3, 4)
    update = nn.ParameterUpdate(net.parameters_dict()["weight"])
    update.phase = "update_param"
    assert update.phase == "update_param"
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = update(Tensor(value))
    np.testing.assert_array_equal(out.asnumpy(), value)
    np.testing.assert_array_equal(net.weight.asnumpy(), value)
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), x @ value.T + net.bias.asnumpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="'param' must be 'Parameter'"):
        nn.ParameterUpdate(Tensor(value))
