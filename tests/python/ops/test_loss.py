"""Parity tests of the losses against NumPy references, their errors (label
checks happen in the kernel, so they surface on read) and finite-difference
gradients."""
import numpy as np
import pytest

from .harness import check_grad, covers, gradients, run_op

covers("sparse_softmax_cross_entropy", "softmax_cross_entropy", "nll_loss", "mse_loss")

RNG = np.random.default_rng(5)
FLOATS = [np.float32, np.float64]


def tol(dtype):
    return dict(rtol=2e-6, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def expect_error(exc, tokens, name, inputs, attrs=None):
    with pytest.raises(exc) as info:
        run_op(name, inputs, attrs)
    for token in tokens:
        assert token in str(info.value), f"{token!r} not in {info.value}"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n, c", [(1, 1), (4, 10), (0, 3), (5000, 10), (7, 1000)])
def test_sparse_softmax_cross_entropy(dtype, label_dtype, n, c):
    logits = RNG.uniform(-5, 5, size=(n, c)).astype(dtype)
    labels = RNG.integers(0, c, size=n).astype(label_dtype)
    (loss,) = run_op("sparse_softmax_cross_entropy", [logits, labels])
    expected = -log_softmax(logits)[np.arange(n), labels]
    assert loss.dtype == dtype and loss.shape == (n,)
    np.testing.assert_allclose(loss, expected, **tol(dtype))


def test_cross_entropy_is_stable():
    logits = np.array([[1000.0, 0.0, -1000.0], [5.0, 5.0, 5.0]], np.float32)
    (loss,) = run_op("sparse_softmax_cross_entropy", [logits, np.array([2, 1], np.int32)])
    np.testing.assert_allclose(loss, [2000.0, np.log(3)], rtol=1e-6)
    probs = np.array([[0.0, 0.0, 1.0], [0.2, 0.3, 0.5]], np.float32)
    (loss,) = run_op("softmax_cross_entropy", [logits, probs])
    np.testing.assert_allclose(loss, [2000.0, np.log(3)], rtol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n, c", [(4, 10), (1, 1), (0, 2), (3000, 20)])
def test_softmax_cross_entropy(dtype, n, c):
    logits = RNG.uniform(-5, 5, size=(n, c)).astype(dtype)
    p = RNG.uniform(0, 1, size=(n, c))
    p = (p / p.sum(1, keepdims=True)).astype(dtype)
    (loss,) = run_op("softmax_cross_entropy", [logits, p])
    expected = -(p.astype(np.float64) * log_softmax(logits)).sum(1)
    assert loss.dtype == dtype and loss.shape == (n,)
    np.testing.assert_allclose(loss, expected, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(dtype, reduction):
    lp = log_softmax(RNG.uniform(-3, 3, size=(6, 5))).astype(dtype)
    target = RNG.integers(0, 5, size=6).astype(np.int64)
    (loss,) = run_op("nll_loss", [lp, target], {"reduction": reduction})
    picked = -lp.astype(np.float64)[np.arange(6), target]
    expected = {"mean": picked.mean(), "sum": picked.sum(), "none": picked}[reduction]
    assert loss.dtype == dtype and loss.shape == np.shape(expected)
    np.testing.assert_allclose(loss, expected, **tol(dtype))
    if reduction == "mean":
        np.testing.assert_array_equal(run_op("nll_loss", [lp, target])[0], loss)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ())])
def test_mse_loss(reduction, shapes):
    for dtype in FLOATS:
        x, y = RNG.standard_normal(shapes[0]).astype(dtype), RNG.standard_normal(shapes[1]).astype(dtype)
        (loss,) = run_op("mse_loss", [x, y], {"reduction": reduction})
        sq = (x.astype(np.float64) - y) ** 2
        expected = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
        assert loss.dtype == dtype
        np.testing.assert_allclose(loss, expected, **tol(dtype))


def test_half_logits():
    logits = RNG.uniform(-3, 3, size=(4, 6)).astype(np.float16)
    labels = np.array([0, 5, 2, 3], np.int32)
    (loss,) = run_op("sparse_softmax_cross_entropy", [logits, labels])
    assert loss.dtype == np.float16
    np.testing.assert_allclose(loss.astype(np.float32), -log_softmax(logits)[np.arange(4), labels], rtol=3e-3)


def test_loss_errors():
    logits = np.zeros((3, 4), np.float32)
    expect_error(ValueError, ["[sparse_softmax_cross_entropy]", "'logits'", "2-D", "(4,)"],
                 "sparse_softmax_cross_entropy", [np.zeros(4, np.float32), np.zeros(4, np.int32)])
    expect_error(TypeError, ["[sparse_softmax_cross_entropy]", "'labels'", "Int32 or Int64", "Float32"],
                 "sparse_softmax_cross_entropy", [logits, np.zeros(3, np.float32)])
    expect_error(ValueError, ["[sparse_softmax_cross_entropy]", "one entry per row", "3 rows", "(2,)"],
                 "sparse_softmax_cross_entropy", [logits, np.zeros(2, np.int32)])
    expect_error(TypeError, ["[sparse_softmax_cross_entropy]", "Int32"], "sparse_softmax_cross_entropy",
                 [np.zeros((3, 4), np.int32), np.zeros(3, np.int32)])
    # Labels are checked by the kernel: IndexError, on read, naming the sample.
    expect_error(IndexError, ["[sparse_softmax_cross_entropy]", "'labels' 4 of sample 1", "4 classes",
                              "'sparse_softmax_cross_entropy'"],
                 "sparse_softmax_cross_entropy", [logits, np.array([0, 4, 1], np.int32)])
    expect_error(IndexError, ["[nll_loss]", "'target' -1 of sample 0"], "nll_loss",
                 [logits, np.array([-1, 0, 0], np.int64)])
    expect_error(ValueError, ["[softmax_cross_entropy]", "shape of 'logits'", "(3, 3)"], "softmax_cross_entropy",
                 [logits, np.zeros((3, 3), np.float32)])
    expect_error(TypeError, ["[softmax_cross_entropy]", "'labels'", "Float32", "Float64"], "softmax_cross_entropy",
                 [logits, np.zeros((3, 4), np.float64)])
    expect_error(ValueError, ["[nll_loss]", "'reduction'", "'mean', 'sum' or 'none'", "'avg'"], "nll_loss",
                 [logits, np.zeros(3, np.int32)], {"reduction": "avg"})
    expect_error(ValueError, ["[mse_loss]", "'reduction'", "'max'"], "mse_loss", [logits, logits],
                 {"reduction": "max"})
    expect_error(TypeError, ["[mse_loss]", "'x'", "Int32"], "mse_loss", [np.zeros(2, np.int32), np.zeros(2)])
    expect_error(ValueError, ["[mse_loss]", "can not be broadcast"], "mse_loss", [np.zeros(2), np.zeros(3)])


def test_loss_gradients():
    logits = RNG.uniform(-2, 2, size=(4, 5))
    labels = np.array([0, 4, 2, 2], np.int32)
    check_grad("sparse_softmax_cross_entropy", [logits, labels])
    p = RNG.uniform(0, 1, size=(4, 5))
    p /= p.sum(1, keepdims=True)
    check_grad("softmax_cross_entropy", [logits, p * 1.3], wrt=(0, 1))  # labels need not sum to 1
    lp = log_softmax(logits)
    for reduction in ["mean", "sum", "none"]:
        check_grad("nll_loss", [lp, labels.astype(np.int64)], {"reduction": reduction})
    for reduction in ["mean", "sum", "none"]:
        check_grad("mse_loss", [RNG.standard_normal((3, 4)), RNG.standard_normal((4,))], {"reduction": reduction},
                   wrt=(0, 1))


def test_sparse_cross_entropy_gradient_is_softmax_minus_onehot():
    logits = RNG.uniform(-2, 2, size=(3, 4))
    labels = np.array([1, 0, 3], np.int64)
    (g,) = gradients("sparse_softmax_cross_entropy", [logits, labels])
    e = np.exp(logits - logits.max(1, keepdims=True))
    expected = e / e.sum(1, keepdims=True) - np.eye(4)[labels]
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-14)
