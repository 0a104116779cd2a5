"""Loss cells against NumPy."""
import numpy as np
import pytest

from msrt import Tensor, nn

from . import nnref


def t(a, dtype=np.float32):
    return Tensor(np.asarray(a, dtype=dtype))


RNG = np.random.default_rng(11)
LOGITS = RNG.standard_normal((6, 5)).astype(np.float32)
LABELS = np.array([0, 4, 2, 2, 1, 3], np.int32)


def _reduce(x, reduction):
    return {"mean": x.mean(), "sum": x.sum(), "none": x}[reduction]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_softmax_cross_entropy_sparse_and_dense(reduction):
    per = -nnref.log_softmax(LOGITS.astype(np.float64))[np.arange(6), LABELS]
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)
    np.testing.assert_allclose(sparse(t(LOGITS), t(LABELS, np.int32)).asnumpy(), _reduce(per, reduction), rtol=1e-5)
    onehot = np.eye(5, dtype=np.float32)[LABELS]
    dense = nn.SoftmaxCrossEntropyWithLogits(reduction=reduction)
    np.testing.assert_allclose(dense(t(LOGITS), t(onehot)).asnumpy(), _reduce(per, reduction), rtol=1e-5)


def test_softmax_cross_entropy_defaults_and_errors():
    loss = nn.SoftmaxCrossEntropyWithLogits()
    assert loss.sparse is False and loss.reduction == "none"
    with pytest.raises(ValueError, match="reduction"):
        nn.SoftmaxCrossEntropyWithLogits(reduction="avg")
    with pytest.raises(TypeError):
        nn.SoftmaxCrossEntropyWithLogits(sparse=1)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_and_l1(reduction):
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(nn.MSELoss(reduction)(t(x), t(y)).asnumpy(), _reduce((x - y) ** 2, reduction),
                               rtol=1e-5)
    np.testing.assert_allclose(nn.L1Loss(reduction)(t(x), t(y)).asnumpy(), _reduce(np.abs(x - y), reduction),
                               rtol=1e-5)
    # Broadcasting labels.
    np.testing.assert_allclose(nn.MSELoss(reduction)(t(x), t(y[0])).asnumpy(), _reduce((x - y[0]) ** 2, reduction),
                               rtol=1e-5)


def test_nll_loss_weights_and_ignore_index():
    logp = nnref.log_softmax(LOGITS.astype(np.float64)).astype(np.float32)
    labels = np.array([0, 4, -100, 2, 1, 3], np.int32)
    weight = np.array([1.0, 2.0, 0.5, 1.0, 3.0], np.float32)
    keep = labels != -100
    safe = np.where(keep, labels, 0)
    w = weight[safe] * keep
    per = -logp[np.arange(6), safe] * w
    loss = nn.NLLLoss(weight=t(weight))
    np.testing.assert_allclose(loss(t(logp), t(labels, np.int32)).asnumpy(), per.sum() / w.sum(), rtol=1e-5)
    np.testing.assert_allclose(nn.NLLLoss(reduction="none")(t(logp), t(labels, np.int32)).asnumpy(),
                               -logp[np.arange(6), safe] * keep, rtol=1e-5)
    np.testing.assert_allclose(nn.NLLLoss(reduction="sum")(t(logp), t(LABELS, np.int32)).asnumpy(),
                               -logp[np.arange(6), LABELS].sum(), rtol=1e-5)


def test_cross_entropy_indices_probabilities_and_smoothing():
    logp = nnref.log_softmax(LOGITS.astype(np.float64))
    ce = nn.CrossEntropyLoss()
    np.testing.assert_allclose(ce(t(LOGITS), t(LABELS, np.int32)).asnumpy(), -logp[np.arange(6), LABELS].mean(),
                               rtol=1e-5)
    probs = nnref.softmax(RNG.standard_normal((6, 5)))
    np.testing.assert_allclose(ce(t(LOGITS), t(probs)).asnumpy(), -(probs * logp).sum(1).mean(), rtol=1e-5)
    eps = 0.1
    smooth = nn.CrossEntropyLoss(label_smoothing=eps)
    target = np.eye(5)[LABELS] * (1 - eps) + eps / 5
    np.testing.assert_allclose(smooth(t(LOGITS), t(LABELS, np.int32)).asnumpy(), -(target * logp).sum(1).mean(),
                               rtol=1e-5)
    weight = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    weighted = nn.CrossEntropyLoss(weight=t(weight), reduction="sum")
    np.testing.assert_allclose(weighted(t(LOGITS), t(LABELS, np.int32)).asnumpy(),
                               -(logp[np.arange(6), LABELS] * weight[LABELS]).sum(), rtol=1e-5)


def test_loss_base_get_loss():
    base = nn.LossBase("sum")
    np.testing.assert_allclose(base.get_loss(t([1.0, 2.0]), t([2.0, 3.0])).asnumpy(), 8.0)
    np.testing.assert_allclose(nn.LossBase().get_loss(t([1.0, 3.0])).asnumpy(), 2.0)


def test_losses_of_images_take_classes_on_axis_1():
    """(N, C, d...) logits with (N, d...) targets, as MindSpore 2.x's CrossEntropyLoss and NLLLoss."""
    logits = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    labels = np.array([[0, 2, 1, -100], [2, 2, 0, 1]], np.int32)
    logp = nnref.log_softmax(np.moveaxis(logits, 1, -1).reshape(-1, 3).astype(np.float64))  # (N*d, C)
    keep = labels.reshape(-1) != -100
    picked = -logp[np.arange(8), np.where(keep, labels.reshape(-1), 0)] * keep
    ce = nn.CrossEntropyLoss(reduction="none")(t(logits), t(labels, np.int32))
    np.testing.assert_allclose(ce.asnumpy(), picked.reshape(2, 4), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(nn.CrossEntropyLoss()(t(logits), t(labels, np.int32)).asnumpy(),
                               picked.sum() / keep.sum(), rtol=1e-5)
    lp = np.moveaxis(logp.reshape(2, 4, 3), -1, 1).astype(np.float32)
    np.testing.assert_allclose(nn.NLLLoss(reduction="sum")(t(lp), t(labels, np.int32)).asnumpy(), picked.sum(),
                               rtol=1e-5)
