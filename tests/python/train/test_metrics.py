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


# --- precision, recall, F-beta and the confusion matrix, against counts computed here ---
def _counts(pred, label, classes):
    picked = pred.argmax(axis=1)
    tp = np.array([np.sum((picked == c) & (label == c)) for c in range(classes)], np.float64)
    predicted = np.array([np.sum(picked == c) for c in range(classes)], np.float64)
    actual = np.array([np.sum(label == c) for c in range(classes)], np.float64)
    return tp, predicted, actual


def test_precision_recall_fbeta_per_class_and_averaged():
    from msrt.train import F1, Fbeta, Precision, Recall

    rng = np.random.default_rng(1)
    pred, label = rng.random((40, 4)), rng.integers(0, 4, 40)
    tp, predicted, actual = _counts(pred, label, 4)
    precision, recall = Precision(), Recall()
    for metric in (precision, recall):
        metric.update(Tensor(pred[:25].astype(np.float32)), Tensor(label[:25].astype(np.int32)))
        metric.update(pred[25:], np.eye(4)[label[25:]])  # one-hot labels, accumulated
    np.testing.assert_allclose(precision.eval(), tp / predicted)
    np.testing.assert_allclose(recall.eval(), tp / actual)
    assert precision.eval(average=True) == pytest.approx(np.mean(tp / predicted))
    for beta in (0.5, 1.0, 2.0):
        p, r = tp / predicted, tp / actual
        expected = (1 + beta ** 2) * p * r / (beta ** 2 * p + r)
        metric = F1() if beta == 1.0 else Fbeta(beta)
        metric.update(pred, label)
        np.testing.assert_allclose(metric.eval(), expected, rtol=1e-12)
        assert metric.eval(True) == pytest.approx(expected.mean())
    assert isinstance(get_metric_fn("precision"), Precision) and isinstance(get_metric_fn("F1"), F1)


def test_precision_recall_multilabel_per_sample():
    from msrt.train import Precision, Recall

    y_pred = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])
    y = np.array([[1, 0, 0], [0, 1, 1], [0, 0, 1]])
    precision, recall = Precision("multilabel"), Recall("multilabel")
    precision.update(y_pred, y)
    recall.update(y_pred, y)
    np.testing.assert_allclose(precision.eval(), [0.5, 1.0, 0.0])
    np.testing.assert_allclose(recall.eval(), [1.0, 1.0, 0.0])
    assert precision.eval(True) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="0 and 1"):
        Precision("multilabel").update(np.array([[0.3, 0.7]]), np.array([[0, 1]]))


def test_classification_metric_errors():
    from msrt.train import Fbeta, Precision, Recall

    with pytest.raises(ValueError, match="eval_type"):
        Precision("regression")
    with pytest.raises(ValueError, match="greater than zero"):
        Fbeta(0)
    with pytest.raises(TypeError, match="beta"):
        Fbeta("1")
    recall = Recall()
    with pytest.raises(RuntimeError, match="number of samples is 0"):
        recall.eval()
    with pytest.raises(ValueError, match="2 inputs"):
        recall.update(PRED)
    recall.update(PRED, LABEL)
    with pytest.raises(TypeError, match="average"):
        recall.eval(average=1)
    with pytest.raises(ValueError, match="class number"):
        recall.update(np.zeros((2, 4)), np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="labels must be in"):
        Recall().update(PRED, np.array([0, 1, 2, 3]))


def test_confusion_matrix_and_its_normalisations():
    from msrt.train import ConfusionMatrix

    rng = np.random.default_rng(2)
    pred, label = rng.random((30, 3)), rng.integers(0, 3, 30)
    expected = np.zeros((3, 3))
    for t, p in zip(label, pred.argmax(axis=1)):
        expected[t, p] += 1
    cm = ConfusionMatrix(3)
    cm.update(Tensor(pred.astype(np.float32)), Tensor(label.astype(np.int32)))
    np.testing.assert_array_equal(cm.eval(), expected)
    for normalize, divisor in (("target", expected.sum(1, keepdims=True)),
                               ("prediction", expected.sum(0, keepdims=True)), ("all", expected.sum())):
        m = ConfusionMatrix(3, normalize=normalize)
        m.update(pred, label)
        np.testing.assert_allclose(m.eval(), expected / divisor)
    binary = ConfusionMatrix(2, threshold=0.6)
    binary.update(np.array([0.7, 0.2, 0.65, 0.5]), np.array([1, 0, 0, 1]))
    np.testing.assert_array_equal(binary.eval(), [[1, 1], [1, 1]])
    with pytest.raises(ValueError, match="normalize"):
        ConfusionMatrix(3, normalize="rows")
    with pytest.raises(TypeError, match="num_classes"):
        ConfusionMatrix(3.0)
    with pytest.raises(RuntimeError, match="update"):
        ConfusionMatrix(3).eval()
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        ConfusionMatrix(3).update(np.array([0, 3]), np.array([0, 1]))
