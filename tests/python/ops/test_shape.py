"""Parity tests of the shape ops against NumPy over dtypes (the kernels move
bytes, so every element size is exercised), 0-d and empty tensors, errors and
finite-difference gradients."""
import numpy as np
import pytest

from .harness import _C, check_grad, covers, gradients, run_op, tensor

covers("reshape", "transpose", "expand_dims", "squeeze", "flatten", "concat", "stack", "split", "strided_slice",
       "gather", "gather_grad", "one_hot", "broadcast_to", "tile", "fill")

RNG = np.random.default_rng(7)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.int16, np.bool_, np.float16]


def rand(shape, dtype=np.float64):
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-50, 50, size=shape).astype(dtype)
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


def expect_error(exc, tokens, name, inputs, attrs=None):
    with pytest.raises(exc) as info:
        run_op(name, inputs, attrs)
    for token in tokens:
        assert token in str(info.value), f"{token!r} not in {info.value}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_family(dtype):
    x = rand((2, 3, 4), dtype)
    np.testing.assert_array_equal(run_op("reshape", [x], {"shape": [4, -1]})[0], x.reshape(4, -1))
    np.testing.assert_array_equal(run_op("reshape", [x], {"shape": (24,)})[0], x.reshape(24))
    np.testing.assert_array_equal(run_op("expand_dims", [x], {"axis": -1})[0], x[..., None])
    np.testing.assert_array_equal(run_op("expand_dims", [x], {"axis": 0})[0], x[None])
    y = rand((1, 3, 1, 2), dtype)
    np.testing.assert_array_equal(run_op("squeeze", [y])[0], y.squeeze())
    np.testing.assert_array_equal(run_op("squeeze", [y], {"axis": [2]})[0], y.squeeze(2))
    np.testing.assert_array_equal(run_op("flatten", [x])[0], x.reshape(2, 12))


def test_reshape_edge_cases():
    assert run_op("reshape", [np.array(3.0)], {"shape": [1, 1]})[0].shape == (1, 1)
    assert run_op("reshape", [np.ones((1, 1))], {"shape": []})[0].shape == ()
    with pytest.raises(ValueError, match="can not infer the -1"):  # ambiguous, as in NumPy
        run_op("reshape", [np.ones((0, 4))], {"shape": [2, 0, -1]})
    assert run_op("reshape", [np.ones((0, 4))], {"shape": [4, 0]})[0].shape == (4, 0)
    assert run_op("flatten", [np.ones(5)])[0].shape == (5, 1)
    assert run_op("squeeze", [np.ones((1, 1))])[0].shape == ()
    assert run_op("expand_dims", [np.array(1.0)], {"axis": 0})[0].shape == (1,)


def test_reshape_family_errors():
    x = np.ones((2, 3))
    expect_error(ValueError, ["[reshape]", "(2, 3)", "[4, 2]", "6 elements"], "reshape", [x], {"shape": [4, 2]})
    expect_error(ValueError, ["[reshape]", "at most one"], "reshape", [x], {"shape": [-1, -1]})
    expect_error(ValueError, ["[reshape]", "-1"], "reshape", [x], {"shape": [4, -1]})
    expect_error(TypeError, ["[reshape]", "'shape'", "list"], "reshape", [x], {"shape": 6})
    expect_error(ValueError, ["[squeeze]", "axis 1", "size 3"], "squeeze", [x], {"axis": [1]})
    expect_error(ValueError, ["[expand_dims]", "axis 3"], "expand_dims", [x], {"axis": 3})
    expect_error(ValueError, ["[flatten]", "rank >= 1"], "flatten", [np.array(1.0)])


@pytest.mark.parametrize("name, attrs", [("reshape", {"shape": [3, 2]}), ("expand_dims", {"axis": 1}),
                                         ("squeeze", {}), ("flatten", {})])
def test_reshape_family_gradient(name, attrs):
    x = rand((2, 1, 3))
    check_grad(name, [x], attrs)


@pytest.mark.parametrize("shape, perm", [
    ((2, 3), [1, 0]), ((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [0, 2, 1]), ((2, 3, 4, 5), [3, 1, 0, 2]),
    ((2, 1, 3), [2, 1, 0]), ((1, 4, 1, 5), [3, 2, 1, 0]), ((3,), [0]), ((), []), ((0, 3), [1, 0]),
    ((200, 300), [1, 0]), ((4, 130, 70), [0, 2, 1]), ((2, 3, 4), [-1, 0, 1]), ((2, 3, 4, 5), [0, 1, 2, 3]),
])
def test_transpose(shape, perm):
    for dtype in DTYPES:
        x = rand(shape, dtype)
        (y,) = run_op("transpose", [x], {"perm": perm})
        np.testing.assert_array_equal(y, np.transpose(x, perm))


def test_transpose_errors_and_gradient():
    expect_error(ValueError, ["[transpose]", "permutation"], "transpose", [np.ones((2, 3))], {"perm": [0, 0]})
    expect_error(ValueError, ["[transpose]", "2 entries"], "transpose", [np.ones((2, 3))], {"perm": [0]})
    check_grad("transpose", [rand((2, 3, 4))], {"perm": [2, 0, 1]})


@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_stack_split(dtype):
    a, b, c = rand((2, 3, 4), dtype), rand((2, 1, 4), dtype), rand((2, 0, 4), dtype)
    np.testing.assert_array_equal(run_op("concat", [a, b, c], {"axis": 1})[0], np.concatenate([a, b, c], 1))
    np.testing.assert_array_equal(run_op("concat", [a, a], {"axis": -1})[0], np.concatenate([a, a], -1))
    np.testing.assert_array_equal(run_op("concat", [a])[0], a)
    for axis in [0, 1, 3, -1]:
        np.testing.assert_array_equal(run_op("stack", [a, a, a], {"axis": axis})[0], np.stack([a, a, a], axis))
    parts = run_op("split", [a], {"axis": 2, "output_num": 2})
    for got, ref in zip(parts, np.split(a, 2, axis=2)):
        np.testing.assert_array_equal(got, ref)
    assert len(run_op("split", [a], {"output_num": 2})) == 2
    big = rand((300, 400), dtype)
    np.testing.assert_array_equal(run_op("concat", [big, big], {"axis": 1})[0], np.concatenate([big, big], 1))
    np.testing.assert_array_equal(run_op("stack", [np.array(1, dtype), np.array(0, dtype)])[0],
                                  np.stack([np.array(1, dtype), np.array(0, dtype)]))


def test_concat_stack_split_errors():
    expect_error(ValueError, ["[concat]", "axis 1", "xs[1]"], "concat", [np.ones((2, 3)), np.ones((3, 3))],
                 {"axis": 1})
    expect_error(TypeError, ["[concat]", "xs[1]", "Float32"], "concat",
                 [np.ones((2, 3)), np.ones((2, 3), np.float32)])
    expect_error(ValueError, ["[concat]", "0-d"], "concat", [np.array(1.0)])
    expect_error(ValueError, ["[stack]", "same shape"], "stack", [np.ones(2), np.ones(3)])
    expect_error(ValueError, ["[split]", "size 3", "2 equal parts"], "split", [np.ones((3, 2))], {"output_num": 2})
    expect_error(TypeError, ["[split]", "missing the required attribute 'output_num'"], "split", [np.ones(2)])
    with pytest.raises(ValueError, match=r"\[concat\] needs at least one tensor"):
        _C.call("concat", [], {})


def test_concat_stack_split_gradients():
    a, b = rand((2, 3)), rand((2, 2))
    check_grad("concat", [a, b], {"axis": 1}, wrt=(0, 1))
    check_grad("stack", [a, a * 2, a + 1], {"axis": 1}, wrt=(0, 1, 2))
    check_grad("stack", [a], {"axis": 0})
    x = rand((4, 3))
    for k in range(2):
        check_grad("split", [x], {"axis": 0, "output_num": 2}, output_index=k)


def test_split_gradient_with_all_outputs():
    # Both outputs used: concat of their gradients.
    x = tensor(rand((4, 3)))
    x.requires_grad = True
    tape = _C.GradTape()
    try:
        p, q = _C.call("split", [x], {"output_num": 2})
        s = _C.call("add", [_C.call("mul", [p, tensor(np.full((2, 3), 2.0))])[0], q])[0]
        (g,) = tape.gradient([s], [tensor(np.ones((2, 3)))], [x])
    finally:
        tape.end()
    np.testing.assert_array_equal(g.asnumpy(), np.concatenate([np.full((2, 3), 2.0), np.ones((2, 3))]))


SLICES = [  # (shape, begin, end, strides)
    ((10,), [2], [8], [1]),
    ((10,), [8], [2], [-2]),
    ((10,), [-3], [100], [1]),
    ((10,), [-100], [-1], [3]),
    ((10,), [9], [-100], [-1]),
    ((10,), [5], [5], [1]),
    ((4, 5, 6), [1, 0, -1], [3, 5, 0], [1, 2, -2]),
    ((4, 5, 6), [0, 1], [4, 4], [2, 1]),
    ((4, 5, 6), [3], [-5], [-1]),
    ((300, 400), [10, 3], [290, 400], [1, 1]),
    ((300, 400), [299, 399], [-301, -401], [-3, -7]),
    ((3, 0), [0, 0], [3, 0], [1, 1]),
]


@pytest.mark.parametrize("shape, begin, end, strides", SLICES)
def test_strided_slice(shape, begin, end, strides):
    index = tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))
    for dtype in DTYPES:
        x = rand(shape, dtype)
        (y,) = run_op("strided_slice", [x], {"begin": begin, "end": end, "strides": strides})
        np.testing.assert_array_equal(y, x[index])


@pytest.mark.parametrize("shape, begin, end, strides", [s for s in SLICES if np.prod(s[0]) < 1000])
def test_strided_slice_gradient(shape, begin, end, strides):
    check_grad("strided_slice", [rand(shape)], {"begin": begin, "end": end, "strides": strides})


def test_strided_slice_errors():
    x = np.ones((3, 4))
    expect_error(ValueError, ["[strided_slice]", "zero"], "strided_slice", [x],
                 {"begin": [0], "end": [2], "strides": [0]})
    expect_error(ValueError, ["[strided_slice]", "same length"], "strided_slice", [x],
                 {"begin": [0, 0], "end": [2], "strides": [1]})
    expect_error(ValueError, ["[strided_slice]", "at most 2"], "strided_slice", [x],
                 {"begin": [0, 0, 0], "end": [1, 1, 1], "strides": [1, 1, 1]})


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape, indices_shape, axis", [
    ((5,), (3,), 0), ((5, 3), (4,), 0), ((5, 3), (2, 2), 1), ((2, 5, 3), (7,), 1), ((2, 5, 3), (), -1),
    ((5, 3), (0,), 0), ((1000, 64), (5000,), 0),
])
def test_gather(index_dtype, shape, indices_shape, axis):
    for dtype in [np.float32, np.float64, np.int64, np.int8, np.bool_, np.float16]:
        x = rand(shape, dtype)
        idx = RNG.integers(0, shape[axis], size=indices_shape).astype(index_dtype)
        (y,) = run_op("gather", [x, idx], {"axis": axis})
        np.testing.assert_array_equal(y, np.take(x, idx, axis=axis))


def test_gather_gradient_accumulates_repeats():
    x = rand((5, 3))
    idx = np.array([[0, 4], [4, 4]], np.int32)
    check_grad("gather", [x, idx], {"axis": 0})
    check_grad("gather", [rand((2, 5, 3)), np.array([1, 1, 3], np.int64)], {"axis": 1})
    g = gradients("gather", [x, idx], {"axis": 0})[0]
    np.testing.assert_array_equal(g, [[1] * 3, [0] * 3, [0] * 3, [0] * 3, [3] * 3])


def test_gather_grad_op():
    dy = rand((2, 3, 4))
    idx = np.array([2, 0, 2], np.int64)
    (y,) = run_op("gather_grad", [dy, idx], {"axis": 1, "dim_size": 5})
    expected = np.zeros((2, 5, 4))
    np.add.at(expected, (slice(None), idx), dy)
    np.testing.assert_allclose(y, expected)
    check_grad("gather_grad", [dy, idx], {"axis": 1, "dim_size": 5})
    big = rand((3000, 16)).astype(np.float32)
    idx = RNG.integers(0, 50, size=3000).astype(np.int32)
    (y,) = run_op("gather_grad", [big, idx], {"axis": 0, "dim_size": 50})
    expected = np.zeros((50, 16))
    np.add.at(expected, idx, big.astype(np.float64))
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    expect_error(ValueError, ["[gather_grad]", "indices"], "gather_grad", [dy, np.array([1, 2], np.int64)],
                 {"axis": 1, "dim_size": 5})


def test_gather_errors():
    expect_error(TypeError, ["[gather]", "'indices'", "Int32 or Int64", "Float64"], "gather",
                 [np.ones(3), np.ones(2)])
    expect_error(ValueError, ["[gather]", "rank >= 1"], "gather", [np.array(1.0), np.array([0])])
    # Out-of-range indices are found by the kernel; the error surfaces on read.
    expect_error(IndexError, ["[gather]", "index 3", "size 3", "'gather'"], "gather",
                 [np.ones((3, 2)), np.array([0, 3], np.int32)])
    expect_error(IndexError, ["[gather]", "index -1"], "gather", [np.ones((3, 2)), np.array([-1], np.int64)])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_one_hot(index_dtype):
    idx = np.array([[0, 2, 5], [1, -1, 3]], index_dtype)  # 5 and -1 are out of range: all off
    for axis in [-1, 0, 1, 2]:
        (y,) = run_op("one_hot", [idx], {"depth": 4, "axis": axis})
        ref = (np.arange(4) == idx[..., None]).astype(np.float32)
        ref = np.moveaxis(ref, -1, axis if axis != -1 else -1)
        assert y.dtype == np.float32
        np.testing.assert_array_equal(y, ref)
    (y,) = run_op("one_hot", [idx], {"depth": 6, "on_value": 5.0, "off_value": -1.0, "dtype": "int64"})
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, np.where(np.arange(6) == idx[..., None], 5, -1))
    assert run_op("one_hot", [np.array(2, index_dtype)], {"depth": 3})[0].tolist() == [0, 0, 1]
    assert run_op("one_hot", [np.zeros(0, index_dtype)], {"depth": 3})[0].shape == (0, 3)


def test_one_hot_errors():
    expect_error(TypeError, ["[one_hot]", "'indices'", "Float32"], "one_hot", [np.ones(2, np.float32)], {"depth": 2})
    expect_error(ValueError, ["[one_hot]", "'depth'", "-1"], "one_hot", [np.ones(2, np.int32)], {"depth": -1})
    expect_error(ValueError, ["[one_hot]", "'axis'", "[-1, 1]"], "one_hot", [np.ones(2, np.int32)],
                 {"depth": 2, "axis": 2})
    expect_error(TypeError, ["[one_hot]", "missing the required attribute 'depth'"], "one_hot",
                 [np.ones(2, np.int32)])


@pytest.mark.parametrize("shape, target", [((3,), [2, 3]), ((2, 1), [2, 5]), ((), [4]), ((1, 3), [-1, -1]),
                                           ((3, 1), [2, 3, 4]), ((1,), [0]), ((300, 1), [300, 500])])
def test_broadcast_to(shape, target):
    for dtype in DTYPES:
        x = rand(shape, dtype)
        np_target = [s if t == -1 else t for s, t in zip((1,) * (len(target) - len(shape)) + shape, target)]
        (y,) = run_op("broadcast_to", [x], {"shape": target})
        np.testing.assert_array_equal(y, np.broadcast_to(x, np_target))


def test_broadcast_to_errors_and_gradient():
    expect_error(ValueError, ["[broadcast_to]", "(3,)", "[4]"], "broadcast_to", [np.ones(3)], {"shape": [4]})
    expect_error(ValueError, ["[broadcast_to]", "fewer dimensions"], "broadcast_to", [np.ones((2, 3))],
                 {"shape": [3]})
    check_grad("broadcast_to", [rand((3, 1))], {"shape": [2, 3, 4]})


@pytest.mark.parametrize("shape, multiples", [((3,), [2]), ((2, 3), [2, 3]), ((2, 3), [1, 2, 1]), ((), [3]),
                                              ((2, 1, 3), [2, 4, 1]), ((2, 3), [0, 2]), ((100, 50), [3, 20])])
def test_tile(shape, multiples):
    for dtype in DTYPES:
        x = rand(shape, dtype)
        np.testing.assert_array_equal(run_op("tile", [x], {"multiples": multiples})[0], np.tile(x, multiples))


def test_tile_errors_and_gradient():
    expect_error(ValueError, ["[tile]", "at least 2 entries"], "tile", [np.ones((2, 3))], {"multiples": [2]})
    expect_error(ValueError, ["[tile]", ">= 0"], "tile", [np.ones(2)], {"multiples": [-1]})
    check_grad("tile", [rand((2, 3))], {"multiples": [2, 1, 3]})


def test_fill():
    for dtype in ["float32", "float64", "int32", "int8", "bool_", "float16"]:
        (y,) = run_op("fill", [], {"shape": [2, 3], "value": 2.5, "dtype": dtype})
        np.testing.assert_array_equal(y, np.full((2, 3), 2.5, dtype=dtype))
    assert run_op("fill", [], {"shape": [], "value": 7})[0].tolist() == 7.0
    assert run_op("fill", [], {"shape": [0, 4], "value": 1.0})[0].shape == (0, 4)
    expect_error(ValueError, ["[fill]", "'shape'", ">= 0"], "fill", [], {"shape": [-2], "value": 1.0})
    expect_error(TypeError, ["[fill]", "'value'", "str"], "fill", [], {"shape": [1], "value": "1"})
    expect_error(TypeError, ["[fill]", "takes 0 inputs"], "fill", [np.ones(1)], {"shape": [1], "value": 1.0})


# --- reshape_like (what gradients reshape back with) -------------------------------------------
covers("reshape_like")


def test_reshape_like_and_its_gradient():
    for dtype in (np.float32, np.int64, np.uint8, np.float16, np.bool_):
        x = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
        like = np.zeros((3, 1, 2), np.float32)
        np.testing.assert_array_equal(run_op("reshape_like", [x, like])[0], x.reshape(3, 1, 2))
    with pytest.raises(ValueError, match="reshape_like"):
        run_op("reshape_like", [np.zeros((2, 3), np.float32), np.zeros(5, np.float32)])
    check_grad("reshape_like", [RNG.standard_normal((2, 3)), np.zeros((6,))])
    # The gradients of reshape, flatten, squeeze and expand_dims go back through it.
    check_grad("reshape", [RNG.standard_normal((2, 3))], {"shape": [3, 2]})
    check_grad("flatten", [RNG.standard_normal((2, 3, 2))])
