"""RMSProp, Adagrad and Lamb over several steps against NumPy references of
MindSpore's formulas (and torch.optim where the formulas agree), their
arguments' checks, and their steps inside TrainOneStepCell in both modes."""
import numpy as np
import pytest

import msrt as ms
from msrt import Parameter, Tensor, nn

from .test_optim import GRADS, INIT, SHAPES, STEPS, check, decays, make_params, run


def rms_prop_reference(lrs, decay, momentum, eps, centered, weight_decay=0.0, loss_scale=1.0):
    expected = {}
    for name in SHAPES:
        p = INIT[name].astype(np.float64)
        ms_, mom, mg = np.ones(SHAPES[name]), np.zeros(SHAPES[name]), np.zeros(SHAPES[name])
        for step, g in enumerate(GRADS):
            grad = g[name].astype(np.float64)
            if decays(name):
                grad = grad + weight_decay * loss_scale * p
            grad = grad / loss_scale
            ms_ = decay * ms_ + (1 - decay) * grad * grad
            denom = ms_ + eps
            if centered:
                mg = decay * mg + (1 - decay) * grad
                denom = denom - mg * mg
            mom = momentum * mom + lrs[step] * grad / np.sqrt(denom)
            p = p - mom
        expected[name] = p
    return expected


# --- RMSProp ------------------------------------------------------------------------------
@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum,weight_decay,loss_scale", [(0.0, 0.0, 1.0), (0.9, 0.0, 1.0), (0.5, 0.01, 4.0)])
def test_rmsprop(centered, momentum, weight_decay, loss_scale):
    params = make_params()
    opt = nn.RMSProp(params, learning_rate=0.01, decay=0.8, momentum=momentum, epsilon=1e-6, centered=centered,
                     weight_decay=weight_decay, loss_scale=loss_scale)
    expected = rms_prop_reference([0.01] * STEPS, 0.8, momentum, 1e-6, centered, weight_decay, loss_scale)
    check(run(opt, params), expected)
    assert opt.ms[0].name == "mean_square.fc.weight" and opt.moment[2].name == "moment.bn.gamma"
    np.testing.assert_array_equal(nn.RMSProp(make_params()).ms[1].asnumpy(), np.ones(2))
    assert hasattr(opt, "mg") == centered


def test_rmsprop_dynamic_learning_rate():
    params = make_params()
    lrs = [0.1, 0.05, 0.02, 0.01]
    opt = nn.RMSProp(params, learning_rate=lrs, momentum=0.0)
    check(run(opt, params), rms_prop_reference(lrs, 0.9, 0.0, 1e-10, False))


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_matches_torch(centered):
    # MindSpore divides by sqrt(ms + eps), torch by sqrt(ms) + eps; with an
    # epsilon too small to count both are sqrt(ms). MindSpore's mean square
    # starts at ones, so torch's state starts there too.
    torch = pytest.importorskip("torch")
    params = make_params()
    opt = nn.RMSProp(params, learning_rate=0.01, decay=0.8, momentum=0.9, epsilon=1e-30, centered=centered,
                     weight_decay=0.01)
    result = run(opt, params)
    tparams = {n: torch.tensor(INIT[n].astype(np.float64), requires_grad=True) for n in SHAPES}
    decayed = [tparams[n] for n in SHAPES if decays(n)]
    plain = [tparams[n] for n in SHAPES if not decays(n)]
    topt = torch.optim.RMSprop([{"params": decayed, "weight_decay": 0.01}, {"params": plain}], lr=0.01, alpha=0.8,
                               eps=1e-30, momentum=0.9, centered=centered)
    for n, p in tparams.items():
        zeros = torch.zeros(SHAPES[n], dtype=torch.float64)
        topt.state[p] = {"step": torch.tensor(0.0), "square_avg": torch.ones(SHAPES[n], dtype=torch.float64),
                         "momentum_buffer": zeros.clone(), "grad_avg": zeros.clone()}
    for g in GRADS:
        for n, p in tparams.items():
            p.grad = torch.tensor(g[n].astype(np.float64))
        topt.step()
    check(result, {n: p.detach().numpy() for n, p in tparams.items()})


def test_rmsprop_errors():
    with pytest.raises(TypeError, match="decay"):
        nn.RMSProp(make_params(), decay=1)
    with pytest.raises(ValueError, match="decay"):
        nn.RMSProp(make_params(), decay=-0.1)
    with pytest.raises(ValueError, match="momentum"):
        nn.RMSProp(make_params(), momentum=-0.5)
    with pytest.raises(ValueError, match="epsilon"):
        nn.RMSProp(make_params(), epsilon=0.0)
    with pytest.raises(TypeError, match="centered"):
        nn.RMSProp(make_params(), centered=1)
    with pytest.raises(TypeError, match="use_locking"):
        nn.RMSProp(make_params(), use_locking=None)
    with pytest.raises(ValueError, match="learning_rate"):
        nn.RMSProp(make_params(), learning_rate=-0.1)


# --- Adagrad ------------------------------------------------------------------------------
def adagrad_reference(lrs, accum, update_slots=True, weight_decay=0.0, groups=None):
    expected = {}
    for name in SHAPES:
        p, acc = INIT[name].astype(np.float64), np.full(SHAPES[name], accum)
        lr_of, wd = (lambda step: lrs[step]), weight_decay if decays(name) else 0.0
        if groups is not None:
            lr_of, wd = groups[name]
        for step, g in enumerate(GRADS):
            grad = g[name].astype(np.float64) + wd * p
            if update_slots:
                acc = acc + grad * grad
            p = p - lr_of(step) * grad / np.sqrt(acc)
        expected[name] = p
    return expected


@pytest.mark.parametrize("update_slots,weight_decay", [(True, 0.0), (False, 0.0), (True, 0.05)])
def test_adagrad(update_slots, weight_decay):
    params = make_params()
    opt = nn.Adagrad(params, accum=0.2, learning_rate=0.1, update_slots=update_slots, weight_decay=weight_decay)
    check(run(opt, params), adagrad_reference([0.1] * STEPS, 0.2, update_slots, weight_decay))
    assert opt.accum[0].name == "accum.fc.weight"
    np.testing.assert_allclose(nn.Adagrad(make_params()).accum[1].asnumpy(), np.full(2, 0.1), rtol=1e-7)


def test_adagrad_groups_and_schedule():
    w, b, g = params = make_params()
    sched = nn.ExponentialDecayLR(0.1, 0.9, 1)
    used = [0.1 * 0.9 ** i for i in range(STEPS)]
    opt = nn.Adagrad([{"params": [w], "weight_decay": 0.1}, {"params": [b, g], "lr": 0.05}], learning_rate=sched)
    groups = {"fc.weight": (lambda s: used[s], 0.1), "fc.bias": (lambda s: 0.05, 0.0),
              "bn.gamma": (lambda s: 0.05, 0.0)}
    check(run(opt, params), adagrad_reference(None, 0.1, groups=groups))


def test_adagrad_matches_torch():
    torch = pytest.importorskip("torch")
    params = make_params()
    result = run(nn.Adagrad(params, accum=0.1, learning_rate=0.1), params)
    tparams = {n: torch.tensor(INIT[n].astype(np.float64), requires_grad=True) for n in SHAPES}
    topt = torch.optim.Adagrad(list(tparams.values()), lr=0.1, initial_accumulator_value=0.1, eps=0.0)
    for g in GRADS:
        for n, p in tparams.items():
            p.grad = torch.tensor(g[n].astype(np.float64))
        topt.step()
    check(result, {n: p.detach().numpy() for n, p in tparams.items()})


def test_adagrad_errors():
    with pytest.raises(TypeError, match="accum"):
        nn.Adagrad(make_params(), accum=1)
    with pytest.raises(ValueError, match="accum"):
        nn.Adagrad(make_params(), accum=-0.1)
    with pytest.raises(TypeError, match="update_slots"):
        nn.Adagrad(make_params(), update_slots="yes")
    with pytest.raises(ValueError, match="weight_decay"):
        nn.Adagrad(make_params(), weight_decay=-1.0)


# --- Lamb ---------------------------------------------------------------------------------
def lamb_reference(lr_of, weight_decay, decay_flag, b1=0.9, b2=0.999, eps=1e-6):
    """MindSpore's nn.Lamb (its _update_run_op) for each parameter."""
    expected = {}
    for name in SHAPES:
        p, m, v = INIT[name].astype(np.float64), np.zeros(SHAPES[name]), np.zeros(SHAPES[name])
        wd = weight_decay(name)
        for step, g in enumerate(GRADS, 1):
            grad = g[name].astype(np.float64)
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            mm, vv = m / (1 - b1 ** step), v / (1 - b2 ** step)
            w_norm, g_norm = np.linalg.norm(p), np.linalg.norm(grad)
            g_norm_hat = np.linalg.norm(mm / np.sqrt(vv + eps) + wd * p)
            ratio = w_norm / g_norm_hat if w_norm > 0 and g_norm > 0 else 1.0
            ratio = min(max(ratio, 0.0), 10.0)
            update = mm / (np.sqrt(vv) + eps) + (wd * p if decay_flag(name) else 0.0)
            p = p - ratio * lr_of(name, step - 1) * update
        expected[name] = p
    return expected


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_lamb(weight_decay):
    params = make_params()
    opt = nn.Lamb(params, learning_rate=0.01, weight_decay=weight_decay)
    expected = lamb_reference(lambda n, s: 0.01, lambda n: weight_decay, decays)
    check(run(opt, params), expected)
    np.testing.assert_array_equal(opt.global_step.asnumpy(), [STEPS])
    assert opt.moments1[0].name == "lamb_m.fc.weight" and opt.moments2[2].name == "lamb_v.bn.gamma"


def test_lamb_groups_and_dynamic_lr():
    w, b, g = params = make_params()
    lrs = [0.02, 0.01, 0.005, 0.002]
    opt = nn.Lamb([{"params": [w], "weight_decay": 0.1}, {"params": [b], "lr": 0.03},
                   {"params": [g], "weight_decay": 0.1}], learning_rate=lrs)
    expected = lamb_reference(lambda n, s: 0.03 if n == "fc.bias" else lrs[s],
                              lambda n: 0.0 if n == "fc.bias" else 0.1, lambda n: n != "fc.bias")
    check(run(opt, params), expected)
    np.testing.assert_array_equal(opt.global_step.asnumpy(), [STEPS])


def test_lamb_errors():
    with pytest.raises(TypeError):
        nn.Lamb(make_params())  # learning_rate is required
    with pytest.raises(ValueError, match="beta1"):
        nn.Lamb(make_params(), 0.1, beta1=1.0)
    with pytest.raises(TypeError, match="beta2"):
        nn.Lamb(make_params(), 0.1, beta2=1)
    with pytest.raises(ValueError, match="eps"):
        nn.Lamb(make_params(), 0.1, eps=-1e-6)


# --- in TrainOneStepCell, both modes ---------------------------------------------------------
OPTIMIZERS = {
    "rmsprop": lambda p: nn.RMSProp(p, learning_rate=0.01, momentum=0.9),
    "rmsprop-centered": lambda p: nn.RMSProp(p, learning_rate=0.01, centered=True, weight_decay=0.01),
    "adagrad": lambda p: nn.Adagrad(p, learning_rate=0.1),
    "lamb": lambda p: nn.Lamb(p, learning_rate=nn.ExponentialDecayLR(0.05, 0.9, 2), weight_decay=0.01),
}


def _train(make_opt, mode, steps=8):
    ms.set_context(mode=mode)
    try:
        ms.set_seed(5)
        net = nn.Dense(4, 3)
        loss_net = nn.WithLossCell(net, nn.MSELoss())
        step = nn.TrainOneStepCell(loss_net, make_opt(net.trainable_params()))
        step.set_train()
        rng = np.random.default_rng(4)
        x = Tensor(rng.standard_normal((8, 4)).astype(np.float32))
        y = Tensor(rng.standard_normal((8, 3)).astype(np.float32))
        losses = [float(step(x, y).asnumpy()) for _ in range(steps)]
        return losses, net.weight.asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_train_one_step_in_both_modes(name):
    eager, eager_w = _train(OPTIMIZERS[name], ms.PYNATIVE_MODE)
    graph, graph_w = _train(OPTIMIZERS[name], ms.GRAPH_MODE)
    assert eager[-1] < eager[0], eager
    np.testing.assert_allclose(graph, eager, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(graph_w, eager_w, rtol=1e-4, atol=1e-6)


def test_parameters_untouched_by_construction():
    params = make_params()
    nn.Lamb(params, 0.1)
    nn.RMSProp(params, centered=True)
    nn.Adagrad(params)
    for p in params:
        np.testing.assert_array_equal(p.asnumpy(), INIT[p.name])
    assert isinstance(params[0], Parameter)
