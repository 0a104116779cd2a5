"""Parity tests of the shape composites (src/ops/shape_composite.cc) against
NumPy: flatten over a range of axes, split by size or sections, strided_slice
with masks, slice, tile with fewer dims and one_hot with tensor values;
their errors, and finite-difference gradients through the ops they call."""
import numpy as np
import pytest

from .harness import check_grad, covers, run_op
from .test_shape import rand

covers("flatten_dims", "split_sections", "strided_slice_masked", "slice", "tile_dims", "one_hot_values",
       "transpose_axes")

RNG = np.random.default_rng(11)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_, np.float16]


@pytest.mark.parametrize("dtype", DTYPES)
def test_flatten_dims(dtype):
    x = rand((2, 3, 4, 5), dtype)
    for start, end, shape in [(1, -1, (2, 60)), (0, -1, (120,)), (0, 1, (6, 4, 5)), (1, 2, (2, 12, 5)),
                              (-2, -1, (2, 3, 20)), (2, 2, (2, 3, 4, 5))]:
        out = run_op("flatten_dims", [x], {"start_dim": start, "end_dim": end})[0]
        assert out.shape == shape and out.dtype == x.dtype
        np.testing.assert_array_equal(out, x.reshape(shape))
    np.testing.assert_array_equal(run_op("flatten_dims", [np.array(3.0)])[0], [3.0])  # rank <= 1: 1-D
    np.testing.assert_array_equal(run_op("flatten_dims", [np.arange(4.0)])[0], np.arange(4.0))
    assert run_op("flatten_dims", [np.ones((0, 3, 2))], {"start_dim": 1})[0].shape == (0, 6)


def test_flatten_dims_errors():
    x = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match=r"\[flatten_dims\] 'start_dim' and 'end_dim' must be in \[-3, 3\)"):
        run_op("flatten_dims", [x], {"start_dim": 3})
    with pytest.raises(ValueError, match="must not come after"):
        run_op("flatten_dims", [x], {"start_dim": 2, "end_dim": 1})
    with pytest.raises(NotImplementedError, match="order='F'"):
        run_op("flatten_dims", [x], {"order": "F"})
    with pytest.raises(ValueError, match="'order' must be one of 'C' or 'F'"):
        run_op("flatten_dims", [x], {"order": "A"})


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_sections(dtype):
    x = rand((7, 6), dtype)
    for spec, axis, ref in [(2, 1, np.split(x, 3, 1)), (3, 0, np.split(x, [3, 6], 0)), (7, 0, [x]),
                            ([1, 0, 5], 1, np.split(x, [1, 1], 1)), ((4, 3), -2, np.split(x, [4], 0)),
                            (10, 0, [x])]:
        parts = run_op("split_sections", [x], {"split_size_or_sections": spec, "axis": axis})
        assert len(parts) == len(ref)
        for got, want in zip(parts, ref):
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, want)


def test_split_sections_errors():
    x = np.ones((6, 4))
    with pytest.raises(ValueError, match="must be positive, but got 0"):
        run_op("split_sections", [x], {"split_size_or_sections": 0})
    with pytest.raises(ValueError, match=r"the sections \[1, 2\] must add up to the size of axis 0 \(6\)"):
        run_op("split_sections", [x], {"split_size_or_sections": [1, 2]})
    with pytest.raises(TypeError, match="an int or a sequence of ints"):
        run_op("split_sections", [x], {"split_size_or_sections": 2.0})
    with pytest.raises(TypeError, match="an int or a sequence of ints"):
        run_op("split_sections", [x], {"split_size_or_sections": True})
    with pytest.raises(ValueError, match="axis"):
        run_op("split_sections", [x], {"split_size_or_sections": 2, "axis": 2})


def test_split_sections_gradient():
    x = RNG.uniform(-1, 1, size=(5, 3))
    for k in range(3):
        check_grad("split_sections", [x], {"split_size_or_sections": 2}, output_index=k)
    check_grad("split_sections", [x], {"split_size_or_sections": [1, 2], "axis": 1}, output_index=1)


def _masked(x, begin, end, strides, begin_mask=0, end_mask=0, shrink=0):
    """NumPy's answer: the same masks, spelled as Python slices."""
    index = []
    for i in range(x.ndim):
        if i >= len(begin):
            index.append(slice(None))
            continue
        b = None if begin_mask >> i & 1 else begin[i]
        e = None if end_mask >> i & 1 else end[i]
        index.append(b if shrink >> i & 1 else slice(b, e, strides[i]))
    return x[tuple(index)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_slice_masked(dtype):
    x = rand((4, 5, 6), dtype)
    for args in [((0, 1, 2), (4, 5, 6), (1, 2, 3)), ((1, 0), (3, 4), (1, 1)), ((3, 4, 5), (0, 0, 0), (-1, -2, -1)),
                 ((1, 2, 3), (3, 4, 5), (1, 1, 1), 0b101, 0b010), ((1, 2, 0), (3, 4, 6), (-1, -1, 1), 0b011, 0b011),
                 ((2, 0, 0), (3, 5, 6), (1, 1, 1), 0, 0, 0b001), ((1, 3), (2, 4), (1, 1), 0, 0, 0b011)]:
        begin, end, strides = args[:3]
        masks = dict(zip(("begin_mask", "end_mask", "shrink_axis_mask"), args[3:]))
        out = run_op("strided_slice_masked", [x], {"begin": begin, "end": end, "strides": strides, **masks})[0]
        want = _masked(x, begin, end, strides, *args[3:])
        assert out.shape == want.shape
        np.testing.assert_array_equal(out, want)


def test_strided_slice_masked_errors_and_gradient():
    with pytest.raises(ValueError, match="strided_slice"):
        run_op("strided_slice_masked", [np.ones(4)], {"begin": [0], "end": [4], "strides": [0]})
    with pytest.raises(ValueError, match="strided_slice"):
        run_op("strided_slice_masked", [np.ones((4, 4))], {"begin": [0, 0, 0], "end": [4], "strides": [1]})
    with pytest.raises(ValueError, match="squeeze"):  # shrinking an axis of size 2
        run_op("strided_slice_masked", [np.ones((4, 4))],
               {"begin": [0], "end": [2], "strides": [1], "shrink_axis_mask": 1})
    x = RNG.uniform(-1, 1, size=(4, 5))
    check_grad("strided_slice_masked", [x], {"begin": [1, 4], "end": [3, 0], "strides": [1, -2], "end_mask": 2})
    check_grad("strided_slice_masked", [x], {"begin": [2, 0], "end": [3, 5], "strides": [1, 1],
                                             "shrink_axis_mask": 1})


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice(dtype):
    x = rand((3, 4, 5), dtype)
    for begin, size, want in [((0, 0, 0), (3, 4, 5), x), ((1, 2, 3), (2, 1, 2), x[1:3, 2:3, 3:5]),
                              ((1, 1, 0), (-1, 2, -1), x[1:, 1:3, :]), ((3, 0, 0), (0, 4, 5), x[3:3])]:
        np.testing.assert_array_equal(run_op("slice", [x], {"begin": begin, "size": size})[0], want)


def test_slice_errors_and_gradient():
    for begin, size, token in [((0,), (-5,), "dimension 0 must lie in [0, 4]"), ((3,), (5,), "begin=3 and size=5"),
                               ((-1,), (1,), "begin=-1"), ((0, 0), (1, 1), "one entry per dimension")]:
        with pytest.raises(ValueError) as info:
            run_op("slice", [np.ones(4)], {"begin": begin, "size": size})
        assert "[slice]" in str(info.value) and token in str(info.value)
    check_grad("slice", [RNG.uniform(-1, 1, size=(3, 4))], {"begin": [1, 1], "size": [2, -1]})


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_dims(dtype):
    x = rand((2, 3), dtype)
    for dims in [(2,), (1, 2), (2, 3), (2, 1, 2), (), (0, 2)]:
        np.testing.assert_array_equal(run_op("tile_dims", [x], {"dims": dims})[0], np.tile(x, dims))
    with pytest.raises(ValueError, match="tile"):
        run_op("tile_dims", [x], {"dims": (-1, 2)})
    check_grad("tile_dims", [RNG.uniform(-1, 1, size=(2, 3))], {"dims": [2]})
    check_grad("tile_dims", [RNG.uniform(-1, 1, size=(2, 3))], {"dims": [2, 1, 2]})


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16, np.bool_])
def test_one_hot_values(dtype):
    indices = np.array([[0, 3], [2, 5]], np.int32)  # 5 is out of range: a row of off values
    on, off = np.array(5, dtype), np.array(-1 if dtype != np.bool_ else 0, dtype)
    for axis in (-1, 0, 1, 2):
        out = run_op("one_hot_values", [indices, on, off], {"depth": 4, "axis": axis})[0]
        want = np.where(np.eye(4, dtype=bool)[np.clip(indices, 0, 3)] & (indices < 4)[..., None], on, off)
        want = np.moveaxis(want, -1, axis if axis >= 0 else want.ndim - 1)
        assert out.dtype == on.dtype
        np.testing.assert_array_equal(out, want)


def test_one_hot_values_errors():
    indices = np.array([0, 1], np.int32)
    with pytest.raises(ValueError, match="'on_value' must hold one value"):
        run_op("one_hot_values", [indices, np.ones(2), np.array(0.0)], {"depth": 2})
    with pytest.raises(ValueError, match="'depth' must not be negative"):
        run_op("one_hot_values", [indices, np.array(1.0), np.array(0.0)], {"depth": -1})
    with pytest.raises(TypeError, match="indices"):
        run_op("one_hot_values", [np.array([0.5]), np.array(1.0), np.array(0.0)], {"depth": 2})


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_axes(dtype):
    x = rand((2, 3, 4), dtype)
    for axes, want in [((), x.transpose()), ((None,), x.transpose()), (None, x.transpose()),
                       ((1, 0, 2), x.transpose(1, 0, 2)), ([2, 0, 1], x.transpose(2, 0, 1)),
                       ((-1, 0, 1), x.transpose(2, 0, 1))]:
        np.testing.assert_array_equal(run_op("transpose_axes", [x], {"axes": axes})[0], want)
    np.testing.assert_array_equal(run_op("transpose_axes", [np.array(2.0, dtype)])[0], np.array(2.0, dtype))


def test_transpose_axes_errors_and_gradient():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="'axes' must be None or a sequence of ints"):
        run_op("transpose_axes", [x], {"axes": (None, 1)})
    with pytest.raises(TypeError, match="'axes' must be None or a sequence of ints"):
        run_op("transpose_axes", [x], {"axes": 1})
    with pytest.raises(ValueError, match="transpose"):
        run_op("transpose_axes", [x], {"axes": (0, 0)})
    check_grad("transpose_axes", [RNG.uniform(-1, 1, size=(2, 3, 4))], {"axes": (2, 0, 1)})
    check_grad("transpose_axes", [RNG.uniform(-1, 1, size=(2, 3))])


covers("reshape_as", "expand_as", "ravel", "swapaxes")


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_tensor_shape_conveniences_match_numpy(dtype):
    x = RNG.uniform(-2, 2, size=(2, 3, 4)).astype(dtype)
    np.testing.assert_array_equal(run_op("reshape_as", [x, np.zeros((4, 6))])[0], x.reshape(4, 6))
    np.testing.assert_array_equal(run_op("ravel", [x])[0], x.ravel())
    np.testing.assert_array_equal(run_op("swapaxes", [x], {"axis0": 0, "axis1": -1})[0], np.swapaxes(x, 0, -1))
    row = x[:1, :1]
    np.testing.assert_array_equal(run_op("expand_as", [row, x])[0], np.broadcast_to(row, x.shape))
    with pytest.raises(ValueError, match=r"\[swapaxes\]"):
        run_op("swapaxes", [x], {"axis0": 0, "axis1": 3})


def test_tensor_shape_conveniences_gradients():
    x = RNG.uniform(-2, 2, size=(2, 3))
    check_grad("reshape_as", [x, np.zeros((3, 2))])
    check_grad("ravel", [x])
    check_grad("swapaxes", [x], {"axis0": 0, "axis1": 1})
    check_grad("expand_as", [x[:1], np.zeros((4, 2, 3))])
