"""Parity tests of the losses against NumPy references, their errors (label
checks happen in the kernel, so they surface on read) and finite-difference
gradients."""
import inspect

import numpy as np
import pytest

import msrt as ms
from msrt import _C, ops

from .harness import check_grad, covers, gradients, run_op

covers("sparse_softmax_cross_entropy", "softmax_cross_entropy", "nll_loss", "mse_loss", "l1_loss", "l2_loss",
       "sigmoid_cross_entropy_with_logits", "binary_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
       "sparse_softmax_cross_entropy_with_logits", "cross_entropy", "negative_log_likelihood",
       "nll_loss_with_total_weight", "binary_cross_entropy", "smooth_l1_loss", "huber_loss", "kl_div",
       "cosine_embedding_loss", "margin_ranking_loss")

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


# --- composite losses (built from other ops in C++) ----------------------------------------
def _reduced(x, reduction):
    return {"mean": x.mean(), "sum": x.sum(), "none": x}[reduction]


def _bce_reference(x, y, weight=None, pos_weight=None):
    """-(pw * y * log sigmoid(x) + (1 - y) * log(1 - sigmoid(x))) * w, in float64."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    log_sig = -np.logaddexp(0.0, -x)
    log_one_minus = -np.logaddexp(0.0, x)
    pw = 1.0 if pos_weight is None else pos_weight.astype(np.float64)
    loss = -(pw * y * log_sig + (1 - y) * log_one_minus)
    return loss if weight is None else loss * weight


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's mean of an empty array (NaN, as msrt's)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ()), ((0, 3), (3,))])
def test_l1_loss(reduction, shapes):
    for dtype in FLOATS:
        x, y = RNG.standard_normal(shapes[0]).astype(dtype), RNG.standard_normal(shapes[1]).astype(dtype)
        (loss,) = run_op("l1_loss", [x, y], {"reduction": reduction})
        expected = _reduced(np.abs(x.astype(np.float64) - y), reduction)
        assert loss.dtype == dtype and loss.shape == np.shape(expected)
        np.testing.assert_allclose(loss, expected, **tol(dtype))
    if shapes[0] != (0, 3):
        check_grad("l1_loss", [RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])],
                   {"reduction": reduction}, wrt=(0, 1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 4), (7,), (), (0, 2)])
def test_l2_loss(dtype, shape):
    x = RNG.standard_normal(shape).astype(dtype)
    (loss,) = run_op("l2_loss", [x])
    assert loss.dtype == dtype and loss.shape == ()
    np.testing.assert_allclose(loss, (x.astype(np.float64) ** 2).sum() / 2, **tol(dtype))
    check_grad("l2_loss", [RNG.standard_normal(shape)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_cross_entropy_with_logits(dtype):
    x = np.concatenate([RNG.uniform(-6, 6, size=10), [0.0, 100.0, -100.0, 700.0, -700.0]]).astype(dtype)
    y = RNG.uniform(0, 1, size=x.shape).astype(dtype)
    (loss,) = run_op("sigmoid_cross_entropy_with_logits", [x, y])
    assert loss.dtype == dtype and loss.shape == x.shape and np.all(np.isfinite(loss))
    np.testing.assert_allclose(loss, _bce_reference(x, y), **tol(dtype))
    # Labels broadcast, and may be integers (the ops promote them).
    x2 = RNG.standard_normal((3, 4)).astype(dtype)
    hard = np.array([0, 1, 1, 0], np.int32)
    (loss,) = run_op("sigmoid_cross_entropy_with_logits", [x2, hard])
    np.testing.assert_allclose(loss, _bce_reference(x2, hard.astype(dtype)), **tol(dtype))
    check_grad("sigmoid_cross_entropy_with_logits", [RNG.uniform(-3, 3, (3, 4)), RNG.uniform(0, 1, (3, 4))],
               wrt=(0, 1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("positive", [False, True])
def test_binary_cross_entropy_with_logits_against_pytorch(reduction, weighted, positive):
    torch = pytest.importorskip("torch")
    x = RNG.uniform(-4, 4, size=(5, 3))
    y = (RNG.uniform(size=(5, 3)) > 0.5).astype(np.float64)
    w = RNG.uniform(0.5, 2, size=(3,)) if weighted else None
    pw = RNG.uniform(0.5, 3, size=(3,)) if positive else None

    bce = torch.nn.functional.binary_cross_entropy_with_logits
    xt = torch.tensor(x, requires_grad=True)
    wt = None if w is None else torch.tensor(w, requires_grad=True)
    pwt = None if pw is None else torch.tensor(pw, requires_grad=True)
    # PyTorch differentiates neither `weight` nor `pos_weight`: the gradients come from its formula written out.
    yt = torch.tensor(y)
    if pwt is None:
        per = bce(xt, yt, reduction="none")
    else:
        per = (1 - yt) * xt + (1 + (pwt - 1) * yt) * torch.nn.functional.softplus(-xt)
    per = per if wt is None else per * wt
    want = {"mean": per.mean, "sum": per.sum, "none": lambda: per}[reduction]()
    want.backward(torch.ones_like(want))
    direct = bce(xt.detach(), torch.tensor(y), weight=None if w is None else torch.tensor(w),
                 pos_weight=None if pw is None else torch.tensor(pw), reduction=reduction)
    np.testing.assert_allclose(want.detach().numpy(), direct.numpy(), rtol=1e-12)

    def ms_loss(xm, wm, pwm):
        return ops.binary_cross_entropy_with_logits(xm, ms.Tensor(y), wm, pwm, reduction)

    args = [ms.Tensor(x)] + [ms.Tensor(a) for a in (w, pw) if a is not None]
    positions = tuple(range(len(args)))

    def fn(*given):
        it = iter(given[1:])
        return ms_loss(given[0], next(it) if weighted else None, next(it) if positive else None)

    got = fn(*args)
    np.testing.assert_allclose(got.asnumpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.asnumpy(), _reduced(_bce_reference(x, y, w, pw), reduction), rtol=1e-12)
    grads = ms.grad(lambda *a: ops.sum(fn(*a)), grad_position=positions)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    want_grads = [xt.grad] + [t.grad for t in (wt, pwt) if t is not None]
    for g, wg in zip(grads, want_grads):
        np.testing.assert_allclose(g.asnumpy(), wg.numpy(), rtol=1e-10, atol=1e-12)


def test_binary_cross_entropy_with_logits_op():
    x, y = RNG.uniform(-3, 3, (4, 3)), RNG.uniform(0, 1, (4, 3))
    w, pw = RNG.uniform(0.5, 2, (4, 1)), RNG.uniform(0.5, 3, (3,))
    for reduction in ["mean", "sum", "none"]:
        (loss,) = run_op("binary_cross_entropy_with_logits", [x, y, w, pw], {"reduction": reduction})
        np.testing.assert_allclose(loss, _reduced(_bce_reference(x, y, w, pw), reduction), rtol=1e-12)
        check_grad("binary_cross_entropy_with_logits", [x, y, w, pw], {"reduction": reduction}, wrt=(0, 1, 2, 3))
    # Left out, weight and pos_weight are None (Note [Optional inputs]).
    plain = _C.call("binary_cross_entropy_with_logits", [_C.TensorBase(x), _C.TensorBase(y), None, None], {})
    np.testing.assert_allclose(plain[0].asnumpy(), _bce_reference(x, y).mean(), rtol=1e-12)
    half = np.float16(x)
    (loss,) = run_op("binary_cross_entropy_with_logits", [half, np.float16(y), np.float16(w), np.float16(pw)])
    assert loss.dtype == np.float16
    np.testing.assert_allclose(np.float32(loss), _bce_reference(x, y, w, pw).mean(), rtol=3e-3)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_cross_entropy_with_logits(dtype):
    logits = RNG.uniform(-5, 5, size=(4, 6)).astype(dtype)
    p = RNG.uniform(0, 1, size=(4, 6))
    p = (p / p.sum(1, keepdims=True)).astype(dtype)
    loss, backprop = run_op("softmax_cross_entropy_with_logits", [logits, p])
    lsm = log_softmax(logits)
    np.testing.assert_allclose(loss, -(p * lsm).sum(1), **tol(dtype))
    np.testing.assert_allclose(backprop, np.exp(lsm) - p, **tol(dtype))
    assert loss.dtype == dtype and backprop.dtype == dtype
    check_grad("softmax_cross_entropy_with_logits", [logits, p * 1.3], wrt=(0, 1))


def test_composite_loss_errors():
    x = np.zeros((3, 4), np.float32)
    for name in ["l1_loss", "binary_cross_entropy_with_logits"]:
        inputs = [x, x] if name == "l1_loss" else [x, x, x, x]
        expect_error(ValueError, [f"[{name}]", "'reduction'", "'mean', 'sum' or 'none'", "'avg'"], name, inputs,
                     {"reduction": "avg"})
        expect_error(TypeError, [f"[{name}]", "'reduction'", "got int 1"], name, inputs, {"reduction": 1})
        expect_error(ValueError, [f"[{name}]", "can not be broadcast"], name,
                     [x, np.zeros((3, 5), np.float32)] + inputs[2:])
    for name in ["sigmoid_cross_entropy_with_logits", "binary_cross_entropy_with_logits"]:
        inputs = [np.zeros((3, 4), np.int32), x] + ([x, x] if name.startswith("binary") else [])
        expect_error(TypeError, [f"[{name}]", "'logits'", "Int32"], name, inputs)
    # Only an optional input may be left out.
    with pytest.raises(ValueError, match=r"\[binary_cross_entropy_with_logits\] input 1 is an undefined tensor"):
        _C.call("binary_cross_entropy_with_logits", [_C.TensorBase(x), None, None, None], {})
    with pytest.raises(ValueError, match=r"\[l1_loss\] input 0 is an undefined tensor"):
        _C.call("l1_loss", [None, _C.TensorBase(x)], {})


def test_declared_python_forms():
    """The functions and Primitives these ops declare, with MindSpore's signatures."""
    assert str(inspect.signature(ops.mse_loss)) == "(input, target, reduction='mean')"
    assert str(inspect.signature(ops.l1_loss)) == "(input, target, reduction='mean')"
    assert (str(inspect.signature(ops.binary_cross_entropy_with_logits))
            == "(input, target, weight=None, pos_weight=None, reduction='mean')")
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(ops.l1_loss(ms.Tensor(a), 0.5, "sum").asnumpy(), np.abs(a - 0.5).sum(), rtol=1e-6)
    np.testing.assert_allclose(ops.L2Loss()(ms.Tensor(a)).asnumpy(), (a.astype(np.float64) ** 2).sum() / 2,
                               rtol=1e-6)
    out = ops.SigmoidCrossEntropyWithLogits()(ms.Tensor(a), ms.Tensor(b))
    np.testing.assert_allclose(out.asnumpy(), _bce_reference(a, b), rtol=1e-5, atol=1e-6)
    loss, backprop = ops.SoftmaxCrossEntropyWithLogits()(ms.Tensor(a), ms.Tensor(np.eye(3, dtype=np.float32)[[0, 2]]))
    assert loss.shape == (2,) and backprop.shape == (2, 3)
    for cls in (ops.L2Loss, ops.SigmoidCrossEntropyWithLogits, ops.SoftmaxCrossEntropyWithLogits):
        assert issubclass(cls, ops.Primitive)
    with pytest.raises(TypeError, match="every input must be a Tensor"):
        ops.binary_cross_entropy_with_logits(None, ms.Tensor(a))


@pytest.mark.parametrize("fn", [ops.cross_entropy, ops.nll_loss])
def test_class_weights_must_be_a_tensor_of_one_weight_per_class(fn):
    x = ms.Tensor(RNG.standard_normal((4, 3)).astype(np.float32))
    labels = ms.Tensor(np.array([0, 1, 2, 0], np.int32))
    with pytest.raises(TypeError, match=rf"For '{fn.__name__}', 'weight' must be a Tensor or None, but got list"):
        fn(x, labels, weight=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=rf"For '{fn.__name__}', the shape of 'weight' must be \(C,\) = \(3,\)"):
        fn(x, labels, weight=ms.Tensor(np.ones(4, np.float32)))


# --- losses over classes (composites; Note [Class losses] in src/ops/loss.cc) ------------------
def _class_case(shape, targets, ignore):
    """Logits of `shape` (N, C, d...) in float64 and targets: class indices (int32, some `ignore`d when asked)
    or (targets == "probs") class probabilities shaped as the logits."""
    x = RNG.uniform(-3, 3, size=shape)
    c = shape[1]
    if targets == "probs":
        p = RNG.uniform(0.1, 1, size=shape)
        return x, p / p.sum(1, keepdims=True)
    target = RNG.integers(0, c, size=(shape[0],) + shape[2:]).astype(np.int32)
    if ignore:
        target.reshape(-1)[::3] = -100
    return x, target


def _ms_grad(fn, x, weight):
    """fn's value and gradient w.r.t. x, by ms.grad of the sum of fn."""
    w = None if weight is None else ms.Tensor(weight)
    value = fn(ms.Tensor(x), w)
    grad = ms.grad(lambda a: ops.sum(fn(a, w)))(ms.Tensor(x))
    return value.asnumpy(), grad.asnumpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3)])
@pytest.mark.parametrize("targets", ["indices", "ignored", "probs"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_against_pytorch(reduction, shape, targets, weighted, smoothing):
    torch = pytest.importorskip("torch")
    x, target = _class_case(shape, targets, targets == "ignored")
    weight = RNG.uniform(0.5, 2, size=shape[1]) if weighted else None
    xt = torch.tensor(x, requires_grad=True)
    tt = torch.tensor(target) if targets == "probs" else torch.tensor(target.astype(np.int64))
    want = torch.nn.functional.cross_entropy(xt, tt, None if weight is None else torch.tensor(weight),
                                             reduction=reduction, label_smoothing=smoothing)
    want.sum().backward()
    got, grad = _ms_grad(lambda a, w: ops.cross_entropy(a, ms.Tensor(target), w, -100, reduction, smoothing),
                         x, weight)
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 4)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_negative_log_likelihood_against_pytorch(reduction, shape, weighted, label_dtype):
    torch = pytest.importorskip("torch")
    x, target = _class_case(shape, "indices", True)
    lp = torch.log_softmax(torch.tensor(x), 1).numpy()
    target = target.astype(label_dtype)
    weight = RNG.uniform(0.5, 2, size=shape[1]) if weighted else None
    lpt = torch.tensor(lp, requires_grad=True)
    want = torch.nn.functional.nll_loss(lpt, torch.tensor(target.astype(np.int64)),
                                        None if weight is None else torch.tensor(weight), reduction=reduction)
    want.sum().backward()
    got, grad = _ms_grad(lambda a, w: ops.nll_loss(a, ms.Tensor(target), w, -100, reduction), lp, weight)
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, lpt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_negative_log_likelihood_with_label_smoothing(reduction):
    # On log-probabilities log_softmax changes nothing, so the smoothed loss is cross entropy's.
    torch = pytest.importorskip("torch")
    x, target = _class_case((5, 4), "indices", True)
    lp = torch.log_softmax(torch.tensor(x), 1).numpy()
    weight = RNG.uniform(0.5, 2, size=4)
    want = torch.nn.functional.cross_entropy(torch.tensor(lp), torch.tensor(target.astype(np.int64)),
                                             torch.tensor(weight), reduction=reduction, label_smoothing=0.3)
    attrs = {"reduction": reduction, "label_smoothing": 0.3}
    (got,) = run_op("negative_log_likelihood", [lp, target, weight], attrs)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12)
    check_grad("negative_log_likelihood", [lp, target, weight], attrs)
    check_grad("cross_entropy", [x, target, weight], attrs)


def _unweighted(name, inputs, attrs):
    """Op `name` on NumPy inputs with its class weights left out (None)."""
    (out,) = _C.call(name, [_C.TensorBase(a) for a in inputs] + [None], attrs)
    return out.asnumpy()


def test_class_losses_leave_ignored_samples_out():
    x, target = _class_case((4, 3), "indices", False)
    target[1] = 7
    lp = log_softmax(x)
    for name, inp in (("cross_entropy", x), ("negative_log_likelihood", lp)):
        loss = _unweighted(name, [inp, target], {"ignore_index": 7, "reduction": "none"})
        assert loss[1] == 0.0
        mean = _unweighted(name, [inp, target], {"ignore_index": 7})
        np.testing.assert_allclose(mean, np.delete(loss, 1).mean(), rtol=1e-12)
    # Every sample ignored: the mean is 0 / 0, as PyTorch's.
    with np.errstate(invalid="ignore"):
        assert np.isnan(_unweighted("cross_entropy", [x, np.full(4, 7, np.int32)], {"ignore_index": 7}))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_with_total_weight(reduction):
    torch = pytest.importorskip("torch")
    x, target = _class_case((6, 4), "indices", True)
    lp = log_softmax(x)
    weight = RNG.uniform(0.5, 2, size=4)
    loss, total = run_op("nll_loss_with_total_weight", [lp, target, weight], {"reduction": reduction})
    want = torch.nn.functional.nll_loss(torch.tensor(lp), torch.tensor(target.astype(np.int64)),
                                        torch.tensor(weight), reduction=reduction)
    np.testing.assert_allclose(loss, want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(total, weight[target[target != -100]].sum(), rtol=1e-12)
    check_grad("nll_loss_with_total_weight", [lp, target, weight], {"reduction": reduction})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("is_grad", [False, True])
def test_sparse_softmax_cross_entropy_with_logits(dtype, is_grad):
    x, target = _class_case((5, 4), "indices", False)
    x = x.astype(dtype)
    (out,) = run_op("sparse_softmax_cross_entropy_with_logits", [x, target], {"is_grad": is_grad})
    lsm = log_softmax(x)
    want = (np.exp(lsm) - np.eye(4)[target]) / 5 if is_grad else -lsm[np.arange(5), target].mean()
    assert out.dtype == dtype and out.shape == np.shape(want)
    np.testing.assert_allclose(out, want, **tol(dtype))
    check_grad("sparse_softmax_cross_entropy_with_logits", [x, target], {"is_grad": is_grad})


def test_class_loss_errors():
    x = np.zeros((3, 4))
    labels = np.zeros(3, np.int32)
    for name in ["cross_entropy", "negative_log_likelihood"]:
        expect_error(ValueError, [f"[{name}]", "'reduction'", "'mean', 'sum' or 'none'", "'avg'"], name,
                     [x, labels, np.ones(4)], {"reduction": "avg"})
        expect_error(TypeError, [f"[{name}]", "'ignore_index'", "an int"], name, [x, labels, np.ones(4)],
                     {"ignore_index": 1.5})
        with pytest.raises(ValueError, match=rf"\[{name}\] 'input' must be \(N, C\) or \(N, C, d1, ...\), "
                                             r"but got shape \(4,\)"):
            _unweighted(name, [np.zeros(4), np.zeros(4, np.int32)], {})
    expect_error(ValueError, ["For 'cross_entropy', the shape of 'weight' must be (C,) = (4,)", "got (3,)"],
                 "cross_entropy", [x, labels, np.ones(3)], {"label_smoothing": 0.1})
    expect_error(ValueError, ["For 'nll_loss', the shape of 'weight' must be (C,) = (4,)", "got (2, 2)"],
                 "nll_loss_with_total_weight", [x, labels, np.ones((2, 2))])
    expect_error(TypeError, ["[sparse_softmax_cross_entropy_with_logits]", "'is_grad'", "a bool"],
                 "sparse_softmax_cross_entropy_with_logits", [x, labels], {"is_grad": 1})
    expect_error(ValueError, ["[sparse_softmax_cross_entropy]", "'logits'", "2-D"],
                 "sparse_softmax_cross_entropy_with_logits", [np.zeros(4), labels])
    with pytest.raises(ValueError, match=r"\[nll_loss_with_total_weight\] input 2 is an undefined tensor"):
        _C.call("nll_loss_with_total_weight", [_C.TensorBase(x), _C.TensorBase(labels), None], {})


def test_class_loss_python_forms():
    assert (str(inspect.signature(ops.cross_entropy))
            == "(input, target, weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)")
    assert (str(inspect.signature(ops.nll_loss))
            == "(inputs, target, weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)")
    assert str(inspect.signature(ops.SparseSoftmaxCrossEntropyWithLogits)) == "(is_grad=False)"
    assert str(inspect.signature(ops.NLLLoss)) == "(reduction='mean', ignore_index=-100)"
    for cls in (ops.SparseSoftmaxCrossEntropyWithLogits, ops.NLLLoss):
        assert issubclass(cls, ops.Primitive)
    with pytest.raises(ValueError, match=r"\[nll_loss_with_total_weight\] attribute 'reduction'"):
        ops.NLLLoss(reduction="avg")
    with pytest.raises(ValueError, match=r"\[cross_entropy\] attribute 'reduction'"):
        ops.cross_entropy(ms.Tensor(np.zeros((2, 3))), ms.Tensor(np.zeros(2, np.int32)), reduction="avg")


# --- Elementwise losses of two tensors ------------------------------------------------------------------
def _reduce(loss, reduction):
    return {"mean": loss.mean(), "sum": loss.sum(), "none": loss}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted):
    p = RNG.uniform(0.05, 0.95, size=(4, 3))
    y = RNG.uniform(0, 1, size=(4, 3))
    w = RNG.uniform(0.5, 2, size=(4, 3)) if weighted else None
    inputs = [p, y] + ([w] if weighted else [])
    (loss,) = run_op("binary_cross_entropy", inputs, {"reduction": reduction}) if weighted else \
        [ops.binary_cross_entropy(ms.Tensor(p), ms.Tensor(y), reduction=reduction).asnumpy()]
    per = -(y * np.log(p) + (1 - y) * np.log(1 - p)) * (1 if w is None else w)
    np.testing.assert_allclose(loss, _reduce(per, reduction), rtol=1e-12, atol=1e-12)
    if weighted:
        check_grad("binary_cross_entropy", inputs, {"reduction": reduction}, wrt=(0, 1, 2))


def test_binary_cross_entropy_clamps_log_and_checks_shapes():
    p = np.array([0.0, 1.0, 0.5], np.float32)
    y = np.array([1.0, 0.0, 1.0], np.float32)
    loss = ops.binary_cross_entropy(ms.Tensor(p), ms.Tensor(y), reduction="none").asnumpy()
    np.testing.assert_allclose(loss, [100.0, 100.0, np.log(2)], rtol=1e-6)
    with pytest.raises(ValueError, match="'labels' must have the shape of 'logits'"):
        ops.binary_cross_entropy(ms.Tensor(p), ms.Tensor(y[:2]))
    with pytest.raises(ValueError, match="reduction"):
        ops.BinaryCrossEntropy(reduction="avg")


def smooth_l1_ref(x, y, beta):
    d = np.abs(x - y)
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("beta", [1.0, 0.3])
def test_smooth_l1_and_huber(reduction, beta):
    x, y = RNG.normal(size=(3, 5)), RNG.normal(size=(3, 5))
    (loss,) = run_op("smooth_l1_loss", [x, y], {"beta": beta, "reduction": reduction})
    np.testing.assert_allclose(loss, _reduce(smooth_l1_ref(x, y, beta), reduction), rtol=1e-12)
    check_grad("smooth_l1_loss", [x, y], {"beta": beta, "reduction": reduction}, wrt=(0, 1))
    (loss,) = run_op("huber_loss", [x, y], {"delta": beta, "reduction": reduction})
    np.testing.assert_allclose(loss, _reduce(beta * smooth_l1_ref(x, y, beta), reduction), rtol=1e-12)
    check_grad("huber_loss", [x, y], {"delta": beta, "reduction": reduction}, wrt=(0, 1))


def test_smooth_l1_defaults_and_errors():
    x, y = ms.Tensor(np.array([0.0, 3.0], np.float32)), ms.Tensor(np.array([0.5, 0.0], np.float32))
    np.testing.assert_allclose(ops.smooth_l1_loss(x, y).asnumpy(), [0.125, 2.5])  # 'none' by default
    np.testing.assert_allclose(ops.huber_loss(x, y).asnumpy(), 1.3125)  # 'mean' by default
    with pytest.raises(ValueError, match="'beta' must be positive"):
        ops.smooth_l1_loss(x, y, beta=0.0)
    with pytest.raises(ValueError, match="'delta' must be positive"):
        ops.huber_loss(x, y, delta=-1.0)
    with pytest.raises(ValueError, match="'target' must have the shape of 'input'"):
        ops.smooth_l1_loss(x, ms.Tensor(np.zeros(3, np.float32)))


@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
def test_kl_div(reduction):
    logp = log_softmax(RNG.normal(size=(4, 5)))
    q = np.exp(log_softmax(RNG.normal(size=(4, 5))))
    q[0, 1] = 0.0
    (loss,) = run_op("kl_div", [logp, q], {"reduction": reduction})
    per = np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - logp), 0.0)
    want = per.sum() / 4 if reduction == "batchmean" else _reduce(per, reduction)
    np.testing.assert_allclose(loss, want, rtol=1e-12, atol=1e-12)
    check_grad("kl_div", [logp, q], {"reduction": reduction}, wrt=(0,))
    with pytest.raises(ValueError, match="reduction"):
        run_op("kl_div", [logp, q], {"reduction": "avg"})


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_cosine_embedding_loss(reduction, margin):
    a, b = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 4))
    t = np.array([1, -1, 1, -1, -1, 1], np.int32)
    (loss,) = run_op("cosine_embedding_loss", [a, b, t], {"margin": margin, "reduction": reduction})
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    per = np.where(t == 1, 1 - cos, np.maximum(cos - margin, 0))
    np.testing.assert_allclose(loss, _reduce(per, reduction), rtol=1e-12, atol=1e-12)
    check_grad("cosine_embedding_loss", [a, b, t], {"margin": margin, "reduction": reduction}, wrt=(0, 1))
    with pytest.raises(ValueError, match="'target' must have the shape of the inputs"):
        run_op("cosine_embedding_loss", [a, b, t[:3]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_ranking_loss(reduction):
    a, b = RNG.normal(size=(7,)), RNG.normal(size=(7,))
    t = np.sign(RNG.normal(size=(7,)))
    (loss,) = run_op("margin_ranking_loss", [a, b, t], {"margin": 0.2, "reduction": reduction})
    np.testing.assert_allclose(loss, _reduce(np.maximum(-t * (a - b) + 0.2, 0), reduction), rtol=1e-12)
    check_grad("margin_ranking_loss", [a, b, t], {"margin": 0.2, "reduction": reduction}, wrt=(0, 1))
    with pytest.raises(ValueError, match="'target' must have the shape of 'input1'"):
        run_op("margin_ranking_loss", [a, b, t[:3]])
