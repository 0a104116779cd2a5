"""Optimizer update rules against NumPy over a few steps."""
import math

import numpy as np
import pytest

import msrt as ms
from msrt import Parameter, Tensor, nn

RNG = np.random.default_rng(21)
SHAPES = {"fc.weight": (2, 3), "fc.bias": (2,), "bn.gamma": (2,)}
INIT = {name: RNG.standard_normal(shape).astype(np.float32) for name, shape in SHAPES.items()}
GRADS = [{name: RNG.standard_normal(shape).astype(np.float32) for name, shape in SHAPES.items()} for _ in range(4)]
STEPS = len(GRADS)


def make_params(names=tuple(SHAPES)):
    return [Parameter(Tensor(INIT[n].copy()), name=n) for n in names]


def run(opt, params):
    for g in GRADS:
        opt(tuple(Tensor(g[p.name]) for p in params))
    return {p.name: p.asnumpy() for p in params}


def check(result, expected):
    for name, value in expected.items():
        np.testing.assert_allclose(result[name], value, rtol=2e-5, atol=2e-6, err_msg=name)


def decays(name):  # the default filter: no 'beta' or 'gamma' in the name
    return "beta" not in name and "gamma" not in name


# --- Momentum -------------------------------------------------------------------------
@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("weight_decay,loss_scale", [(0.0, 1.0), (0.01, 1.0), (0.01, 4.0)])
def test_momentum(nesterov, weight_decay, loss_scale):
    params = make_params()
    opt = nn.Momentum(params, learning_rate=0.1, momentum=0.9, weight_decay=weight_decay, loss_scale=loss_scale,
                      use_nesterov=nesterov)
    result = run(opt, params)
    expected = {}
    for name in SHAPES:
        p, acc = INIT[name].astype(np.float64), np.zeros(SHAPES[name])
        for g in GRADS:
            grad = g[name].astype(np.float64)
            if decays(name):
                grad = grad + weight_decay * loss_scale * p
            grad = grad / loss_scale
            acc = 0.9 * acc + grad
            p = p - 0.1 * (grad + 0.9 * acc if nesterov else acc)
        expected[name] = p
    check(result, expected)
    assert [m.name for m in opt.moments] == ["moments.fc.weight", "moments.fc.bias", "moments.bn.gamma"]


def test_momentum_errors():
    with pytest.raises(ValueError, match="momentum"):
        nn.Momentum(make_params(), 0.1, -0.5)
    with pytest.raises(TypeError):
        nn.Momentum(make_params(), 0.1, "0.9")
    with pytest.raises(ValueError, match="empty"):
        nn.Momentum([], 0.1, 0.9)
    with pytest.raises(ValueError, match="learning_rate"):
        nn.Momentum(make_params(), -0.1, 0.9)
    with pytest.raises(ValueError, match="weight_decay"):
        nn.Momentum(make_params(), 0.1, 0.9, weight_decay=-1.0)
    with pytest.raises(ValueError, match="loss_scale"):
        nn.Momentum(make_params(), 0.1, 0.9, loss_scale=0.0)
    with pytest.raises(TypeError):
        nn.Momentum([1, 2], 0.1, 0.9)


# --- SGD ------------------------------------------------------------------------------
@pytest.mark.parametrize("momentum,dampening,nesterov,weight_decay", [
    (0.0, 0.0, False, 0.0),
    (0.0, 0.0, False, 0.05),
    (0.9, 0.0, False, 0.0),
    (0.9, 0.0, True, 0.01),
    (0.9, 0.3, False, 0.01),
])
def test_sgd(momentum, dampening, nesterov, weight_decay):
    params = make_params()
    opt = nn.SGD(params, learning_rate=0.05, momentum=momentum, dampening=dampening, nesterov=nesterov,
                 weight_decay=weight_decay, loss_scale=2.0)
    result = run(opt, params)
    expected = {}
    for name in SHAPES:
        p, acc, first = INIT[name].astype(np.float64), np.zeros(SHAPES[name]), True
        for g in GRADS:
            grad = g[name] / 2.0 + weight_decay * p  # SGD decays every parameter
            if momentum > 0:
                acc = grad if first else momentum * acc + (1 - dampening) * grad
                first = False
                grad = grad + momentum * acc if nesterov else acc
            p = p - 0.05 * grad
        expected[name] = p
    check(result, expected)
    if momentum > 0:
        assert all((s.asnumpy() == 0).all() for s in opt.stat)


def test_sgd_defaults_and_errors():
    opt = nn.SGD(make_params())
    np.testing.assert_allclose(opt.learning_rate.asnumpy(), 0.1)
    with pytest.raises(ValueError, match="nesterov"):
        nn.SGD(make_params(), nesterov=True)
    with pytest.raises(ValueError, match="dampening"):
        nn.SGD(make_params(), dampening=-1.0)


# --- Adam ------------------------------------------------------------------------------
@pytest.mark.parametrize("nesterov,weight_decay", [(False, 0.0), (True, 0.0), (False, 0.02)])
def test_adam(nesterov, weight_decay):
    params = make_params()
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.01
    opt = nn.Adam(params, learning_rate=lr, use_nesterov=nesterov, weight_decay=weight_decay)
    result = run(opt, params)
    expected = {}
    for name in SHAPES:
        p, m, v = INIT[name].astype(np.float64), np.zeros(SHAPES[name]), np.zeros(SHAPES[name])
        for step, g in enumerate(GRADS, 1):
            grad = g[name] + (weight_decay * p if decays(name) else 0)
            m = m + (grad - m) * (1 - b1)
            v = v + (grad * grad - v) * (1 - b2)
            lr_t = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
            num = m * b1 + (1 - b1) * grad if nesterov else m
            p = p - lr_t * num / (np.sqrt(v) + eps)
        expected[name] = p
    check(result, expected)
    np.testing.assert_allclose(opt.beta1_power.asnumpy(), [b1 ** STEPS], rtol=1e-6)
    np.testing.assert_allclose(opt.beta2_power.asnumpy(), [b2 ** STEPS], rtol=1e-6)
    assert opt.moment1[0].name == "moment1.fc.weight" and opt.moment2[2].name == "moment2.bn.gamma"


def test_adam_checks():
    with pytest.raises(ValueError, match="beta1"):
        nn.Adam(make_params(), beta1=1.0)
    with pytest.raises(ValueError, match="eps"):
        nn.Adam(make_params(), eps=0.0)
    with pytest.raises(TypeError):
        nn.Adam(make_params(), beta2=1)


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_weight_decay(weight_decay):
    params = make_params()
    b1, b2, eps, lr = 0.9, 0.999, 1e-6, 0.01
    opt = nn.AdamWeightDecay(params, learning_rate=lr, weight_decay=weight_decay)
    result = run(opt, params)
    expected = {}
    for name in SHAPES:
        p, m, v = INIT[name].astype(np.float64), np.zeros(SHAPES[name]), np.zeros(SHAPES[name])
        for g in GRADS:
            grad = g[name].astype(np.float64)
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            update = m / (np.sqrt(v) + eps) + (weight_decay * p if decays(name) else 0)
            p = p - lr * update
        expected[name] = p
    check(result, expected)
    assert opt.moments1[1].name == "adam_m.fc.bias" and opt.moments2[1].name == "adam_v.fc.bias"


# --- learning rates ---------------------------------------------------------------------------
def _sgd_reference(lrs):
    expected = {}
    for name in SHAPES:
        p = INIT[name].astype(np.float64)
        for step, g in enumerate(GRADS):
            p = p - lrs[step] * g[name]
        expected[name] = p
    return expected


@pytest.mark.parametrize("kind", ["list", "tensor", "tuple-short"])
def test_dynamic_learning_rate_lists(kind):
    values = [0.1, 0.05, 0.02, 0.01]
    if kind == "list":
        lr, used = values, values
    elif kind == "tensor":
        lr, used = Tensor(np.array(values, np.float32)), values
    else:  # past the end, the last value is used
        lr, used = (0.1, 0.05), [0.1, 0.05, 0.05, 0.05]
    params = make_params()
    opt = nn.SGD(params, learning_rate=lr)
    assert opt.dynamic_lr
    check(run(opt, params), _sgd_reference(used))
    np.testing.assert_array_equal(opt.global_step.asnumpy(), [STEPS])


@pytest.mark.parametrize("schedule", [
    lambda: nn.ExponentialDecayLR(0.1, 0.9, 2),
    lambda: nn.ExponentialDecayLR(0.1, 0.9, 2, is_stair=True),
    lambda: nn.CosineDecayLR(0.01, 0.1, 3),
    lambda: nn.PolynomialDecayLR(0.1, 0.01, 3, 0.5),
    lambda: nn.WarmUpLR(0.1, 2),
])
def test_learning_rate_schedules_in_optimizer(schedule):
    sched = schedule()
    used = [float(sched(Tensor(np.int32(i))).asnumpy()) for i in range(STEPS)]
    params = make_params()
    opt = nn.SGD(params, learning_rate=sched)
    check(run(opt, params), _sgd_reference(used))


def test_tensor_learning_rate_fixed():
    params = make_params()
    opt = nn.SGD(params, learning_rate=Tensor(np.float32(0.05)))
    assert not opt.dynamic_lr
    check(run(opt, params), _sgd_reference([0.05] * STEPS))


def test_group_params_lr_and_weight_decay():
    w, b, g = params = make_params()
    groups = [{"params": [w], "lr": 0.05, "weight_decay": 0.01}, {"params": [b, g]}]
    opt = nn.Momentum(groups, learning_rate=0.1, momentum=0.9, weight_decay=0.0)
    result = run(opt, params)
    settings = {"fc.weight": (0.05, 0.01), "fc.bias": (0.1, 0.0), "bn.gamma": (0.1, 0.0)}
    expected = {}
    for name, (lr, wd) in settings.items():
        p, acc = INIT[name].astype(np.float64), 0.0
        for gr in GRADS:
            grad = gr[name] + wd * p
            acc = 0.9 * acc + grad
            p = p - lr * acc
        expected[name] = p
    check(result, expected)
    assert opt.is_group and opt.is_group_lr
    np.testing.assert_allclose(opt.get_lr_parameter(w).asnumpy(), 0.05)
    np.testing.assert_allclose(opt.get_lr_parameter([b])[0].asnumpy(), 0.1)


def test_group_params_decay_gamma_when_group_says_so_and_order_params():
    w, b, g = params = make_params()
    groups = [{"params": [g], "weight_decay": 0.1}, {"params": [w, b], "lr": [0.1, 0.05, 0.02, 0.01]},
              {"order_params": params}]
    opt = nn.SGD(groups, learning_rate=0.2)
    assert [p.name for p in opt.parameters] == ["fc.weight", "fc.bias", "bn.gamma"]
    result = run(opt, params)
    expected = {}
    for name in SHAPES:
        p = INIT[name].astype(np.float64)
        for step, gr in enumerate(GRADS):
            lr = [0.1, 0.05, 0.02, 0.01][step] if name != "bn.gamma" else 0.2
            wd = 0.1 if name == "bn.gamma" else 0.0
            p = p - lr * (gr[name] + wd * p)
        expected[name] = p
    check(result, expected)


def test_group_params_errors():
    w, b, g = make_params()
    with pytest.raises(KeyError):
        nn.SGD([{"params": [w], "momentum": 0.1}])
    with pytest.raises(RuntimeError, match="already exists"):
        nn.SGD([{"params": [w]}, {"params": [w]}])
    with pytest.raises(TypeError):
        nn.SGD([{"params": [w]}, b])


def test_schedule_values_match_formulas():
    def val(s, step):
        return float(s(Tensor(np.int32(step))).asnumpy())

    assert val(nn.ExponentialDecayLR(0.1, 0.9, 4), 2) == pytest.approx(0.1 * 0.9 ** 0.5, rel=1e-6)
    assert val(nn.ExponentialDecayLR(0.1, 0.9, 4, True), 6) == pytest.approx(0.09, rel=1e-6)
    assert val(nn.NaturalExpDecayLR(0.1, 0.9, 4), 2) == pytest.approx(0.1 * math.exp(-0.45), rel=1e-6)
    assert val(nn.InverseDecayLR(0.1, 0.5, 2), 2) == pytest.approx(0.1 / 1.5, rel=1e-6)
    assert val(nn.CosineDecayLR(0.01, 0.1, 4), 2) == pytest.approx(0.055, rel=1e-6)
    assert val(nn.CosineDecayLR(0.01, 0.1, 4), 10) == pytest.approx(0.01, rel=1e-6)
    assert val(nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5), 2) == pytest.approx(0.09 * 0.5 ** 0.5 + 0.01, rel=1e-6)
    assert val(nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5, True), 6) == pytest.approx(0.09 * 0.25 ** 0.5 + 0.01, rel=1e-6)
    assert val(nn.WarmUpLR(0.1, 4), 1) == pytest.approx(0.025, rel=1e-6)
    out = nn.WarmUpLR(0.1, 4)(Tensor(np.array([2], np.int32)))
    assert out.shape == (1,)
    with pytest.raises(TypeError):
        nn.WarmUpLR(1, 4)
    with pytest.raises(ValueError):
        nn.CosineDecayLR(0.1, 0.01, 4)


def test_dynamic_lr_functions_match_mindspore_examples():
    assert nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]) == [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01,
                                                                       0.01, 0.01]
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1), [0.1, 0.1, 0.09, 0.09, 0.081, 0.081])
    np.testing.assert_allclose(nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True),
                               [0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657])
    np.testing.assert_allclose(nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True),
                               [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333, 0.028571428571428574])
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2), [0.1, 0.1, 0.055, 0.055, 0.01, 0.01])
    np.testing.assert_allclose(nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5),
                               [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01])
    np.testing.assert_allclose(nn.warmup_lr(0.1, 6, 2, 2), [0.0, 0.0, 0.05, 0.05, 0.1, 0.1])
    with pytest.raises(ValueError):
        nn.piecewise_constant_lr([2, 1], [0.1, 0.2])


def test_user_defined_schedule_reads_the_global_step_tensor():
    class Inverse(nn.LearningRateSchedule):
        def construct(self, global_step):
            return 0.1 / (global_step.astype(ms.float32) + 1.0)

    params = make_params()
    opt = nn.SGD(params, learning_rate=Inverse())
    check(run(opt, params), _sgd_reference([0.1 / (i + 1) for i in range(STEPS)]))
