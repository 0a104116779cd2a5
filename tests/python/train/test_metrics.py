"""Metrics against hand-computed values."""
import numpy as np
import pytest

from msrt import Tensor
from msrt.train import MAE, MSE, Accuracy, Loss, Top1CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn, names

PRED = np.array([[0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.3, 0.45, 0.25]], np.float32)
LABEL = np.array([1, 2, 1, 2], np.int32)


def test_accuracy_indices_onehot_and_accumulation():
    acc = Accuracy()
    acc.update(Tensor(PRED), Tensor(LABEL))
    assert acc.eval() == 0.5
    acc.update(PRED[:2], np.eye(3)[LABEL[:2]])  # NumPy and one-hot labels
    assert acc.eval() == pytest.approx(4 / 6)
    acc.clear()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        acc.eval()
    assert Accuracy()(PRED, LABEL) == 0.5
    with pytest.raises(ValueError, match="2 inputs"):
        acc.update(PRED)
    acc.update(PRED, LABEL)
    with pytest.raises(ValueError, match="class number"):
        acc.update(np.zeros((2, 4), np.float32), np.zeros(2, np.int32))


def test_accuracy_multilabel():
    acc = Accuracy("multilabel")
    acc.update(np.array([[0.9, 0.2], [0.4, 0.7]]), np.array([[1, 0], [1, 1]]))
    assert acc.eval() == 0.5
    with pytest.raises(ValueError):
        Accuracy("regression")


def test_loss_metric():
    loss = Loss()
    loss.update(Tensor(np.float32(2.0)))
    loss.update(np.array([1.0, 3.0]))
    assert loss.eval() == pytest.approx(2.0)
    with pytest.raises(ValueError):
        loss.update(np.ones((2, 2)))


def test_topk_mae_mse_and_registry():
    top2 = TopKCategoricalAccuracy(2)
    top2.update(PRED, LABEL)
    assert top2.eval() == 0.75
    assert Top1CategoricalAccuracy()(PRED, LABEL) == 0.5
    assert MAE()(np.array([1.0, 2.0]), np.array([2.0, 4.0])) == pytest.approx(1.5)
    assert MSE()(np.array([[1.0, 2.0]]), np.array([[2.0, 4.0]])) == pytest.approx(2.5)
    assert isinstance(get_metric_fn("acc"), Accuracy) and isinstance(get_metric_fn("loss"), Loss)
    assert {"accuracy", "acc", "loss"} <= set(names())
    with pytest.raises(KeyError):
        get_metric_fn("f9")
