"""Parity tests of the creation ops (src/ops/creation.cc) against NumPy:
arange's values and dtypes (NumPy's float steps exactly), eye, and the
composites zeros, ones, full_like and zeros_like/ones_like with a dtype."""
import math

import numpy as np
import pytest

from .harness import covers, run_op

covers("arange", "eye", "zeros", "ones", "full_like", "zeros_like_dtype", "ones_like_dtype")

DTYPES = ["float32", "float64", "float16", "int32", "int64", "int8", "bool"]


@pytest.mark.parametrize("args", [(5,), (0,), (-3,), (2, 10, 3), (10, 2, -3), (3, 3), (-7, 7, 2), (5, 1),
                                  (0.0, 1.0, 0.1), (1.5, -2, -0.3), (0.1, 1, 0.2), (0, 1, 0.5), (2.5,),
                                  (-1e-3, 1e-3, 1e-4), (0, 10, 1.0), (1, 2.5), (2**40, 2**40 + 5, 2)])
def test_arange_matches_numpy(args):
    attrs = dict(zip(("start", "end", "step"), args))
    out = run_op("arange", [], attrs)[0]
    want = np.arange(*args)
    want = want.astype(np.float32 if want.dtype.kind == "f" else np.int64)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arange_dtypes(dtype):
    for args in [(0, 6, 2), (0.0, 1.0, 0.25), (-3, 3)]:
        out = run_op("arange", [], {**dict(zip(("start", "end", "step"), args)), "dtype": dtype})[0]
        np.testing.assert_array_equal(out, np.arange(*args).astype(out.dtype))
        assert out.dtype == np.dtype(dtype if dtype != "bool" else np.bool_)


def test_arange_errors():
    for attrs in [{"start": 0, "end": 10, "step": 0}, {"start": 0.0, "end": 1.0, "step": 0.0}]:
        with pytest.raises(ValueError, match=r"\[arange\] the 'step' can not be 0"):
            run_op("arange", [], attrs)
    for end in (math.nan, math.inf):
        with pytest.raises(ValueError, match="can not compute the length"):
            run_op("arange", [], {"start": 0, "end": end})
    with pytest.raises(TypeError, match="'end' must be a bool, an int or a float"):
        run_op("arange", [], {"start": 0, "end": "a"})


@pytest.mark.parametrize("dtype", DTYPES + [None])
def test_eye(dtype):
    for n, m in [(3, None), (2, 4), (4, 2), (0, 3), (3, 0), (1, 1)]:
        attrs = {"n": n, "m": m} if dtype is None else {"n": n, "m": m, "dtype": dtype}
        out = run_op("eye", [], attrs)[0]
        assert out.dtype == np.dtype(np.float32 if dtype is None else (np.bool_ if dtype == "bool" else dtype))
        np.testing.assert_array_equal(out, np.eye(n, m))
    with pytest.raises(ValueError, match=r"\[eye\] negative dimensions"):
        run_op("eye", [], {"n": -1, "m": 2})
    with pytest.raises(TypeError, match="'n' must be an int"):
        run_op("eye", [], {"n": 2.0})


@pytest.mark.parametrize("dtype", DTYPES + [None])
def test_zeros_ones(dtype):
    for shape in [(2, 3), [4], 5, (0, 2), ()]:
        attrs = {"shape": shape} if dtype is None else {"shape": shape, "dtype": dtype}
        want_dtype = np.float32 if dtype is None else (np.bool_ if dtype == "bool" else dtype)
        size = (shape,) if isinstance(shape, int) else tuple(shape)
        for name, ref in (("zeros", np.zeros), ("ones", np.ones)):
            out = run_op(name, [], attrs)[0]
            assert out.dtype == np.dtype(want_dtype) and out.shape == size
            np.testing.assert_array_equal(out, ref(size))
    with pytest.raises(ValueError, match=r"\[fill\]"):
        run_op("zeros", [], {"shape": (-1, 2)})
    with pytest.raises(TypeError, match=r"\[zeros\] attribute 'shape'"):
        run_op("zeros", [], {"shape": (1.5, 2)})


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "bool"])
def test_like_ops(dtype):
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    for value in (2, -1.5, 0):
        out = run_op("full_like", [x], {"fill_value": value})[0]
        assert out.dtype == x.dtype
        np.testing.assert_array_equal(out, np.full_like(x, value))
        out = run_op("full_like", [x], {"fill_value": value, "dtype": dtype})[0]
        np.testing.assert_array_equal(out, np.full(x.shape, value).astype(out.dtype))
        assert out.dtype == np.dtype(np.bool_ if dtype == "bool" else dtype)
    for name, ref in (("zeros_like_dtype", np.zeros_like), ("ones_like_dtype", np.ones_like)):
        out = run_op(name, [x])[0]
        assert out.dtype == x.dtype
        np.testing.assert_array_equal(out, ref(x))
        out = run_op(name, [x], {"dtype": dtype})[0]
        assert out.dtype == np.dtype(np.bool_ if dtype == "bool" else dtype)
        np.testing.assert_array_equal(out, ref(x).astype(out.dtype))
