"""Parity tests of cumsum and cumprod (src/ops/cumulative.cc) against NumPy
and PyTorch: every number dtype, each axis, exclusive and reverse, the
flattened Tensor method, the dtype argument; gradients by finite differences
and against torch (zeros included for cumprod); errors; GRAPH_MODE."""
import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import check_grad, covers, gradients, run_op

covers("cumsum", "cumprod", "cumprod_grad")

RNG = np.random.default_rng(7)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.int16, np.float16]


def rand(shape, dtype):
    if np.issubdtype(dtype, np.integer):
        low = 0 if dtype == np.uint8 else -3
        return RNG.integers(low, 4, size=shape).astype(dtype)
    return RNG.uniform(0.5, 1.5, size=shape).astype(dtype) * RNG.choice([-1, 1], size=shape).astype(dtype)


def reference(x, axis, exclusive=False, reverse=False, prod=False):
    """NumPy's cumsum / cumprod with TensorFlow-style exclusive and reverse."""
    scan = np.cumprod if prod else np.cumsum
    y = np.flip(x, axis) if reverse else x
    out = scan(y, axis=axis, dtype=x.dtype)
    if exclusive:
        ident = np.ones_like(np.take(out, [0], axis)) if prod else np.zeros_like(np.take(out, [0], axis))
        out = np.concatenate([ident, np.take(out, range(out.shape[axis] - 1), axis)], axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_forward(op, dtype):
    prod = op == "cumprod"
    for shape in [(7,), (3, 5), (2, 3, 4), (4, 1, 6)]:
        x = rand(shape, dtype)
        for axis in range(-len(shape), len(shape)):
            for exclusive in (False, True):
                for reverse in (False, True):
                    got = run_op(op, [x], {"axis": axis, "exclusive": exclusive, "reverse": reverse})[0]
                    want = reference(x, axis, exclusive, reverse, prod)
                    assert got.dtype == x.dtype and got.shape == x.shape
                    if dtype == np.float16:  # msrt accumulates in float32
                        want = reference(x.astype(np.float32), axis, exclusive, reverse, prod).astype(np.float16)
                        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
                    elif np.issubdtype(dtype, np.floating):
                        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13)
                    else:
                        np.testing.assert_array_equal(got, want)


def test_large_parallel_and_wrapping():
    # Long lines and many columns split over threads; integers wrap as NumPy's do.
    x = RNG.uniform(-1, 1, size=(64, 700, 9))
    for axis in (0, 1, 2):
        np.testing.assert_allclose(run_op("cumsum", [x], {"axis": axis})[0], np.cumsum(x, axis), rtol=1e-12,
                                   atol=1e-12)
    big = np.full(10, 2**30, dtype=np.int32)
    np.testing.assert_array_equal(run_op("cumsum", [big], {"axis": 0})[0], np.cumsum(big, dtype=np.int32))
    np.testing.assert_array_equal(run_op("cumprod", [big], {"axis": 0})[0], np.cumprod(big, dtype=np.int32))


def test_python_forms_against_torch():
    torch = pytest.importorskip("torch")
    x = rand((3, 4, 5), np.float32)
    t = torch.tensor(x)
    np.testing.assert_allclose(ops.cumsum(ms.Tensor(x), 1).asnumpy(), torch.cumsum(t, 1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ms.Tensor(x).cumsum().asnumpy(), np.cumsum(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ms.Tensor(x).cumsum(axis=-1).asnumpy(), torch.cumsum(t, -1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ops.cumprod(ms.Tensor(x), 2).asnumpy(), torch.cumprod(t, 2).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ms.Tensor(x).cumprod(0).asnumpy(), torch.cumprod(t, 0).numpy(), rtol=1e-6)
    # CumSum(exclusive, reverse) as TensorFlow's cumsum.
    got = ops.CumSum(exclusive=True, reverse=True)(ms.Tensor(x), 1).asnumpy()
    np.testing.assert_allclose(got, reference(x, 1, True, True), rtol=1e-6, atol=1e-6)
    got = ops.CumProd(exclusive=True)(ms.Tensor(x), 2).asnumpy()
    np.testing.assert_allclose(got, reference(x, 2, True, False, True), rtol=1e-6)
    # dtype: cast first.
    xi = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    out = ops.cumsum(ms.Tensor(xi), 1, dtype=ms.float64)
    assert out.dtype == ms.float64
    np.testing.assert_array_equal(out.asnumpy(), np.cumsum(xi, 1).astype(np.float64))
    out = ops.cumprod(ms.Tensor(xi), 0, dtype=ms.float32)
    assert out.dtype == ms.float32


def test_bfloat16():
    torch = pytest.importorskip("torch")
    x = rand((4, 6), np.float32)
    xb = ms.Tensor(x, dtype=ms.bfloat16)
    want = torch.cumsum(torch.tensor(x).to(torch.bfloat16).float(), 1)
    got = ops.cumsum(xb, 1)
    assert got.dtype == ms.bfloat16
    np.testing.assert_allclose(got.float().asnumpy(), want.numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_gradients(op):
    x = RNG.uniform(0.5, 1.5, size=(3, 4))
    for axis in (0, 1, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                check_grad(op, [x], {"axis": axis, "exclusive": exclusive, "reverse": reverse})
    check_grad(op, [x], {"axis": None})
    # Computed in float32 (dtype), the gradient comes back in x's float64.
    sens = RNG.uniform(0.5, 1.5, size=x.shape)
    got = gradients(op, [x], {"axis": 0, "dtype": "float32"}, sens=sens.astype(np.float32))[0]
    want = gradients(op, [x], {"axis": 0}, sens=sens)[0]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_cumprod_gradient_with_zeros_against_torch():
    torch = pytest.importorskip("torch")
    x = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [1.5, -2.0, 0.0, 4.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0]])
    sens = RNG.uniform(0.5, 1.5, size=x.shape)
    for axis in (0, 1):
        t = torch.tensor(x, requires_grad=True)
        (torch.cumprod(t, axis) * torch.tensor(sens)).sum().backward()
        got = gradients("cumprod", [x], {"axis": axis}, sens=sens)[0]
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-12, atol=1e-12)
    # reverse and exclusive with zeros: against finite differences (exact, the function is polynomial).
    for exclusive in (False, True):
        for reverse in (False, True):
            check_grad("cumprod", [x], {"axis": 1, "exclusive": exclusive, "reverse": reverse})


def test_grad_through_python():
    x = ms.Tensor(RNG.uniform(0.5, 1.5, size=(2, 5)).astype(np.float32))
    g = ms.grad(lambda a: (ops.cumsum(a, 1) * ops.cumprod(a, 0)).sum())(x)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x.asnumpy(), requires_grad=True)
    (torch.cumsum(t, 1) * torch.cumprod(t, 0)).sum().backward()
    np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), rtol=1e-5)


def test_errors():
    x = ms.Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[cumsum\].*axis"):
        ops.cumsum(x, 2)
    with pytest.raises(ValueError, match=r"\[cumprod\].*axis"):
        ops.cumprod(x, -3)
    with pytest.raises(TypeError, match=r"\[cumsum\] input 'x' has an unsupported dtype"):
        ops.cumsum(ms.Tensor(np.ones(3, np.bool_)), 0)
    with pytest.raises(TypeError, match="axis"):
        ops.cumsum(x, 1.5)
    with pytest.raises(TypeError, match="exclusive"):
        ops.CumSum(exclusive=1)
    with pytest.raises(TypeError, match=r"\[cumsum\] attribute 'dtype' must be a number type"):
        ops.cumsum(x, 0, dtype=ms.bool_)
    with pytest.raises(ValueError, match=r"\[cumprod_grad\] 'dy' must have the shape of 'x'"):
        run_op("cumprod_grad", [np.ones(3), np.ones(4)], {"axis": 0})


def test_graph_mode():
    x = ms.Tensor(RNG.uniform(0.5, 1.5, size=(3, 4)).astype(np.float32))

    @ms.jit
    def f(a):
        return ops.cumsum(a, 1) + ops.CumProd(reverse=True)(a, 0)

    np.testing.assert_allclose(f(x).asnumpy(), (ops.cumsum(x, 1) + ops.CumProd(reverse=True)(x, 0)).asnumpy(),
                               rtol=1e-6)
    g = ms.grad(f)(x)
    g_eager = ms.grad(lambda a: ops.cumsum(a, 1) + ops.CumProd(reverse=True)(a, 0))(x)
    np.testing.assert_allclose(g.asnumpy(), g_eager.asnumpy(), rtol=1e-6)
