"""dropout and the global generator: masks hold 0 or 1/keep_prob, follow
the seed (set_seed restarts the streams), do not depend on thread counts or
on when the kernel runs, and the gradient is dy * mask. The draws (randn,
rand, randint, normal, uniform): their distributions against NumPy's and
torch's statistics, ms.set_seed, dtypes, gradients, errors, GRAPH_MODE."""
import warnings

import numpy as np
import pytest

import msrt
from msrt import ops

from .harness import _C, covers, run_op, tensor

covers("dropout", "random_normal", "random_uniform", "random_int", "normal", "uniform", "rand_like", "randn_like",
       "randint_like")

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _restore_seed():
    seed = _C.get_seed()
    yield
    _C.set_seed(seed)


def dropout(x, keep_prob=0.5):
    y, mask = _C.call("dropout", [tensor(x)], {"keep_prob": keep_prob})
    return y.asnumpy().copy(), mask.asnumpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("keep_prob", [0.1, 0.5, 0.9, 1.0])
def test_dropout_values(dtype, keep_prob):
    x = RNG.uniform(-2, 2, size=(200, 300)).astype(dtype)
    y, mask = dropout(x, keep_prob)
    assert y.dtype == dtype and mask.dtype == dtype and mask.shape == x.shape
    scale = dtype(1 / keep_prob)
    assert set(np.unique(mask)) <= {dtype(0), scale}
    if dtype == np.float16:  # computed in float32, rounded once
        np.testing.assert_allclose(y.astype(np.float32), x.astype(np.float32) * mask.astype(np.float32), rtol=1e-3)
    else:
        np.testing.assert_array_equal(y, x * mask)
    kept = np.mean(mask != 0)
    assert abs(kept - keep_prob) < 0.01, kept  # 60000 draws: about 5 standard deviations


def test_dropout_default_and_shapes():
    x = np.ones((4, 5), np.float32)
    y, mask = dropout(x)
    assert set(np.unique(mask)) <= {0.0, 2.0}
    outs = run_op("dropout", [np.array(3.0)], {"keep_prob": 1.0})
    assert outs[0] == 3.0 and outs[1] == 1.0
    assert run_op("dropout", [np.zeros((0, 3))])[0].shape == (0, 3)
    assert run_op("dropout", [np.ones(7)], {"keep_prob": 1})[1].tolist() == [1.0] * 7


def test_seed_makes_masks_reproducible():
    x = np.ones((64, 65), np.float32)
    _C.set_seed(42)
    assert _C.get_seed() == 42
    first = [dropout(x)[1] for _ in range(3)]
    _C.set_seed(42)
    again = [dropout(x)[1] for _ in range(3)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # successive calls draw different masks
    _C.set_seed(43)
    assert not np.array_equal(dropout(x)[1], first[0])


def test_stream_is_taken_at_call_time_not_run_time():
    # Queue several ops without reading; set_seed in between must only
    # affect the calls made after it.
    x = tensor(np.ones((300, 300), np.float32))
    _C.set_seed(7)
    a = _C.call("dropout", [x], {})[1]
    _C.set_seed(7)
    b = _C.call("dropout", [x], {})[1]
    c = _C.call("dropout", [x], {})[1]
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert not np.array_equal(b.asnumpy(), c.asnumpy())


def test_masks_do_not_depend_on_threads_or_sync_mode():
    x = np.ones((512, 300), np.float32)
    _C.set_seed(11)
    base = dropout(x)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oversubscribes small machines, on purpose
        msrt.set_context(runtime_num_threads=2, inter_op_parallel_num=2)  # one more loop thread
    _C.set_seed(11)
    np.testing.assert_array_equal(dropout(x)[1], base)
    msrt.set_context(runtime_num_threads=2, inter_op_parallel_num=0, pynative_synchronize=True)
    _C.set_seed(11)
    np.testing.assert_array_equal(dropout(x)[1], base)


def test_mask_depends_on_position_only():
    # Element i of a draw is fixed by (seed, stream, i): a bigger tensor's
    # mask starts with a smaller one's.
    _C.set_seed(5)
    small = dropout(np.ones(10, np.float32))[1]
    _C.set_seed(5)
    big = dropout(np.ones(1000, np.float32))[1]
    np.testing.assert_array_equal(big[:10], small)


def test_dropout_gradient_is_dy_times_mask():
    x = tensor(RNG.uniform(size=(5, 6)))
    x.requires_grad = True
    tape = _C.GradTape()
    try:
        y, mask = _C.call("dropout", [x], {"keep_prob": 0.7})
        sens = RNG.uniform(size=(5, 6))
        (g,) = tape.gradient([y], [tensor(sens)], [x])
    finally:
        tape.end()
    np.testing.assert_allclose(g.asnumpy(), sens * mask.asnumpy())


def test_dropout_errors():
    for bad in [0.0, 1.5, -0.1]:
        with pytest.raises(ValueError, match=r"\[dropout\] attribute 'keep_prob' must be in \(0, 1\]"):
            run_op("dropout", [np.ones(3)], {"keep_prob": bad})
    with pytest.raises(TypeError, match=r"\[dropout\] input 'x'.*Int32"):
        run_op("dropout", [np.ones(3, np.int32)])


def test_set_seed_errors():
    with pytest.raises(TypeError, match="int"):
        _C.set_seed(1.5)
    with pytest.raises(TypeError, match="int"):
        _C.set_seed(True)
    with pytest.raises(ValueError, match="seed"):
        _C.set_seed(-1)


# ---- draws ----

def _ks_statistic(sample, cdf):
    """Kolmogorov-Smirnov distance between a sample and a distribution."""
    x = np.sort(sample.astype(np.float64))
    n = x.size
    c = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


def _normal_cdf(x):
    torch = pytest.importorskip("torch")
    return 0.5 * (1 + torch.erf(torch.tensor(x) / np.sqrt(2.0)).numpy())


@pytest.mark.parametrize("dtype", [msrt.float32, msrt.float64])
def test_randn_and_rand_distributions(dtype):
    _C.set_seed(21)
    n = 200_000
    z = ops.randn(n, dtype=dtype)
    assert z.dtype == dtype and z.shape == (n,)
    z = z.asnumpy()
    # 1.63 / sqrt(n): the KS test's 1% critical value.
    assert _ks_statistic(z, _normal_cdf) < 1.63 / np.sqrt(n)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    u = ops.rand(n, dtype=dtype).asnumpy()
    assert u.min() >= 0 and u.max() < 1
    assert _ks_statistic(u, lambda v: np.clip(v, 0, 1)) < 1.63 / np.sqrt(n)


def test_half_types_and_shapes():
    _C.set_seed(2)
    for dtype in (msrt.float16, msrt.bfloat16):
        u = ops.rand(50_000, dtype=dtype)
        assert u.dtype == dtype
        values = u.float().asnumpy()
        assert values.min() >= 0 and values.max() < 1
        z = ops.randn((100, 100), dtype=dtype)
        assert z.shape == (100, 100) and abs(float(z.float().asnumpy().mean())) < 0.05
    assert ops.randn(2, 3).shape == (2, 3) and ops.randn((2, 3)).shape == (2, 3)
    assert ops.rand(()).shape == () and ops.rand(0, 4).shape == (0, 4)
    assert ops.StandardNormal(seed=3, seed2=4)((2, 5)).shape == (2, 5)
    assert ops.UniformReal()((3,)).dtype == msrt.float32
    assert ops.standard_normal((4,)).shape == (4,)


def test_randint():
    _C.set_seed(4)
    r = ops.randint(-3, 5, (100_000,))
    assert r.dtype == msrt.int64
    values = r.asnumpy()
    assert values.min() == -3 and values.max() == 4
    counts = np.bincount(values + 3) / values.size
    np.testing.assert_allclose(counts, np.full(8, 1 / 8), atol=0.005)
    for dtype, (low, high) in [(msrt.int8, (-128, 128)), (msrt.uint8, (0, 256)), (msrt.int32, (-2**31, 2**31 - 1)),
                               (msrt.int16, (10, 11))]:
        v = ops.randint(low, high, (1000,), dtype=dtype)
        assert v.dtype == dtype
        assert v.asnumpy().min() >= low and v.asnumpy().max() < high
    big = ops.randint(2**40, 2**40 + 2**32, (1000,)).asnumpy()
    assert big.min() >= 2**40 and big.max() < 2**40 + 2**32 and len(np.unique(big)) > 990


def test_normal_and_uniform():
    torch = pytest.importorskip("torch")
    _C.set_seed(8)
    mean = msrt.Tensor(np.array([[-5.0], [0.0], [10.0]], np.float32))
    std = msrt.Tensor(np.array([0.5, 1.0, 2.0, 4.0], np.float32))
    # The shape broadcasts with mean's and stddev's, as torch.normal broadcasts its arguments.
    draws = np.stack([ops.normal((1, 4), mean, std).asnumpy() for _ in range(4000)])
    assert draws.shape == (4000, 3, 4) and draws.dtype == np.float32
    want = torch.normal(torch.tensor(mean.asnumpy()).expand(3, 4), torch.tensor(std.asnumpy()).expand(3, 4))
    assert want.shape == draws.shape[1:]
    np.testing.assert_allclose(draws.mean(0), np.broadcast_to(mean.asnumpy(), (3, 4)), atol=0.25)
    np.testing.assert_allclose(draws.std(0), np.broadcast_to(std.asnumpy(), (3, 4)), rtol=0.1)
    u = ops.uniform((20_000,), msrt.Tensor(np.float32(2)), msrt.Tensor(np.float32(6))).asnumpy()
    assert u.min() >= 2 and u.max() < 6 and abs(u.mean() - 4) < 0.05
    i = ops.uniform((20_000,), msrt.Tensor(np.int32(-2)), msrt.Tensor(np.int32(3)), dtype=msrt.int32)
    assert i.dtype == msrt.int32 and sorted(np.unique(i.asnumpy())) == [-2, -1, 0, 1, 2]
    # Gradients flow to mean and stddev (d/dmean = 1, d/dstd = the standard draw).
    grads = msrt.grad(lambda m, s: ops.normal((3, 4), m, s).sum(), grad_position=(0, 1))(
        msrt.Tensor(np.float32(1)), msrt.Tensor(np.float32(2)))
    assert grads[0].asnumpy() == pytest.approx(12.0)


def test_draws_like():
    x = msrt.Tensor(np.zeros((300, 400), np.float64))
    _C.set_seed(9)
    u = ops.rand_like(x)
    assert u.dtype == msrt.float64 and u.shape == (300, 400)
    assert u.asnumpy().min() >= 0 and u.asnumpy().max() < 1 and abs(u.asnumpy().mean() - 0.5) < 0.01
    z = ops.randn_like(x, dtype=msrt.float32)
    assert z.dtype == msrt.float32 and abs(z.asnumpy().std() - 1) < 0.01
    i = ops.randint_like(msrt.Tensor(np.zeros((50, 60), np.int32)), -2, 2)
    assert i.dtype == msrt.int32 and sorted(np.unique(i.asnumpy())) == [-2, -1, 0, 1]
    assert ops.randint_like(x, 0, 3, dtype=msrt.int8).dtype == msrt.int8
    _C.set_seed(9)
    np.testing.assert_array_equal(ops.rand_like(x).asnumpy(), u.asnumpy())
    with pytest.raises(TypeError, match=r"\[random_normal\] attribute 'dtype' must be .* but got Int32"):
        ops.randn_like(msrt.Tensor(np.zeros(2, np.int32)))
    with pytest.raises(TypeError, match=r"\[random_int\] attribute 'dtype' must be an integer dtype"):
        ops.randint_like(x, 0, 3)


def test_draws_follow_the_seed_and_the_graph():
    msrt.set_seed(123)
    first = [ops.randn(5).asnumpy(), ops.rand(3).asnumpy(), ops.randint(0, 100, (4,)).asnumpy()]
    msrt.set_seed(123)
    second = [ops.randn(5).asnumpy(), ops.rand(3).asnumpy(), ops.randint(0, 100, (4,)).asnumpy()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(ops.randn(5).asnumpy(), first[0])

    @msrt.jit
    def f(x):
        return x + ops.randn(2, 3), ops.uniform((2, 3), x, x + 1)

    x = msrt.Tensor(np.zeros((2, 3), np.float32))
    msrt.set_seed(7)
    a, b = f(x)
    c, d = f(x)  # a new draw each run, never folded into a constant
    assert not np.array_equal(a.asnumpy(), c.asnumpy())
    msrt.set_seed(7)
    np.testing.assert_array_equal(f(x)[0].asnumpy(), a.asnumpy())
    assert b.asnumpy().min() >= 0 and b.asnumpy().max() < 1


def test_draw_errors():
    with pytest.raises(ValueError, match=r"\[random_int\] 'high' must exceed 'low'"):
        ops.randint(5, 5, (2,))
    with pytest.raises(ValueError, match=r"\[random_int\] 'high' must exceed 'low' by 1 to 2\*\*32"):
        ops.randint(0, 2**33, (2,))
    with pytest.raises(ValueError, match=r"\[0, 300\) does not fit dtype Int8"):
        ops.randint(0, 300, (2,), dtype=msrt.int8)
    with pytest.raises(TypeError, match=r"\[random_int\] attribute 'dtype' must be an integer dtype"):
        ops.randint(0, 3, (2,), dtype=msrt.float32)
    with pytest.raises(TypeError, match=r"\[random_normal\] attribute 'dtype' must be"):
        ops.randn(3, dtype=msrt.int32)
    with pytest.raises(ValueError, match="random_uniform"):
        ops.rand(-1, 2)
    with pytest.raises(TypeError, match=r"\[uniform\] attribute 'dtype' must be a float dtype, int32 or int64"):
        ops.uniform((2,), msrt.Tensor(0.0), msrt.Tensor(1.0), dtype=msrt.int8)
    with pytest.raises(ValueError, match="normal"):
        ops.normal((2, 3), msrt.Tensor(np.zeros(4, np.float32)), msrt.Tensor(np.float32(1)))
    with pytest.raises(TypeError, match=r"\[normal\] input 'stddev' must be a number tensor"):
        ops.normal((2,), msrt.Tensor(0.0), msrt.Tensor(True))
