"""uint16, uint32 and uint64 through the elementwise ops, reductions, casts
and the Tensor operators, against NumPy: values beyond int64's range,
wraparound as NumPy's unsigned arithmetic wraps, in PYNATIVE mode and in
compiled graphs (ms.jit and GRAPH_MODE)."""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops

RNG = np.random.default_rng(5)
UNSIGNED = [np.uint16, np.uint32, np.uint64]


def values(dtype, size=(3, 5)):
    """Random values over the whole range, with 0, 1 and the maximum."""
    info = np.iinfo(dtype)
    x = RNG.integers(0, info.max, size=size, dtype=dtype, endpoint=True)
    x.reshape(-1)[:3] = [0, 1, info.max]
    return x


def compiled(fn):
    return ms.jit(fn)


MODES = {"pynative": lambda fn: fn, "graph": compiled}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("name, fn, ref", [
    ("add", lambda a, b: a + b, np.add),
    ("sub", lambda a, b: a - b, np.subtract),
    ("mul", lambda a, b: a * b, np.multiply),
    ("floor_divide", lambda a, b: a // b, np.floor_divide),
    ("mod", lambda a, b: a % b, np.mod),
    ("maximum", ops.maximum, np.maximum),
    ("minimum", ops.minimum, np.minimum),
])
def test_binary_matches_numpy_with_wraparound(mode, dtype, name, fn, ref):
    a, b = values(dtype), values(dtype)
    b[b == 0] = 3  # NumPy warns on division by zero; zero divisors are tested below
    got = MODES[mode](fn)(ms.Tensor(a), ms.Tensor(b))
    assert got.dtype == ms.Tensor(a).dtype
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got.asnumpy(), ref(a, b))


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_zero_divisors_give_zero(dtype):
    a = np.array([5, 0, np.iinfo(dtype).max], dtype)
    z = np.zeros(3, dtype)
    assert (ms.Tensor(a) // ms.Tensor(z)).asnumpy().tolist() == [0, 0, 0]
    assert (ms.Tensor(a) % ms.Tensor(z)).asnumpy().tolist() == [0, 0, 0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("fn, ref", [
    (ops.equal, np.equal), (ops.not_equal, np.not_equal), (ops.less, np.less), (ops.less_equal, np.less_equal),
    (ops.greater, np.greater), (ops.greater_equal, np.greater_equal),
])
def test_comparisons(mode, dtype, fn, ref):
    a = values(dtype)
    b = a.copy()
    b.reshape(-1)[::2] = values(dtype).reshape(-1)[::2]
    got = MODES[mode](fn)(ms.Tensor(a), ms.Tensor(b))
    assert got.dtype == ms.bool_
    np.testing.assert_array_equal(got.asnumpy(), ref(a, b))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_unary_ops(mode, dtype):
    a = values(dtype)
    x = ms.Tensor(a)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(MODES[mode](ops.neg)(x).asnumpy(), np.negative(a))
        np.testing.assert_array_equal(MODES[mode](ops.square)(x).asnumpy(), np.square(a))
    np.testing.assert_array_equal(MODES[mode](ops.abs)(x).asnumpy(), a)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(mode, dtype, axis):
    a = values(dtype)
    x = ms.Tensor(a)
    kw = {} if axis is None else {"axis": axis}
    # MindSpore keeps the dtype (NumPy would widen): the sums wrap in it.
    np.testing.assert_array_equal(MODES[mode](lambda t: ops.sum(t, **({"dim": axis} if axis is not None else {})))(x)
                                  .asnumpy(), a.sum(dtype=dtype, **kw))
    np.testing.assert_array_equal(MODES[mode](lambda t: t.prod(**kw))(x).asnumpy(), a.prod(dtype=dtype, **kw))
    np.testing.assert_array_equal(MODES[mode](lambda t: t.max(**kw))(x).asnumpy(), a.max(**kw))
    np.testing.assert_array_equal(MODES[mode](lambda t: t.min(**kw))(x).asnumpy(), a.min(**kw))
    np.testing.assert_array_equal(MODES[mode](lambda t: t.argmax(**kw))(x).asnumpy(), a.argmax(**kw))
    mean = MODES[mode](lambda t: t.mean(**kw))(x)
    assert mean.dtype == ms.float32  # integer means are float32, as for the signed types
    np.testing.assert_allclose(mean.asnumpy(), a.astype(np.float64).mean(**kw), rtol=1e-6)


def test_uint64_beyond_int64_range():
    big = np.array([2**63, 2**64 - 1, 2**63 + 12345], np.uint64)
    x = ms.Tensor(big)
    assert x.dtype == ms.uint64 and x.asnumpy().tolist() == big.tolist()
    assert (x + 1).asnumpy().tolist() == [2**63 + 1, 0, 2**63 + 12346]  # wraps
    assert (x - ms.Tensor(np.array([1, 1, 1], np.uint64))).asnumpy().tolist() == [2**63 - 1, 2**64 - 2, 2**63 + 12344]
    assert (x > 2**63).asnumpy().tolist() == [False, True, True]
    assert (x // 2).asnumpy().tolist() == [2**62, 2**63 - 1, (2**63 + 12345) // 2]
    assert x.max().item() == 2**64 - 1 and x.argmax().item() == 1
    assert ms.Tensor([2**64 - 1], ms.uint64).asnumpy().tolist() == [2**64 - 1]
    assert (x + (2**64 - 1)).asnumpy().tolist() == [2**63 - 1, 2**64 - 2, 2**63 + 12344]
    with pytest.raises(OverflowError):
        x + 2**64


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_python_scalars_keep_the_dtype_and_wrap(dtype):
    a = np.array([0, 1, 7], dtype)
    x = ms.Tensor(a)
    got = x - 1
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.asnumpy(), a - dtype(1))
    assert (x * 2.5).dtype == ms.float32
    np.testing.assert_allclose((x * 2.5).asnumpy(), a * 2.5)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_casts_to_and_from_every_dtype(dtype):
    a = np.array([0, 1, 200, np.iinfo(dtype).max], dtype)
    x = ms.Tensor(a)
    for target in (np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64,
                   np.float16, np.float32, np.float64, np.complex64, np.complex128):
        got = x.astype(ms.common.dtype._FROM_NUMPY[np.dtype(target)]).asnumpy()
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(got, a.astype(target))
    f = np.array([0.0, 1.9, 255.5, 3e4, 4e9], np.float64)
    with np.errstate(invalid="ignore"):
        want = f.astype(dtype)
    if dtype != np.uint16:  # float to uint16 beyond its range: NumPy's result varies by platform
        np.testing.assert_array_equal(ms.Tensor(f).astype(ms.common.dtype._FROM_NUMPY[np.dtype(dtype)]).asnumpy(),
                                      want)
    big = np.array([1.5e19, 9.3e18], np.float64)
    np.testing.assert_array_equal(ms.Tensor(big).astype(ms.uint64).asnumpy(), big.astype(np.uint64))


def test_mixed_signed_unsigned_promotion():
    cases = [(np.uint8, np.int8, ms.int16), (np.uint16, np.int16, ms.int32), (np.uint16, np.int8, ms.int32),
             (np.uint32, np.int32, ms.int64), (np.uint32, np.int64, ms.int64), (np.uint64, np.int64, ms.float64),
             (np.uint16, np.uint32, ms.uint32), (np.uint8, np.int64, ms.int64), (np.uint64, np.float32, ms.float32)]
    for a, b, want in cases:
        x = ms.Tensor(np.array([3], a))
        y = ms.Tensor(np.array([2], b))
        got = x + y
        assert got.dtype == want, (a, b)
        assert got.asnumpy().tolist() == [5]
        assert np.result_type(a, b) == np.dtype(ms.common.dtype.dtype_to_nptype(want)) or b == np.float32


def test_ops_without_unsigned_kernels_raise_type_error():
    x = ms.Tensor(np.array([1, 2], np.uint32))
    with pytest.raises(TypeError, match=r"\[exp\].*UInt32"):
        ops.exp(x)
    with pytest.raises(TypeError, match=r"\[matmul\].*UInt32"):
        ops.matmul(x.reshape(1, 2), x.reshape(2, 1))


def test_graph_mode_cell():
    class Net(nn.Cell):
        def construct(self, a, b):
            return (a * b + a) // b, ops.sum(a)

    a, b = values(np.uint32), values(np.uint32)
    b[b == 0] = 1
    ms.set_context(mode=ms.GRAPH_MODE)
    q, s = Net()(ms.Tensor(a), ms.Tensor(b))
    np.testing.assert_array_equal(q.asnumpy(), (a * b + a) // b)
    assert s.asnumpy() == a.sum(dtype=np.uint32)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_sort_topk_cumsum_and_indexing(dtype):
    a = values(dtype, (7,))
    x = ms.Tensor(a)
    np.testing.assert_array_equal(ops.sort(x)[0].asnumpy(), np.sort(a))
    np.testing.assert_array_equal(ops.topk(x, 3)[0].asnumpy(), np.sort(a)[::-1][:3])
    np.testing.assert_array_equal(ops.cumsum(x, 0).asnumpy(), np.cumsum(a, dtype=dtype))
    np.testing.assert_array_equal(ops.gather(x, ms.Tensor([6, 0]), 0).asnumpy(), a[[6, 0]])
    np.testing.assert_array_equal(x[2:5].asnumpy(), a[2:5])
    np.testing.assert_array_equal(ops.concat((x, x)).asnumpy(), np.concatenate((a, a)))
