"""Parity tests of the reductions, argmax/argmin and softmax/log_softmax
against NumPy: axes (int, list, [] for all, negative), keep_dims, 0-d and
empty tensors, shapes that take each fast path (last axis, leading axes,
middle axes, several groups, long reductions split over the pool), NaN,
determinism, errors and finite-difference gradients."""
import warnings

import numpy as np
import pytest

import msrt

from .harness import _C, check_grad, covers, gradients, run_op, tensor

covers("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin", "softmax",
       "log_softmax")

RNG = np.random.default_rng(99)
REDUCE = {"reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max, "reduce_min": np.min,
          "reduce_prod": np.prod}

CASES = [  # (shape, axis)
    ((), []),
    ((), 0),
    ((5,), []),
    ((5,), 0),
    ((3, 4), 1),
    ((3, 4), 0),
    ((3, 4), -1),
    ((3, 4), [0, 1]),
    ((2, 3, 4), 1),
    ((2, 3, 4), [0, 2]),
    ((2, 3, 4, 5), [1, 3]),
    ((2, 1, 4), [1]),
    ((2, 0, 3), [0, 2]),
    ((2, 0, 3), 1),
    ((0,), []),
    ((64, 1024), -1),      # many rows on the pool
    ((64, 1024), 0),       # leading axis, columns on the pool
    ((3, 70000), 1),       # few long rows: split and combined in order
    ((70000, 3), 0),       # few long columns
    ((200000,), []),       # one long reduction
    ((8, 300, 40), [0, 2]),
]


def rand(shape, dtype, low=-2.0, high=2.0):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def np_axis(shape, axis):
    if axis == []:
        return None
    if isinstance(axis, int):
        return axis if len(shape) else None
    return tuple(axis)


def expect_error(exc, tokens, name, inputs, attrs=None):
    with pytest.raises(exc) as info:
        run_op(name, inputs, attrs)
    for token in tokens:
        assert token in str(info.value), f"{token!r} not in {info.value}"


@pytest.mark.parametrize("name", sorted(REDUCE))
@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduce_matches_numpy(name, shape, axis, keep_dims):
    ref_fn = REDUCE[name]
    empty_reduced = any(shape[a] == 0 for a in (range(len(shape)) if axis == [] else np.atleast_1d(axis)) if len(shape))
    if name in ("reduce_max", "reduce_min") and empty_reduced:
        pytest.skip("covered by test_empty_max_raises")
    for dtype in [np.float32, np.float64, np.int32, np.int64]:
        low, high = (0.5, 1.5) if name == "reduce_prod" else (-2, 2)
        if name == "reduce_prod" and np.issubdtype(dtype, np.integer):
            low, high = 1, 2
        x = rand(shape, dtype, low, high)
        if name == "reduce_prod" and x.size > 1000 and not np.issubdtype(dtype, np.integer):
            x = rand(shape, dtype, 0.999, 1.001)  # keep long products finite
        elif name == "reduce_prod" and x.size > 1000:
            x = np.where(RNG.uniform(size=shape) < 3e-5, -2, 1).astype(dtype)  # no integer overflow
        (y,) = run_op(name, [x], {"axis": axis, "keep_dims": keep_dims})
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice is NaN
            ref = ref_fn(x.astype(np.float64), axis=np_axis(shape, axis), keepdims=keep_dims)
        out_dtype = np.float32 if (name == "reduce_mean" and np.issubdtype(dtype, np.integer)) else dtype
        assert y.dtype == out_dtype and y.shape == np.shape(ref), (y.dtype, y.shape, np.shape(ref))
        if dtype == np.float32 or out_dtype == np.float32:
            rtol = 1e-4 if x.size > 1000 else 2e-6
            np.testing.assert_allclose(y, ref, rtol=rtol, atol=1e-4 if name != "reduce_prod" else 0)
        elif np.issubdtype(out_dtype, np.integer):
            np.testing.assert_array_equal(y, ref.astype(out_dtype))
        else:
            np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-10)


def test_reduce_defaults_and_int_axis():
    x = rand((3, 4), np.float64)
    np.testing.assert_allclose(run_op("reduce_sum", [x])[0], x.sum())
    np.testing.assert_allclose(run_op("reduce_sum", [x], {"axis": (0,)})[0], x.sum(0))
    np.testing.assert_allclose(run_op("reduce_max", [x], {"axis": -2, "keep_dims": True})[0], x.max(0, keepdims=True))


def test_reduce_small_ints_and_half():
    x = rand((4, 6), np.int8, -3, 3)
    assert run_op("reduce_sum", [x], {"axis": 1})[0].tolist() == x.sum(1).astype(np.int8).tolist()
    h = rand((4, 6), np.float16)
    (y,) = run_op("reduce_sum", [h], {"axis": 0})
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), h.astype(np.float32).sum(0), rtol=2e-3, atol=2e-3)
    assert run_op("reduce_mean", [rand((3,), np.int32)])[0].dtype == np.float32


def test_max_min_nan_and_empty_sum():
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], np.float32)
    y = run_op("reduce_max", [x], {"axis": 1})[0]
    assert np.isnan(y[0]) and y[1] == 3.0
    y = run_op("reduce_min", [np.tile(x, (1, 100))], {"axis": 1})[0]
    assert np.isnan(y[0]) and y[1] == 1.0
    long = RNG.standard_normal((4, 1000))
    long[0, 500] = np.nan
    long[1, 700] = np.inf
    long[2, 900] = -np.inf
    long[3, 999] = np.nan  # in the tail, after the vector lanes
    for dtype in [np.float32, np.float64]:
        for name, ref in [("reduce_max", np.max), ("reduce_min", np.min)]:
            np.testing.assert_array_equal(run_op(name, [long.astype(dtype)], {"axis": 1})[0],
                                          ref(long.astype(dtype), axis=1), err_msg=name)
    assert run_op("reduce_sum", [np.zeros((0, 3), np.float32)], {"axis": 0})[0].tolist() == [0, 0, 0]
    assert run_op("reduce_prod", [np.zeros((0, 3), np.float32)], {"axis": 0})[0].tolist() == [1, 1, 1]
    assert np.isnan(run_op("reduce_mean", [np.zeros((0,), np.float32)])[0])


def test_empty_max_raises():
    expect_error(ValueError, ["[reduce_max]", "size 0", "(2, 0, 3)"], "reduce_max", [np.zeros((2, 0, 3))],
                 {"axis": 1})
    expect_error(ValueError, ["[reduce_min]", "size 0"], "reduce_min", [np.zeros((0,))])
    expect_error(ValueError, ["[argmax]", "size 0"], "argmax", [np.zeros((2, 0))])


def test_reduce_errors():
    x = np.ones((2, 3), np.float32)
    expect_error(ValueError, ["[reduce_sum]", "axis 2", "rank 2", "[-2, 1]"], "reduce_sum", [x], {"axis": 2})
    expect_error(ValueError, ["[reduce_sum]", "repeated"], "reduce_sum", [x], {"axis": [1, -1]})
    expect_error(TypeError, ["[reduce_sum]", "'axis'", "str"], "reduce_sum", [x], {"axis": "0"})
    expect_error(TypeError, ["[reduce_sum]", "'keep_dims'", "bool"], "reduce_sum", [x], {"keep_dims": 1})
    expect_error(TypeError, ["[reduce_mean]", "Bool"], "reduce_mean", [np.ones(3, np.bool_)])
    expect_error(TypeError, ["[argmax]", "'axis'", "int"], "argmax", [x], {"axis": [0]})


def test_sum_is_deterministic_and_exactly_ordered():
    x = RNG.standard_normal(1_000_003).astype(np.float32)
    first = run_op("reduce_sum", [x])[0]
    for _ in range(3):
        assert run_op("reduce_sum", [x])[0].tobytes() == first.tobytes()
    np.testing.assert_allclose(first, x.astype(np.float64).sum(), rtol=1e-5)
    rows = RNG.standard_normal((4, 300000)).astype(np.float32)
    first = run_op("reduce_sum", [rows], {"axis": 1})[0]
    assert run_op("reduce_sum", [rows], {"axis": 1})[0].tobytes() == first.tobytes()


# ---- argmax / argmin ----

@pytest.mark.parametrize("name, ref", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("shape, axis", [((7,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((50, 2000), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_arg_reductions(name, ref, shape, axis, dtype):
    x = rand(shape, dtype, -3, 3)  # small ints: many ties, the first index wins
    for keep in [False, True]:
        (y,) = run_op(name, [x], {"axis": axis, "keep_dims": keep})
        expected = ref(x, axis=axis)
        if keep:
            expected = np.expand_dims(expected, axis)
        assert y.dtype == np.int32
        np.testing.assert_array_equal(y, expected)


def test_arg_reductions_default_axis_nan_and_0d():
    x = np.array([[1.0, np.nan, 5.0, np.nan], [3.0, 3.0, 1.0, 0.0]])
    assert run_op("argmax", [x])[0].tolist() == [1, 0]
    assert run_op("argmin", [x])[0].tolist() == [1, 3]
    (y,) = run_op("argmax", [np.array(2.5)])
    assert y.shape == () and y == 0


# ---- softmax / log_softmax ----

def np_softmax(x, axis):
    if x.size == 0:
        return x
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    if x.size == 0:
        return x
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("name, ref", [("softmax", np_softmax), ("log_softmax", np_log_softmax)])
@pytest.mark.parametrize("shape, axis", [((5,), 0), ((4, 10), -1), ((4, 10), 0), ((2, 3, 4), 1), ((2, 3, 4), -1),
                                         ((256, 1024), -1), ((64, 700, 3), 1), ((0, 4), -1), ((3, 0), -1), ((), -1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_matches_numpy(name, ref, shape, axis, dtype):
    x = rand(shape, dtype, -5, 5)
    (y,) = run_op(name, [x], {"axis": axis})
    expected = ref(x.astype(np.float64), axis if len(shape) else None)
    assert y.dtype == dtype and y.shape == x.shape
    tol = dict(rtol=2e-6, atol=2e-7) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(y, expected, **tol)


def test_softmax_is_stable_and_default_axis():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -2000.0]], np.float32)
    np.testing.assert_allclose(run_op("softmax", [x])[0], np_softmax(x.astype(np.float64), -1), rtol=1e-6)
    np.testing.assert_allclose(run_op("log_softmax", [x])[0], np_log_softmax(x.astype(np.float64), -1), rtol=1e-6)
    h = rand((3, 8), np.float16)
    (y,) = run_op("softmax", [h])
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), np_softmax(h.astype(np.float64), -1), rtol=3e-3, atol=1e-3)


def test_softmax_errors():
    expect_error(TypeError, ["[softmax]", "Int32"], "softmax", [np.ones(3, np.int32)])
    expect_error(ValueError, ["[log_softmax]", "axis 2"], "log_softmax", [np.ones((2, 2))], {"axis": 2})


# ---- gradients ----

@pytest.mark.parametrize("name", sorted(REDUCE))
@pytest.mark.parametrize("shape, axis, keep", [((3, 4), 1, False), ((3, 4), [], False), ((2, 3, 4), [0, 2], True),
                                               ((4,), 0, True), ((), [], False)])
def test_reduce_gradient(name, shape, axis, keep):
    x = RNG.permutation(np.arange(1, np.prod(shape, dtype=int) + 1)).reshape(shape) / 7.0 + 0.5  # distinct, no ties
    check_grad(name, [x], {"axis": axis, "keep_dims": keep})


def test_max_gradient_shares_ties():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    g = gradients("reduce_max", [x], {"axis": 1})[0]
    np.testing.assert_allclose(g, [[0, 0.5, 0.5], [1, 0, 0]])


@pytest.mark.parametrize("x", [
    np.array([[2.0, 0.0, 3.0], [1.5, 2.0, 0.5]]),   # one zero in a row
    np.array([[0.0, 0.0, 3.0], [1.5, 0.0, 0.5]]),   # two zeros in a row
])
def test_prod_gradient_with_zeros(x):
    check_grad("reduce_prod", [x], {"axis": 1})
    check_grad("reduce_prod", [x], {"axis": []})


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1)])
def test_softmax_gradient(name, shape, axis):
    check_grad(name, [rand(shape, np.float64)], {"axis": axis})


def test_reductions_run_async_and_chain():
    x = tensor(rand((16, 16), np.float32))
    s = _C.call("reduce_sum", [x], {"axis": 1})[0]
    m = _C.call("reduce_max", [s], {})[0]
    np.testing.assert_allclose(m.asnumpy(), x.asnumpy().sum(1).max(), rtol=1e-6)
    assert msrt._C.op_info("reduce_sum")["kernels"] == ["CPU:vectorized"]


covers("reduce_all", "reduce_any")


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("axis, keep", [([], False), ([1], False), ([0], True), ([0, 1], True)])
def test_all_any_match_numpy(dtype, axis, keep):
    x = (RNG.integers(0, 3, size=(3, 4)) * (RNG.random((3, 4)) > 0.2)).astype(dtype)
    x[0] = 1  # one row entirely nonzero
    for name, ref in [("reduce_all", np.all), ("reduce_any", np.any)]:
        (y,) = run_op(name, [x], {"axis": axis, "keep_dims": keep})
        expected = ref(x, axis=tuple(axis) if axis else None, keepdims=keep)
        assert y.dtype == np.bool_
        np.testing.assert_array_equal(y, expected, err_msg=name)


def test_all_any_errors():
    expect_error(ValueError, ["[reduce_min]", "axis 2"], "reduce_all", [np.ones((2, 3))], {"axis": 2})
    expect_error(TypeError, ["[reduce_any]", "'keep_dims'", "bool"], "reduce_any", [np.ones(3)], {"keep_dims": 1})


# --- MindSpore's functional reductions (composites over the kernels above) ---
covers("sum", "amax", "amin", "max", "min", "argmax_with_value", "argmin_with_value")


@pytest.mark.parametrize("axis, keep", [(None, False), ([1], False), ([0, 2], True), (-1, True)])
def test_sum_amax_amin_match_numpy(axis, keep):
    x = RNG.normal(size=(3, 4, 5))
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    attrs = {"axis": axis, "keep_dims": keep}
    np.testing.assert_allclose(run_op("sum", [x], attrs)[0], x.sum(np_axis, keepdims=keep), rtol=1e-12)
    np.testing.assert_array_equal(run_op("amax", [x], attrs)[0], x.max(np_axis, keepdims=keep))
    np.testing.assert_array_equal(run_op("amin", [x], attrs)[0], x.min(np_axis, keepdims=keep))
    for name in ("sum", "amax", "amin"):
        check_grad(name, [x], attrs)


def test_sum_dtype_bools_and_initial():
    b = RNG.random((4, 3)) > 0.5
    (count,) = run_op("sum", [b], {"axis": 0})
    assert count.dtype == np.int64
    np.testing.assert_array_equal(count, b.sum(0))
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    (y,) = run_op("sum", [x], {"dtype": "float64", "initial": 2})
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, x.astype(np.float64).sum(initial=2.0), rtol=1e-12)
    np.testing.assert_array_equal(run_op("amax", [x], {"axis": 1, "initial": 0.5})[0], x.max(1, initial=0.5))
    np.testing.assert_array_equal(run_op("amin", [x], {"axis": 1, "initial": -0.5})[0], x.min(1, initial=-0.5))
    with pytest.raises(TypeError, match="'initial'"):
        run_op("amax", [x], {"initial": "big"})


@pytest.mark.parametrize("axis, keep", [(None, False), (None, True), (1, False), (-1, True)])
def test_max_min_return_values_and_indices(axis, keep):
    x = RNG.permutation(60).reshape(3, 4, 5).astype(np.float64)
    for name, np_value, np_index in [("max", np.max, np.argmax), ("min", np.min, np.argmin)]:
        values, indices = run_op(name, [x], {"axis": axis, "keep_dims": keep})
        np.testing.assert_array_equal(values, np_value(x, axis, keepdims=keep))
        ref = np_index(x, axis)
        if keep:
            ref = np.reshape(ref, [1] * 3) if axis is None else np.expand_dims(ref, axis)
        np.testing.assert_array_equal(indices, ref)
        assert len(run_op(name, [x], {"axis": axis, "return_indices": False})) == 1
        check_grad(name, [x], {"axis": axis, "keep_dims": keep})


def test_argmax_over_the_flattened_tensor_and_int64_indices():
    x = RNG.permutation(24).reshape(2, 3, 4).astype(np.float32)
    (flat,) = run_op("argmax", [x], {"axis": None})
    assert flat.shape == () and flat == x.argmax()
    (kept,) = run_op("argmin", [x], {"axis": None, "keep_dims": True})
    assert kept.shape == (1, 1, 1) and kept.item() == x.argmin()
    (wide,) = run_op("argmax", [x], {"axis": 1, "output_type": "int64"})
    assert wide.dtype == np.int64
    np.testing.assert_array_equal(wide, x.argmax(1))
    with pytest.raises(ValueError, match="output_type"):
        run_op("argmax", [x], {"output_type": "float32"})
    with pytest.raises(ValueError, match="empty tensor"):
        run_op("argmax", [np.zeros((2, 0))], {"axis": None})


def test_index_with_value_primitives():
    x = RNG.normal(size=(3, 4))
    for name, np_index, np_value in [("argmax_with_value", np.argmax, np.max),
                                     ("argmin_with_value", np.argmin, np.min)]:
        index, value = run_op(name, [x], {"axis": 1, "keep_dims": True})
        np.testing.assert_array_equal(index, np_index(x, 1)[:, None])
        np.testing.assert_array_equal(value, np_value(x, 1, keepdims=True))
        check_grad(name, [x], {"axis": 0}, output_index=1)


covers("all_finite")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 7, 33, 70001])  # the vector loop's tail and the thread split
def test_all_finite_finds_one_inf_or_nan_anywhere(dtype, n):
    rng = np.random.default_rng(n)
    big = {"float16": 6.5e4, "bfloat16": 3e38}.get(dtype, 1e300 if "128" in dtype or dtype == "float64" else 3e38)
    base = rng.uniform(-1, 1, n) * big
    if dtype.startswith("complex"):
        base = base + 1j * rng.uniform(-1, 1, n) * big

    def check(values):
        t = _C.TensorBase(np.asarray(values, np.complex128 if dtype.startswith("complex") else np.float64), dtype)
        ints = _C.TensorBase(np.arange(5, dtype=np.int32))
        (out,) = _C.call("all_finite", [ints, t], {})
        assert out.asnumpy().dtype == np.bool_ and out.asnumpy().shape == ()
        return bool(out.asnumpy())

    with np.errstate(over="ignore"):
        assert check(base)
        for bad in (np.inf, -np.inf, np.nan):
            for at in {0, n // 2, n - 1}:
                values = base.copy()
                values[at] = bad * (1j if dtype.startswith("complex") and at % 2 else 1)
                assert not check(values), (bad, at)


def test_all_finite_of_nothing_and_of_integers():
    (out,) = _C.call("all_finite", [], {})
    assert bool(out.asnumpy())
    (out,) = _C.call("all_finite", [_C.TensorBase(np.array([2**31 - 1], np.int32))], {})
    assert bool(out.asnumpy())
