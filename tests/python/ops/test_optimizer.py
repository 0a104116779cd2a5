"""The in-place ops (assign family) and fused optimizer steps against NumPy
(MindSpore's formulas): the variable and the state inputs are updated in
place, the output is the variable itself, and readers see the writes."""
import numpy as np
import pytest

from .harness import _C, covers, tensor

covers("assign", "assign_add", "assign_sub", "apply_momentum", "apply_gradient_descent", "adam",
       "adam_weight_decay")

RNG = np.random.default_rng(11)
FLOATS = [np.float32, np.float64]


def tol(dtype):
    return dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


def scalar(v, dtype=np.float32):
    return tensor(np.array(v, dtype))


def call(name, inputs, attrs=None):
    (out,) = _C.call(name, inputs, attrs or {})
    assert out._same(inputs[0]), "in-place ops return their variable"
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_assign_family(dtype):
    base = RNG.uniform(-3, 3, size=(3, 4)).astype(dtype)
    value = RNG.uniform(-3, 3, size=(4,)).astype(dtype)
    var = tensor(base)
    call("assign_add", [var, tensor(value)])
    np.testing.assert_allclose(var.asnumpy(), base + value, rtol=1e-3 if dtype == np.float16 else 1e-7)
    call("assign_sub", [var, tensor(value)])
    call("assign_sub", [var, tensor(value)])
    loose = dtype == np.float16
    np.testing.assert_allclose(var.asnumpy(), (base + value) - value - value, rtol=1e-3 if loose else 1e-6,
                               atol=1e-2 if loose else 1e-6)
    call("assign", [var, tensor(value)])
    np.testing.assert_array_equal(var.asnumpy(), np.broadcast_to(value, (3, 4)))


def test_assign_converts_and_orders_reads():
    var = tensor(np.zeros((2, 2), np.float32))
    before = _C.call("add", [var, scalar(1.0)])[0]  # queued before the write: sees zeros
    call("assign", [var, tensor(np.array([[1, 2], [3, 4]], np.int64))])
    after = _C.call("add", [var, scalar(1.0)])[0]
    np.testing.assert_array_equal(before.asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(after.asnumpy(), [[2, 3], [4, 5]])
    b = tensor(np.zeros(3, np.bool_))
    call("assign", [b, tensor(np.array([True, False, True]))])
    assert b.asnumpy().tolist() == [True, False, True]
    s = tensor(np.array(1.0))
    call("assign_add", [s, tensor(np.array(2.0))])
    assert s.asnumpy() == 3.0


def test_assign_errors():
    with pytest.raises(ValueError, match=r"\[assign\] 'value' must broadcast to the shape of 'variable'.*\(2, 3\)"):
        _C.call("assign", [tensor(np.zeros(3)), tensor(np.zeros((2, 3)))], {})
    with pytest.raises(TypeError, match=r"\[assign_add\] input 'variable'.*Bool"):
        _C.call("assign_add", [tensor(np.zeros(3, np.bool_)), tensor(np.zeros(3, np.bool_))], {})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_momentum(dtype, nesterov):
    w = RNG.standard_normal((5, 7)).astype(dtype)
    acc = RNG.standard_normal((5, 7)).astype(dtype)
    var, accum = tensor(w), tensor(acc)
    lr, mom = 0.1, 0.9
    for _ in range(3):
        g = RNG.standard_normal((5, 7)).astype(dtype)
        call("apply_momentum", [var, accum, scalar(lr, dtype), tensor(g), scalar(mom, dtype)],
             {"use_nesterov": nesterov})
        acc = acc * dtype(mom) + g
        w = w - dtype(lr) * (g + dtype(mom) * acc) if nesterov else w - dtype(lr) * acc
    np.testing.assert_allclose(accum.asnumpy(), acc, **tol(dtype))
    np.testing.assert_allclose(var.asnumpy(), w, **tol(dtype))


def test_apply_momentum_large_and_scalar_shapes():
    w = RNG.standard_normal(200_000).astype(np.float32)
    var, accum = tensor(w), tensor(np.zeros_like(w))
    g = RNG.standard_normal(200_000).astype(np.float32)
    call("apply_momentum", [var, accum, tensor(np.array([0.5], np.float32)), tensor(g), scalar(0.9)])
    np.testing.assert_allclose(var.asnumpy(), w - np.float32(0.5) * g, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", FLOATS)
def test_apply_gradient_descent(dtype):
    w = RNG.standard_normal((4, 3)).astype(dtype)
    d = RNG.standard_normal((4, 3)).astype(dtype)
    var = tensor(w)
    call("apply_gradient_descent", [var, scalar(0.25, dtype), tensor(d)])
    np.testing.assert_allclose(var.asnumpy(), w - dtype(0.25) * d, **tol(dtype))


def adam_reference(w, m, v, b1p, b2p, lr, b1, b2, eps, g, nesterov):
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    m = m + (g - m) * (1 - b1)
    v = v + (g * g - v) * (1 - b2)
    direction = m * b1 + (1 - b1) * g if nesterov else m
    return w - lr_t * direction / (eps + np.sqrt(v)), m, v


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("nesterov", [False, True])
def test_adam(dtype, nesterov):
    w, m, v = (RNG.standard_normal((3, 4)).astype(dtype) for _ in range(3))
    v = np.abs(v)
    tv, tm, tvv = tensor(w), tensor(m), tensor(v)
    b1, b2, lr, eps = 0.9, 0.999, 0.01, 1e-8
    for step in range(1, 4):
        g = RNG.standard_normal((3, 4)).astype(dtype)
        call("adam", [tv, tm, tvv, scalar(b1 ** step, dtype), scalar(b2 ** step, dtype), scalar(lr, dtype),
                      scalar(b1, dtype), scalar(b2, dtype), scalar(eps, dtype), tensor(g)], {"use_nesterov": nesterov})
        w, m, v = adam_reference(w.astype(np.float64), m, v, b1 ** step, b2 ** step, lr, b1, b2, eps, g, nesterov)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(tm.asnumpy(), m, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(tvv.asnumpy(), v, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(tv.asnumpy(), w, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_adam_weight_decay(dtype):
    w, m, v, g = (RNG.standard_normal((6,)).astype(dtype) for _ in range(4))
    v = np.abs(v)
    tv, tm, tvv = tensor(w), tensor(m), tensor(v)
    lr, b1, b2, eps, decay = 0.01, 0.9, 0.999, 1e-6, 0.1
    call("adam_weight_decay", [tv, tm, tvv, scalar(lr, dtype), scalar(b1, dtype), scalar(b2, dtype),
                               scalar(eps, dtype), scalar(decay, dtype), tensor(g)])
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    w = w - lr * (m / (np.sqrt(v) + eps) + decay * w)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for got, ref in [(tm, m), (tvv, v), (tv, w)]:
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=rtol, atol=rtol)


def test_half_parameters_update_through_float32():
    w = RNG.standard_normal(8).astype(np.float16)
    var, accum = tensor(w), tensor(np.zeros(8, np.float16))
    g = RNG.standard_normal(8).astype(np.float16)
    call("apply_momentum", [var, accum, scalar(0.5, np.float16), tensor(g), scalar(0.9, np.float16)])
    assert var.asnumpy().dtype == np.float16
    np.testing.assert_allclose(var.asnumpy().astype(np.float32), w.astype(np.float32) - 0.5 * g.astype(np.float32),
                               rtol=2e-3, atol=2e-3)


def test_optimizer_errors():
    z = tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[apply_momentum\] input 'learning_rate' must hold a single value.*\(2,\)"):
        _C.call("apply_momentum", [z, tensor(np.zeros((2, 3), np.float32)), tensor(np.zeros(2, np.float32)), z,
                                   scalar(0.9)], {})
    with pytest.raises(ValueError, match=r"\[apply_momentum\] 'gradient' must have the shape of 'variable'"):
        _C.call("apply_momentum", [z, tensor(np.zeros((2, 3), np.float32)), scalar(0.1),
                                   tensor(np.zeros(3, np.float32)), scalar(0.9)], {})
    with pytest.raises(TypeError, match=r"\[apply_gradient_descent\] input 'delta' must have the dtype of 'variable'"):
        _C.call("apply_gradient_descent", [z, scalar(0.1), tensor(np.zeros((2, 3)))], {})
    with pytest.raises(TypeError, match=r"\[adam_weight_decay\] input 'var'.*Int32"):
        i = tensor(np.zeros(2, np.int32))
        _C.call("adam_weight_decay", [i, i, i] + [scalar(0.1)] * 5 + [i], {})
    with pytest.raises(TypeError, match=r"\[adam\] takes 10 inputs"):
        _C.call("adam", [z], {})


covers("clip_by_global_norm")


def test_clip_by_global_norm_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(5,)).astype(np.float32)]
    for clip_norm in (0.5, 100.0):
        outs = _C.call("clip_by_global_norm", [tensor(a) for a in arrays], {"clip_norm": clip_norm})
        params = [torch.zeros(a.shape, requires_grad=True) for a in arrays]
        for p, a in zip(params, arrays):
            p.grad = torch.tensor(a)
        torch.nn.utils.clip_grad_norm_(params, clip_norm)  # the same scaling (torch adds 1e-6 to the norm)
        for out, p in zip(outs, params):
            np.testing.assert_allclose(out.asnumpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)
    (one,) = _C.call("clip_by_global_norm", [tensor(arrays[1])], {"clip_norm": 1.0})
    np.testing.assert_allclose(np.linalg.norm(one.asnumpy()), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="'clip_norm' must be positive"):
        _C.call("clip_by_global_norm", [tensor(arrays[1])], {"clip_norm": 0.0})


covers("apply_rms_prop", "apply_centered_rms_prop", "apply_adagrad", "lamb")


def rms_prop_reference(w, ms, mom, lr, g, decay, momentum, eps, mg=None):
    ms = decay * ms + (1 - decay) * g * g
    if mg is None:
        denom = ms + eps
    else:
        mg = decay * mg + (1 - decay) * g
        denom = ms - mg * mg + eps
    mom = momentum * mom + lr * g / np.sqrt(denom)
    return w - mom, ms, mom, mg


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("centered", [False, True])
def test_apply_rms_prop(dtype, centered):
    w, mom = (RNG.standard_normal((4, 5)).astype(dtype) for _ in range(2))
    mg = (RNG.uniform(-0.9, 0.9, (4, 5))).astype(dtype)  # ms - mg^2 > 0 with ms >= 1: it stays so
    ms = np.abs(RNG.standard_normal((4, 5))).astype(dtype) + 1
    tw, tms, tmom, tmg = tensor(w), tensor(ms), tensor(mom), tensor(mg)
    lr, decay, momentum, eps = 0.01, 0.9, 0.5, 1e-6
    ref_mg = mg.astype(np.float64) if centered else None
    w, ms, mom = (a.astype(np.float64) for a in (w, ms, mom))
    for _ in range(3):
        g = RNG.standard_normal((4, 5)).astype(dtype)
        scalars = [scalar(v, dtype) for v in (lr, decay, momentum, eps)]
        if centered:
            call("apply_centered_rms_prop", [tw, tmg, tms, tmom, tensor(g)] + scalars)
        else:
            call("apply_rms_prop", [tw, tms, tmom, scalars[0], tensor(g)] + scalars[1:])
        w, ms, mom, ref_mg = rms_prop_reference(w, ms, mom, lr, g, decay, momentum, eps, ref_mg)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert np.isfinite(w).all()
    for got, ref in [(tms, ms), (tmom, mom), (tw, w)] + ([(tmg, ref_mg)] if centered else []):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("centered", [False, True])
def test_apply_rms_prop_matches_torch(centered):
    # torch divides by sqrt(ms) + eps and MindSpore by sqrt(ms + eps): with an
    # epsilon too small to count in float64 both are sqrt(ms). torch's
    # momentum buffer excludes lr, the same thing at a fixed lr.
    torch = pytest.importorskip("torch")
    w0 = RNG.standard_normal((3, 4))
    ms0 = np.abs(RNG.standard_normal((3, 4))) + 0.5
    param = torch.tensor(w0.copy(), requires_grad=True)
    opt = torch.optim.RMSprop([param], lr=0.05, alpha=0.8, eps=1e-300, momentum=0.7, centered=centered)
    zeros = torch.zeros(3, 4, dtype=torch.float64)
    opt.state[param] = {"step": torch.tensor(0.0), "square_avg": torch.tensor(ms0.copy()),
                        "momentum_buffer": zeros.clone(), "grad_avg": zeros.clone()}
    tw, tms, tmom, tmg = tensor(w0), tensor(ms0), tensor(np.zeros((3, 4))), tensor(np.zeros((3, 4)))
    for _ in range(4):
        g = RNG.standard_normal((3, 4))
        param.grad = torch.tensor(g)
        opt.step()
        scalars = [scalar(v, np.float64) for v in (0.05, 0.8, 0.7, 1e-300)]
        if centered:
            call("apply_centered_rms_prop", [tw, tmg, tms, tmom, tensor(g)] + scalars)
        else:
            call("apply_rms_prop", [tw, tms, tmom, scalars[0], tensor(g)] + scalars[1:])
    np.testing.assert_allclose(tw.asnumpy(), param.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tms.asnumpy(), opt.state[param]["square_avg"].numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("update_slots", [True, False])
def test_apply_adagrad(dtype, update_slots):
    w = RNG.standard_normal((3, 4)).astype(dtype)
    acc = (np.abs(RNG.standard_normal((3, 4))) + 0.1).astype(dtype)
    tw, tacc = tensor(w), tensor(acc)
    w, acc = w.astype(np.float64), acc.astype(np.float64)
    for _ in range(3):
        g = RNG.standard_normal((3, 4)).astype(dtype)
        call("apply_adagrad", [tw, tacc, scalar(0.1, dtype), tensor(g)], {"update_slots": update_slots})
        if update_slots:
            acc = acc + g.astype(np.float64) ** 2
        w = w - 0.1 * g / np.sqrt(acc)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(tacc.asnumpy(), acc, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(tw.asnumpy(), w, rtol=rtol, atol=rtol)


def test_apply_adagrad_matches_torch():
    torch = pytest.importorskip("torch")
    w0 = RNG.standard_normal(7)
    param = torch.tensor(w0.copy(), requires_grad=True)
    opt = torch.optim.Adagrad([param], lr=0.3, initial_accumulator_value=0.1, eps=0.0)
    tw, tacc = tensor(w0), tensor(np.full(7, 0.1))
    for _ in range(4):
        g = RNG.standard_normal(7)
        param.grad = torch.tensor(g)
        opt.step()
        call("apply_adagrad", [tw, tacc, scalar(0.3, np.float64), tensor(g)])
    np.testing.assert_allclose(tw.asnumpy(), param.detach().numpy(), rtol=1e-12, atol=1e-12)


def lamb_reference(w, m, v, lr, b1, b2, eps, decay, step, g, decay_flag=True):
    """MindSpore's nn.Lamb update of one parameter (its _update_run_op)."""
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    mm = m / (1 - b1 ** step)
    vv = v / (1 - b2 ** step)
    w_norm, g_norm = np.linalg.norm(w), np.linalg.norm(g)
    g_norm_hat = np.linalg.norm(mm / np.sqrt(vv + eps) + decay * w)
    ratio = (w_norm / g_norm_hat if g_norm > 0 else 1.0) if w_norm > 0 else 1.0
    ratio = np.clip(ratio, 0.0, 10.0)
    update = mm / (np.sqrt(vv) + eps)
    if decay_flag:
        update = update + decay * w
    return w - ratio * lr * update, m, v


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("decay_flag", [True, False])
def test_lamb(dtype, decay_flag):
    w = RNG.standard_normal((5, 3)).astype(dtype)
    m = RNG.standard_normal((5, 3)).astype(dtype) * 0.1
    v = np.abs(RNG.standard_normal((5, 3))).astype(dtype) * 0.1
    tw, tm, tv = tensor(w), tensor(m), tensor(v)
    w, m, v = (a.astype(np.float64) for a in (w, m, v))
    lr, b1, b2, eps, decay = 0.02, 0.9, 0.999, 1e-6, 0.05
    for step in range(1, 4):
        g = RNG.standard_normal((5, 3)).astype(dtype)
        call("lamb", [tw, tm, tv] + [scalar(x, dtype) for x in (lr, b1, b2, eps, decay, step)] + [tensor(g)],
             {"decay_flag": decay_flag})
        w, m, v = lamb_reference(w, m, v, lr, b1, b2, eps, decay, step, g.astype(np.float64), decay_flag)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for got, ref in [(tm, m), (tv, v), (tw, w)]:
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=rtol, atol=rtol)


def test_lamb_trust_ratio_edges():
    # A zero parameter or a zero gradient: the ratio is 1. A huge parameter: clipped to 10.
    for w, g in [(np.zeros(4), np.ones(4)), (np.ones(4), np.zeros(4)), (np.full(4, 1e6), np.ones(4))]:
        tw, tm, tv = tensor(w.copy()), tensor(np.zeros(4)), tensor(np.zeros(4))
        call("lamb", [tw, tm, tv] + [scalar(x, np.float64) for x in (0.1, 0.9, 0.999, 1e-6, 0.0, 1)] + [tensor(g)])
        ref, _, _ = lamb_reference(w, np.zeros(4), np.zeros(4), 0.1, 0.9, 0.999, 1e-6, 0.0, 1, g)
        np.testing.assert_allclose(tw.asnumpy(), ref, rtol=1e-12)
    assert abs(tw.asnumpy()[0] - (1e6 - 10 * 0.1 * 1 / (1 + 1e-6))) < 1e-6


def test_new_optimizer_op_errors():
    z = tensor(np.zeros((2, 3), np.float32))
    s = scalar(0.1)
    with pytest.raises(ValueError, match=r"\[apply_rms_prop\] 'moment' must have the shape of 'var'"):
        _C.call("apply_rms_prop", [z, z, tensor(np.zeros(3, np.float32)), s, z, s, s, s], {})
    with pytest.raises(ValueError, match=r"\[apply_centered_rms_prop\] input 'learning_rate' must hold a single"):
        _C.call("apply_centered_rms_prop", [z, z, z, z, z, tensor(np.zeros(2, np.float32)), s, s, s], {})
    with pytest.raises(TypeError, match=r"\[apply_adagrad\] input 'grad' must have the dtype of 'var'"):
        _C.call("apply_adagrad", [z, z, s, tensor(np.zeros((2, 3)))], {})
    with pytest.raises(TypeError, match=r"\[lamb\] takes 10 inputs"):
        _C.call("lamb", [z], {})


def test_new_optimizer_primitives():
    import msrt as ms

    var = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="var")
    accum = ms.Parameter(ms.Tensor(np.full(3, 0.1, np.float32)), name="accum")
    out = ms.ops.ApplyAdagrad(update_slots=True)(var, accum, 0.1, ms.Tensor(np.ones(3, np.float32)))
    assert out[0] is var and out[1] is accum
    np.testing.assert_allclose(var.asnumpy(), 1 - 0.1 / np.sqrt(1.1), rtol=1e-6)
    ms_ = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="ms")
    mom = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="mom")
    out = ms.ops.ApplyRMSProp()(var, ms_, mom, ms.Tensor(0.1, ms.float32), ms.Tensor(np.ones(3, np.float32)),
                                0.9, 0.0, 1e-10)
    assert out is var
    mg = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="mg")
    out = ms.ops.ApplyCenteredRMSProp()(var, mg, ms_, mom, ms.Tensor(np.ones(3, np.float32)),
                                        ms.Tensor(0.1, ms.float32), 0.9, 0.0, 1e-10)
    assert out is var
    np.testing.assert_allclose(mg.asnumpy(), 0.1, rtol=1e-6)
    assert ms.ops.operations.nn_ops.ApplyRMSProp is ms.ops.ApplyRMSProp


def test_new_optimizers_update_half_parameters_through_float32():
    w = RNG.standard_normal(8).astype(np.float16)
    g = RNG.standard_normal(8).astype(np.float16)
    w32, g32 = w.astype(np.float32), g.astype(np.float32)
    var, accum = tensor(w), tensor(np.full(8, 0.5, np.float16))
    call("apply_adagrad", [var, accum, scalar(0.1, np.float16), tensor(g)])
    np.testing.assert_allclose(var.asnumpy().astype(np.float32), w32 - 0.1 * g32 / np.sqrt(0.5 + g32 * g32),
                               rtol=2e-3, atol=2e-3)
    var, ms_, mom = tensor(w), tensor(np.ones(8, np.float16)), tensor(np.zeros(8, np.float16))
    call("apply_rms_prop", [var, ms_, mom, scalar(0.1, np.float16), tensor(g)] +
         [scalar(v, np.float16) for v in (0.9, 0.0, 1e-4)])
    assert var.asnumpy().dtype == np.float16
    ref = w32 - 0.1 * g32 / np.sqrt(0.9 + 0.1 * g32 * g32 + 1e-4)
    np.testing.assert_allclose(var.asnumpy().astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    var, m, v = tensor(w), tensor(np.zeros(8, np.float16)), tensor(np.zeros(8, np.float16))
    call("lamb", [var, m, v] + [scalar(x, np.float16) for x in (0.01, 0.9, 0.999, 1e-4, 0.0, 1)] + [tensor(g)])
    ref, _, _ = lamb_reference(w32.astype(np.float64), 0, 0, 0.01, 0.9, 0.999, 1e-4, 0.0, 1, g32.astype(np.float64))
    np.testing.assert_allclose(var.asnumpy().astype(np.float32), ref, rtol=2e-3, atol=2e-3)


covers("matmul_apply_momentum")


def _momentum_reference(w, acc, lr, a, b, mom, ta, tb):
    g = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    acc = acc * np.float32(mom) + g.astype(np.float32)
    return w - np.float32(lr) * acc, acc


@pytest.mark.parametrize("ta,tb", [(True, False), (False, False), (False, True), (True, True)])
@pytest.mark.parametrize("mom", [0.9, 0.0])
@pytest.mark.parametrize("rows", [48, 3])  # 3: a product too small for oneDNN (the reference loop)
def test_matmul_apply_momentum_is_matmul_then_apply_momentum(ta, tb, mom, rows):
    """The product added to momentum * accum in place (momentum 0 and tiny products run the product apart first:
    Note [Products into the accumulation]); the variable updated from the new accum and returned."""
    m, k, n = rows, 40, 24
    a = RNG.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = RNG.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    w = RNG.standard_normal((m, n)).astype(np.float32)
    acc = RNG.standard_normal((m, n)).astype(np.float32)
    var, accum = tensor(w), tensor(acc)
    attrs = {"transpose_a": ta, "transpose_b": tb, "use_nesterov": False}
    for _ in range(2):
        call("matmul_apply_momentum", [var, accum, scalar(0.05), tensor(a), tensor(b), scalar(mom)], attrs)
        w, acc = _momentum_reference(w, acc, 0.05, a, b, mom, ta, tb)
    np.testing.assert_allclose(accum.asnumpy(), acc, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), w, rtol=1e-5, atol=1e-5)


def test_matmul_apply_momentum_reading_its_own_accumulation():
    """a is accum itself: the product is taken from accum's old value, not from the one being written."""
    acc = RNG.standard_normal((32, 32)).astype(np.float32)
    b = RNG.standard_normal((32, 32)).astype(np.float32)
    w = RNG.standard_normal((32, 32)).astype(np.float32)
    var, accum = tensor(w), tensor(acc)
    call("matmul_apply_momentum", [var, accum, scalar(0.1), accum, tensor(b), scalar(0.9)],
         {"transpose_a": False, "transpose_b": False, "use_nesterov": False})
    w, acc = _momentum_reference(w, acc, 0.1, acc, b, 0.9, False, False)
    np.testing.assert_allclose(accum.asnumpy(), acc, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), w, rtol=1e-5, atol=1e-5)


def test_matmul_apply_momentum_checks_the_product_shape():
    args = [tensor(np.zeros((4, 5), np.float32)), tensor(np.zeros((4, 5), np.float32)), scalar(0.1),
            tensor(np.zeros((4, 3), np.float32)), tensor(np.zeros((3, 6), np.float32)), scalar(0.9)]
    with pytest.raises(ValueError, match=r"\[matmul_apply_momentum\] 'a @ b' must have the shape of 'variable'; "
                                         r"expected \(4, 5\), but got \(4, 6\)"):
        _C.call("matmul_apply_momentum", args, {})


def test_matmul_apply_momentum_has_no_nesterov_kernel():
    """Nesterov's step reads the gradient again after the accumulation: no kernel takes it, so a graph keeps
    such a pair as matmul and apply_momentum."""
    args = [tensor(np.zeros((4, 5), np.float32)), tensor(np.zeros((4, 5), np.float32)), scalar(0.1),
            tensor(np.zeros((4, 3), np.float32)), tensor(np.zeros((3, 5), np.float32)), scalar(0.9)]
    with pytest.raises(TypeError, match=r"\[matmul_apply_momentum\] has no CPU kernel"):
        _C.call("matmul_apply_momentum", args, {"use_nesterov": True})
