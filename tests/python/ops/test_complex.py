"""complex64 and complex128 (src/ops/elementwise.cc, reduce.cc, nn_matmul.cc)
against NumPy: arithmetic, equality, abs, the parts (real, imag, conj,
complex), sum/mean/prod, matmul and bmm, promotion with real dtypes and
Python scalars; in PYNATIVE mode and in compiled graphs; the clear errors of
ops without complex kernels and of gradients through complex values."""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops

from .harness import covers, run_op

covers("real", "imag", "conj", "complex")

RNG = np.random.default_rng(11)
COMPLEX = [np.complex64, np.complex128]
TOL = {np.complex64: dict(rtol=1e-5, atol=1e-5), np.complex128: dict(rtol=1e-12, atol=1e-12)}
MODES = {"pynative": lambda fn: fn, "graph": ms.jit}


def values(dtype, size=(3, 4)):
    return (RNG.normal(size=size) + 1j * RNG.normal(size=size)).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("fn, ref", [
    (lambda a, b: a + b, np.add), (lambda a, b: a - b, np.subtract), (lambda a, b: a * b, np.multiply),
    (lambda a, b: a / b, np.divide), (ops.div, np.divide), (ops.mul, np.multiply),
])
def test_arithmetic(mode, dtype, fn, ref):
    a, b = values(dtype), values(dtype, (4,))  # broadcasting
    got = MODES[mode](fn)(ms.Tensor(a), ms.Tensor(b))
    assert got.asnumpy().dtype == dtype
    np.testing.assert_allclose(got.asnumpy(), ref(a, b), **TOL[dtype])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_unary_and_equality(mode, dtype):
    a = values(dtype)
    b = a.copy()
    b[0, 0] += 1j
    x, y = ms.Tensor(a), ms.Tensor(b)
    np.testing.assert_array_equal(MODES[mode](ops.neg)(x).asnumpy(), -a)
    np.testing.assert_allclose(MODES[mode](ops.square)(x).asnumpy(), a * a, **TOL[dtype])
    np.testing.assert_array_equal(MODES[mode](ops.equal)(x, y).asnumpy(), a == b)
    np.testing.assert_array_equal(MODES[mode](ops.not_equal)(x, y).asnumpy(), a != b)
    got = MODES[mode](ops.abs)(x)
    assert got.asnumpy().dtype == np.abs(a).dtype  # the real modulus
    np.testing.assert_allclose(got.asnumpy(), np.abs(a), **TOL[dtype])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_parts(mode, dtype):
    a = values(dtype)
    x = ms.Tensor(a)
    for fn, ref in ((ops.real, np.real), (ops.imag, np.imag), (ops.conj, np.conj)):
        got = MODES[mode](fn)(x).asnumpy()
        assert got.dtype == ref(a).dtype
        np.testing.assert_array_equal(got, ref(a))
    np.testing.assert_array_equal(x.real().asnumpy(), a.real)
    np.testing.assert_array_equal(x.imag().asnumpy(), a.imag)
    np.testing.assert_array_equal(x.conj().asnumpy(), a.conj())
    re, im = a.real.copy(), a.imag.copy()
    got = MODES[mode](ops.complex)(ms.Tensor(re), ms.Tensor(im[0]))  # broadcasting
    assert got.dtype == (ms.complex64 if dtype == np.complex64 else ms.complex128)
    np.testing.assert_array_equal(got.asnumpy(), re + 1j * im[0])


def test_parts_of_real_tensors_and_errors():
    a = RNG.normal(size=(2, 3)).astype(np.float32)
    x = ms.Tensor(a)
    np.testing.assert_array_equal(ops.real(x).asnumpy(), a)
    np.testing.assert_array_equal(ops.conj(x).asnumpy(), a)
    assert ops.imag(x).dtype == ms.float32 and not ops.imag(x).asnumpy().any()
    np.testing.assert_array_equal(run_op("real", [np.arange(3, dtype=np.int32)])[0], [0, 1, 2])
    with pytest.raises(TypeError, match=r"\[complex\].*Float32 or Float64.*Int32"):
        ops.complex(ms.Tensor([1], ms.int32), ms.Tensor([1], ms.int32))
    with pytest.raises(TypeError, match=r"\[complex\].*Float32.*Float64"):
        ops.complex(ms.Tensor([1.0], ms.float32), ms.Tensor([1.0], ms.float64))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions(mode, dtype, axis):
    a = values(dtype)
    x = ms.Tensor(a)
    kw = {} if axis is None else {"axis": axis}
    for method, ref in (("sum", np.sum), ("mean", np.mean), ("prod", np.prod)):
        got = MODES[mode](lambda t, m=method: getattr(t, m)(**kw))(x).asnumpy()
        assert got.dtype == dtype
        np.testing.assert_allclose(got, ref(a, **kw), **TOL[dtype])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul(mode, dtype, ta, tb):
    a, b = values(dtype, (37, 300)), values(dtype, (300, 290))  # n above one column block
    a_in = a.T.copy() if ta else a
    b_in = b.T.copy() if tb else b
    product = ops.MatMul(transpose_a=ta, transpose_b=tb)
    got = MODES[mode](lambda p, q: product(p, q))(ms.Tensor(a_in), ms.Tensor(b_in))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.complex64 else TOL[dtype]
    np.testing.assert_allclose(got.asnumpy(), a @ b, **tol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_batched_matmul(mode, dtype):
    a, b = values(dtype, (2, 1, 5, 7)), values(dtype, (3, 7, 4))  # broadcast batch dims
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.complex64 else TOL[dtype]
    np.testing.assert_allclose(MODES[mode](ops.matmul)(ms.Tensor(a), ms.Tensor(b)).asnumpy(), a @ b, **tol)
    c, d = values(dtype, (3, 5, 7)), values(dtype, (3, 7, 4))
    np.testing.assert_allclose(MODES[mode](ops.bmm)(ms.Tensor(c), ms.Tensor(d)).asnumpy(), c @ d, **tol)
    np.testing.assert_allclose(ops.matmul(ms.Tensor(c[0, 0]), ms.Tensor(d[0])).asnumpy(), c[0, 0] @ d[0], **tol)
    empty = ops.matmul(ms.Tensor(np.zeros((2, 0), dtype)), ms.Tensor(np.zeros((0, 3), dtype)))
    np.testing.assert_array_equal(empty.asnumpy(), np.zeros((2, 3), dtype))


def test_promotion_with_real_dtypes_and_scalars():
    c64 = ms.Tensor(np.array([1 + 2j], np.complex64))
    c128 = ms.Tensor(np.array([1 + 2j], np.complex128))
    cases = [(ms.Tensor([1.5], ms.float32), c64, ms.complex64), (ms.Tensor([1.5], ms.float64), c64, ms.complex128),
             (ms.Tensor([1.5], ms.float16), c64, ms.complex64), (ms.Tensor([2], ms.int64), c64, ms.complex64),
             (ms.Tensor([2], ms.uint64), c128, ms.complex128), (ms.Tensor([True]), c64, ms.complex64),
             (c64, c128, ms.complex128)]
    for x, y, want in cases:
        for got in (x + y, y + x, x * y):
            assert got.dtype == want, (x.dtype, y.dtype)
        np.testing.assert_allclose((x + y).asnumpy(), x.asnumpy() + y.asnumpy(), rtol=1e-6)
    assert (c64 + 1).dtype == ms.complex64 and (c64 * 0.5).asnumpy().tolist() == [0.5 + 1j]
    assert (ms.Tensor([1.0], ms.float32) + 2j).dtype == ms.complex64
    assert (ms.Tensor([1.0], ms.float64) + 2j).dtype == ms.complex128
    assert (ms.Tensor([3], ms.int32) * 1j).asnumpy().tolist() == [3j]
    assert (2j - c64).asnumpy().tolist() == [-1 + 0j]
    assert ms.Tensor(1 + 2j).dtype == ms.complex64
    assert ms.Tensor([1 + 2j, 3]).asnumpy().tolist() == [1 + 2j, 3 + 0j]
    assert ms.Tensor(np.complex128(1 - 1j)).dtype == ms.complex128


def test_casts():
    a = np.array([1.5 - 2j, -0.0 + 3j, 0 + 0j], np.complex128)
    x = ms.Tensor(a)
    # Complex to real keeps the real part, as NumPy's astype and MindSpore's Cast do (bool: real part != 0).
    for target, want in ((ms.float32, [1.5, -0.0, 0.0]), (ms.int32, [1, 0, 0]), (ms.bool_, [True, False, False]),
                         (ms.uint8, [1, 0, 0]), (ms.complex64, a.astype(np.complex64).tolist())):
        assert x.astype(target).asnumpy().tolist() == want
    np.testing.assert_array_equal(ms.Tensor(np.array([1, 2], np.int64)).astype(ms.complex128).asnumpy(), [1, 2])
    f16 = ms.Tensor(np.array([0.5], np.float16)).astype(ms.complex64).asnumpy()
    assert f16.dtype == np.complex64 and f16.tolist() == [0.5]
    assert ms.Tensor(np.array([1.25], np.float32), ms.bfloat16).astype(ms.complex64).asnumpy().tolist() == [1.25]


def test_ops_without_complex_kernels_raise_type_error():
    x = ms.Tensor(values(np.complex64))
    for fn in (ops.exp, ops.relu, ops.sign, ops.floor, lambda t: ops.maximum(t, t), lambda t: t < t,
               lambda t: t // t, lambda t: t.max(), lambda t: t.argmax(), lambda t: ops.sort(t),
               lambda t: ops.cumsum(t, 0), lambda t: ops.pow(t, t)):
        with pytest.raises(TypeError, match="Complex64"):
            fn(x)
    with pytest.raises(TypeError, match="Complex64"):
        nn.Dense(4, 2)(x)


def _loss(x, y):
    z = ops.matmul(x * x + x, y) - y.sum()
    return ops.real(z * ops.conj(z)).sum() + ops.imag(z).sum()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", COMPLEX)
def test_gradients_match_torch(mode, dtype):
    # PyTorch's convention: the gradient of a real loss is dL/dre + i dL/dim.
    torch = pytest.importorskip("torch")
    a, b = values(dtype, (3, 4)), values(dtype, (4, 2))
    gx, gy = ms.grad(MODES[mode](_loss), grad_position=(0, 1))(ms.Tensor(a), ms.Tensor(b))
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    tz = (ta * ta + ta) @ tb - tb.sum()
    ((tz * tz.conj()).real.sum() + tz.imag.sum()).backward()
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.complex64 else TOL[dtype]
    assert gx.asnumpy().dtype == dtype
    np.testing.assert_allclose(gx.asnumpy(), ta.grad.numpy(), **tol)
    np.testing.assert_allclose(gy.asnumpy(), tb.grad.numpy(), **tol)


def test_gradients_into_and_out_of_complex_values():
    torch = pytest.importorskip("torch")
    r = RNG.normal(size=(2, 3))

    def g(x):
        c = ops.complex(x, x * 2) * (1 + 1j)
        return ops.real(ops.matmul(c, c.T)).sum() - ops.imag(c).sum()

    got = ms.grad(g)(ms.Tensor(r)).asnumpy()
    tr = torch.tensor(r, requires_grad=True)
    tc = torch.complex(tr, tr * 2) * (1 + 1j)
    ((tc @ tc.T).real.sum() - tc.imag.sum()).backward()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, tr.grad.numpy(), rtol=1e-12)
    # The real part of a complex gradient reaches a real input through a cast.
    np.testing.assert_allclose(ms.grad(lambda x: ops.real(x.astype(ms.complex128) * 1j * x).sum())(ms.Tensor(r))
                               .asnumpy(), np.zeros_like(r), atol=1e-12)


def test_ops_without_complex_gradients_raise():
    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    with pytest.raises(NotImplementedError, match=r"\[abs\] has no gradient for complex values"):
        ms.grad(lambda t: ops.abs(ops.complex(t, t)).sum())(x)
    c = ms.Tensor(values(np.complex64, (2,)))
    with pytest.raises(NotImplementedError, match=r"\[div\] has no gradient for complex values"):
        ms.grad(lambda t: ops.real(t / (t + 1)).sum())(c)
    # Without a gradient, the same computation runs.
    np.testing.assert_allclose(ops.abs(ops.complex(x, x)).asnumpy(), np.sqrt(2) * x.asnumpy(), rtol=1e-6)


def test_graph_mode_cell():
    class Net(nn.Cell):
        def construct(self, a, b):
            return ops.matmul(a, ops.conj(b)) + a.sum(), ops.abs(a)

    a, b = values(np.complex128, (3, 3)), values(np.complex128, (3, 3))
    ms.set_context(mode=ms.GRAPH_MODE)
    y, m = Net()(ms.Tensor(a), ms.Tensor(b))
    np.testing.assert_allclose(y.asnumpy(), a @ b.conj() + a.sum(), rtol=1e-12)
    np.testing.assert_allclose(m.asnumpy(), np.abs(a), rtol=1e-12)


def test_graph_simplification_keeps_imaginary_constants():
    # x + 1j and x * (1 + 2j) must not be taken for x + 0 and x * 1 (their real parts).
    x = ms.Tensor(values(np.complex64, (3,)))

    @ms.jit
    def f(t):
        return t + ms.Tensor(np.array([1j, 1j, 1j], np.complex64)), t * ms.Tensor(np.array(1 + 2j, np.complex64))

    a, b = f(x)
    np.testing.assert_allclose(a.asnumpy(), x.asnumpy() + 1j, rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), x.asnumpy() * (1 + 2j), rtol=1e-6)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_data_movement(dtype):
    a = values(dtype, (2, 3))
    x = ms.Tensor(a)
    np.testing.assert_array_equal(ops.concat((x, x)).asnumpy(), np.concatenate((a, a)))
    np.testing.assert_array_equal(ops.gather(x, ms.Tensor([1, 0]), 0).asnumpy(), a[[1, 0]])
    np.testing.assert_array_equal(ops.transpose(x, (1, 0)).asnumpy(), a.T)
    np.testing.assert_array_equal(ops.tile(x, (2, 1)).asnumpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(x[:, 1:].asnumpy(), a[:, 1:])
    cond = np.array([True, False, True])
    np.testing.assert_array_equal(ops.where(ms.Tensor(cond), x, ms.Tensor(np.zeros(3, dtype))).asnumpy(),
                                  np.where(cond, a, 0))
    y = x.copy()
    y[0, 0] = 5j
    assert y.asnumpy()[0, 0] == 5j and x.asnumpy()[0, 0] == a[0, 0]
    np.testing.assert_array_equal(ops.full((2,), 3, dtype=ms.common.dtype._FROM_NUMPY[np.dtype(dtype)]).asnumpy(),
                                  [3, 3])


def test_fused_chains_with_complex_and_unsigned_values():
    a = values(np.complex64, (64, 300))
    u = np.random.default_rng(2).integers(0, 2**64 - 1, size=(64, 300), dtype=np.uint64, endpoint=True)

    @ms.jit
    def f(z, w):
        return (ops.abs(z * z - z) * 2.0 + 1.0, ops.real(ops.conj(z * z) + z) * 3.0, ops.imag(z + z) - 1.0,
                (w * w + w) // 3)

    r1, r2, r3, r4 = f(ms.Tensor(a), ms.Tensor(u))
    np.testing.assert_allclose(r1.asnumpy(), np.abs(a * a - a) * 2 + 1, rtol=1e-5)
    np.testing.assert_allclose(r2.asnumpy(), ((a * a).conj() + a).real * 3, rtol=1e-5)
    np.testing.assert_allclose(r3.asnumpy(), (a + a).imag - 1, rtol=1e-6)
    np.testing.assert_array_equal(r4.asnumpy(), (u * u + u) // 3)
