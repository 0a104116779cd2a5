"""Loss Cells against PyTorch: values and the gradients with respect to every
float input, in PYNATIVE and GRAPH_MODE, and MindSpore's errors for bad
constructor arguments."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(21)
MODES = [ms.PYNATIVE_MODE, ms.GRAPH_MODE]


def check(cell, torch_fn, inputs, grad_wrt, mode=ms.PYNATIVE_MODE, rtol=1e-5, atol=1e-6):
    ms.set_context(mode=mode)
    tensors = [Tensor(x) for x in inputs]
    loss = cell(*tensors).asnumpy()
    ts = [torch.tensor(x, requires_grad=i in grad_wrt) for i, x in enumerate(inputs)]
    want = torch_fn(*ts)
    np.testing.assert_allclose(loss, want.detach().numpy(), rtol=rtol, atol=atol)
    sens = RNG.uniform(0.5, 1.5, size=want.shape).astype(np.float32)
    (want * torch.tensor(sens)).sum().backward()
    grads = ms.grad(lambda *xs: (cell(*xs) * Tensor(sens)).sum(), grad_position=tuple(grad_wrt))(*tensors)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in zip(grad_wrt, grads):
        np.testing.assert_allclose(g.asnumpy(), ts[i].grad.numpy(), rtol=rtol, atol=atol, err_msg=f"input {i}")


def f32(*shape, low=None, high=None):
    if low is not None:
        return RNG.uniform(low, high, size=shape).astype(np.float32)
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("mode", MODES)
def test_bce_loss(reduction, mode):
    w = f32(3, 4, low=0.5, high=2)
    check(nn.BCELoss(weight=Tensor(w), reduction=reduction),
          lambda p, y: F.binary_cross_entropy(p, y, weight=torch.tensor(w), reduction=reduction),
          [f32(3, 4, low=0.05, high=0.95), f32(3, 4, low=0, high=1)], (0, 1), mode)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_loss(reduction):
    w, pw = f32(3, 4, low=0.5, high=2), f32(4, low=0.5, high=2)
    check(nn.BCEWithLogitsLoss(reduction=reduction, weight=Tensor(w), pos_weight=Tensor(pw)),
          lambda x, y: F.binary_cross_entropy_with_logits(x, y, weight=torch.tensor(w), pos_weight=torch.tensor(pw),
                                                          reduction=reduction),
          [f32(3, 4) * 3, f32(3, 4, low=0, high=1)], (0, 1))


@pytest.mark.parametrize("mode", MODES)
def test_nll_loss(mode):
    w = f32(5, low=0.5, high=2)
    logp = torch.log_softmax(torch.tensor(f32(6, 5)), 1).numpy()
    target = np.array([0, 4, -100, 2, 2, 1], np.int32)
    check(nn.NLLLoss(weight=Tensor(w)),
          lambda x, t: F.nll_loss(x, t.long(), weight=torch.tensor(w)), [logp, target], (0,), mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kwargs", [dict(), dict(label_smoothing=0.1), dict(ignore_index=1, reduction="sum"),
                                    dict(weight=True, label_smoothing=0.2), dict(reduction="none", weight=True)])
def test_cross_entropy_loss(mode, kwargs):
    kwargs = dict(kwargs)
    w = f32(5, low=0.5, high=2)
    if kwargs.pop("weight", False):
        cell = nn.CrossEntropyLoss(weight=Tensor(w), **kwargs)
        tkw = dict(kwargs, weight=torch.tensor(w))
    else:
        cell = nn.CrossEntropyLoss(**kwargs)
        tkw = kwargs
    target = np.array([0, 4, 1, 2, 1, 3], np.int32)
    check(cell, lambda x, t: F.cross_entropy(x, t.long(), **tkw), [f32(6, 5), target], (0,), mode)


def test_cross_entropy_loss_with_probabilities_and_spatial_input():
    probs = torch.softmax(torch.tensor(f32(4, 3, 2)), 1).numpy()
    check(nn.CrossEntropyLoss(label_smoothing=0.1), lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
          [f32(4, 3, 2), probs], (0, 1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_smooth_l1_loss(reduction, beta):
    check(nn.SmoothL1Loss(beta=beta, reduction=reduction),
          lambda x, y: F.smooth_l1_loss(x, y, beta=beta, reduction=reduction), [f32(4, 3), f32(4, 3)], (0, 1))


def test_smooth_l1_loss_default_reduction_is_none():
    assert nn.SmoothL1Loss()(Tensor(f32(4, 3)), Tensor(f32(4, 3))).shape == (4, 3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("mode", MODES)
def test_huber_loss(reduction, mode):
    check(nn.HuberLoss(reduction=reduction, delta=0.7),
          lambda x, y: F.huber_loss(x, y, reduction=reduction, delta=0.7), [f32(4, 3), f32(4, 3)], (0, 1), mode)


@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
def test_kl_div_loss(reduction):
    logp = torch.log_softmax(torch.tensor(f32(4, 5)), 1).numpy()
    q = torch.softmax(torch.tensor(f32(4, 5)), 1).numpy()
    check(nn.KLDivLoss(reduction=reduction), lambda x, y: F.kl_div(x, y, reduction=reduction), [logp, q], (0, 1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("mode", MODES)
def test_cosine_embedding_loss(reduction, mode):
    target = np.array([1, -1, 1, -1, -1], np.int32)
    check(nn.CosineEmbeddingLoss(margin=0.1, reduction=reduction),
          lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.1, reduction=reduction),
          [f32(5, 4), f32(5, 4), target], (0, 1), mode)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_ranking_loss(reduction):
    target = np.sign(f32(6)).astype(np.float32)
    check(nn.MarginRankingLoss(margin=0.2, reduction=reduction),
          lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.2, reduction=reduction),
          [f32(6), f32(6), target], (0, 1))


@pytest.mark.parametrize("make, exc, words", [
    (lambda: nn.BCELoss(weight=[1.0]), TypeError, "weight"),
    (lambda: nn.BCELoss(reduction="avg"), ValueError, "reduction"),
    (lambda: nn.BCEWithLogitsLoss(pos_weight=1.0), TypeError, "pos_weight"),
    (lambda: nn.SmoothL1Loss(beta=0), ValueError, "beta"),
    (lambda: nn.SmoothL1Loss(beta="1"), TypeError, "beta"),
    (lambda: nn.HuberLoss(delta=-1.0), ValueError, "delta"),
    (lambda: nn.KLDivLoss(reduction="avg"), ValueError, "batchmean"),
    (lambda: nn.CosineEmbeddingLoss(margin="0"), TypeError, "margin"),
    (lambda: nn.MarginRankingLoss(reduction=None), ValueError, "reduction"),
    (lambda: nn.CrossEntropyLoss(label_smoothing=2.0), ValueError, "label_smoothing"),
])
def test_constructor_errors(make, exc, words):
    with pytest.raises(exc, match=words):
        make()


def test_call_errors_name_the_op():
    with pytest.raises(ValueError, match=r"\[binary_cross_entropy\].*expected \(2, 3\), but got \(3, 2\)"):
        nn.BCELoss()(Tensor(f32(2, 3, low=0, high=1)), Tensor(f32(3, 2, low=0, high=1)))
    with pytest.raises(TypeError):
        nn.HuberLoss()(Tensor(np.ones(3, np.int32)), Tensor(np.ones(3, np.int32)))
