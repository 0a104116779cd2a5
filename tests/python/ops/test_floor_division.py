"""Parity tests of floor_div and floor_mod (Python's // and %, in
src/ops/elementwise.cc) against torch and NumPy: every number dtype,
broadcasting, zero divisors, the most negative integer by -1, large integers
exactly (divide's integer rounding goes through them); the Tensor operators;
gradients; GRAPH_MODE."""
import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import check_grad, covers, gradients, run_op

covers("floor_div", "floor_mod")

RNG = np.random.default_rng(17)
INTS = [np.int8, np.uint8, np.int16, np.int32, np.int64]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floats_against_torch(dtype):
    torch = pytest.importorskip("torch")
    a = RNG.uniform(-20, 20, size=(40, 50)).astype(dtype)
    b = RNG.uniform(-5, 5, size=(40, 50)).astype(dtype)
    b[0, :5] = 0
    b[1, :5] = 0.1
    a[2, :5] = -0.0
    a[3, :3] = [np.inf, -np.inf, np.nan]
    for name, ref in (("floor_div", torch.floor_divide), ("floor_mod", torch.remainder)):
        got = run_op(name, [a, b])[0]
        want = ref(torch.tensor(a), torch.tensor(b)).numpy()
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got[np.isfinite(got)]), np.signbit(want[np.isfinite(want)]))
        row = b[:1]  # broadcasting
        np.testing.assert_array_equal(run_op(name, [a, row])[0], ref(torch.tensor(a), torch.tensor(row)).numpy())


@pytest.mark.parametrize("dtype", INTS)
def test_integers_against_numpy(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, size=500, endpoint=True).astype(dtype)
    b = RNG.integers(-7 if info.min < 0 else 1, 8, size=500).astype(dtype)
    b[b == 0] = 3
    if info.min < 0:
        a[0], b[0] = info.min, -1  # wraps, never traps
    with np.errstate(all="ignore"):
        want_div, want_mod = np.floor_divide(a, b), np.mod(a, b)
    got_div, got_mod = run_op("floor_div", [a, b])[0], run_op("floor_mod", [a, b])[0]
    assert got_div.dtype == dtype and got_mod.dtype == dtype
    np.testing.assert_array_equal(got_div, want_div)
    np.testing.assert_array_equal(got_mod, want_mod)
    # A zero divisor gives 0, as NumPy gives (it warns), never a crash.
    zeros = np.zeros(3, dtype)
    np.testing.assert_array_equal(run_op("floor_div", [a[:3], zeros])[0], zeros)
    np.testing.assert_array_equal(run_op("floor_mod", [a[:3], zeros])[0], zeros)


def test_operators_and_forms():
    x = ms.Tensor(np.array([7, -7, 100000001, -100000001], np.int64))
    np.testing.assert_array_equal((x // 2).asnumpy(), [3, -4, 50000000, -50000001])
    np.testing.assert_array_equal((x % 3).asnumpy(), np.array([7, -7, 100000001, -100000001]) % 3)
    np.testing.assert_array_equal((17 // ms.Tensor(np.int32(5))).asnumpy(), 3)
    np.testing.assert_array_equal((-17 % ms.Tensor(np.int32(5))).asnumpy(), 3)
    y = ms.Tensor(np.array([5.5, -5.5], np.float32))
    y //= 2
    np.testing.assert_array_equal(y.asnumpy(), [2.0, -3.0])
    y %= 1.5
    np.testing.assert_array_equal(y.asnumpy(), [0.5, 0.0])
    np.testing.assert_array_equal(ops.floor_divide(x, 3).asnumpy(), np.array([7, -7, 100000001, -100000001]) // 3)
    np.testing.assert_array_equal(x.floor_divide(3).asnumpy(), ops.FloorDiv()(x, 3).asnumpy())
    np.testing.assert_array_equal(ops.remainder(x, 4).asnumpy(), np.array([7, -7, 100000001, -100000001]) % 4)
    np.testing.assert_array_equal(x.remainder(4).asnumpy(), ops.floor_mod(x, 4).asnumpy())
    np.testing.assert_array_equal(ops.FloorMod()(x, 4).asnumpy(), ops.remainder(x, 4).asnumpy())
    # divide's integer rounding is exact now (it went through float32 before).
    big = ms.Tensor(np.array([100000001, -100000001, 7, -7], np.int32))
    np.testing.assert_array_equal(ops.div(big, 1, rounding_mode="floor").asnumpy(), big.asnumpy())
    np.testing.assert_array_equal(ops.div(big, 2, rounding_mode="trunc").asnumpy(), [50000000, -50000000, 3, -3])
    np.testing.assert_array_equal(ops.div(big, 2, rounding_mode="floor").asnumpy(), [50000000, -50000001, 3, -4])
    assert ops.div(big, 2, rounding_mode="trunc").dtype == ms.int32
    with pytest.raises(TypeError, match="floor_div"):
        ops.floor_divide(ms.Tensor(np.array([True])), ms.Tensor(np.array([True])))


def test_gradients_against_torch():
    torch = pytest.importorskip("torch")
    a = RNG.uniform(-5, 5, size=(3, 4))
    b = RNG.uniform(0.5, 2, size=(3, 4)) * RNG.choice([-1, 1], size=(3, 4))
    check_grad("floor_mod", [a, b], wrt=(0, 1))
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.remainder(ta, tb).sum().backward()
    ga, gb = gradients("floor_mod", [a, b], wrt=(0, 1))
    np.testing.assert_allclose(ga, ta.grad.numpy())
    np.testing.assert_allclose(gb, tb.grad.numpy())
    ga, gb = gradients("floor_div", [a, b], wrt=(0, 1))
    assert not ga.any() and not gb.any()


def test_graph_mode():
    x = ms.Tensor(RNG.uniform(-5, 5, size=(3, 4)).astype(np.float32))

    @ms.jit
    def f(a):
        return a // 1.5 + a % 0.75

    np.testing.assert_array_equal(f(x).asnumpy(), (x // 1.5 + x % 0.75).asnumpy())
