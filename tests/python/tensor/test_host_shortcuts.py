"""x[i], x[a:b] and x[i] = v without ops (Note [Host shortcuts] in
src/runtime/eager.h): a read is a view of the first-axis rows, a write a fill
in place, each exactly what the indexing ops give, with the same errors; the
ops run wherever the shortcut would differ (a gradient being recorded,
memory shared with the host, other indices)."""
import numpy as np
import pytest

import msrt as ms
from msrt import _C, ops
from msrt._tensor import _wrap

DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.bool_, np.complex64]
SHAPES = [(1,), (5,), (4, 3), (3, 2, 2), (0, 3), (2, 0)]
SLICES = [slice(None), slice(1, 3), slice(-3, None), slice(None, -1), slice(2, 1), slice(None, None, 2),
          slice(None, None, -1), slice(3, 0, -2), slice(-100, 100), slice(1, 2, 5), slice(4, None, 3),
          slice(None, 1, -1)]


def _array(shape, dtype):
    values = np.arange(int(np.prod(shape))).reshape(shape) % 7 - 2
    return values.astype(dtype)


def _general_get(x, index):
    """x[index] through the indexing ops (a 1-tuple index skips the shortcut)."""
    return x[(index,)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_reads_give_the_ops_result(shape, dtype):
    a = _array(shape, dtype)
    x = ms.Tensor(a)
    indices = list(range(-shape[0], shape[0])) + SLICES
    for index in indices:
        got = x[index]
        want = _general_get(x, index)
        assert got.shape == want.shape == a[index].shape, index
        assert got.dtype == want.dtype == x.dtype
        np.testing.assert_array_equal(got.asnumpy(), want.asnumpy())
        np.testing.assert_array_equal(got.asnumpy(), a[index])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_writes_give_the_ops_result(shape, dtype):
    a = _array(shape, dtype)
    value = True if dtype is np.bool_ else 3
    for index in list(range(-shape[0], shape[0])) + SLICES:
        fast, general = ms.Tensor(a), ms.Tensor(a)
        fast[index] = value
        general[(index,)] = value  # the ops
        want = a.copy()
        want[index] = value
        np.testing.assert_array_equal(fast.asnumpy(), general.asnumpy())
        np.testing.assert_array_equal(fast.asnumpy(), want)


def test_float_writes_keep_the_scalar_of_the_tensors_dtype():
    for dtype in (np.float16, np.float32, np.float64):
        x = ms.Tensor(np.zeros((3, 2), dtype))
        x[1] = 0.1
        x[2:] = float("nan")
        want = np.zeros((3, 2), dtype)
        want[1] = 0.1
        want[2:] = np.nan
        np.testing.assert_array_equal(x.asnumpy(), want)
    x = ms.Tensor(np.zeros(3, np.int32))
    x[0] = 2.5  # a float into an int tensor: the ops' cast, as before
    np.testing.assert_array_equal(x.asnumpy(), [2, 0, 0])


def test_reads_are_views_and_writes_never_show_through_them():
    x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    row, rows = x[1], x[1:3]
    item = x._t.nbytes // 12
    assert row._t._data_ptr == x._t._data_ptr + 3 * item  # no copy
    assert rows._t._data_ptr == x._t._data_ptr + 3 * item
    x[1] = -1.0  # x takes its own memory first
    np.testing.assert_array_equal(row.asnumpy(), [3, 4, 5])
    np.testing.assert_array_equal(rows.asnumpy(), [[3, 4, 5], [6, 7, 8]])
    rows[0] = 9.0
    np.testing.assert_array_equal(x.asnumpy()[1], [-1, -1, -1])
    np.testing.assert_array_equal(row.asnumpy(), [3, 4, 5])
    row += 1
    np.testing.assert_array_equal(rows.asnumpy(), [[9, 9, 9], [6, 7, 8]])
    y = x[2]
    y.asnumpy()[0] = 100.0  # a write through an asnumpy() array of the view
    assert x.asnumpy()[2, 0] == 6.0
    assert x[:] is not x and x[:]._t is x._t  # every row: the tensor itself, as before


def test_errors_are_the_ops():
    x = ms.Tensor(np.arange(4, dtype=np.float32))
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[4]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with size 4"):
        x[-5]
    with pytest.raises(IndexError, match="out of bounds"):
        x[1 << 70]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        x[4] = 1.0
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0] = 1.0
    with pytest.raises(IndexError):
        ms.Tensor(np.float32(1))[0]
    with pytest.raises(IndexError):
        ms.Tensor(np.float32(1))[0] = 2.0
    np.testing.assert_array_equal(x.asnumpy(), [0, 1, 2, 3])


def test_the_shortcut_steps_aside_where_the_ops_must_run():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    x = ms.Tensor(a)
    assert _C.first_axis(x._t, 1) is not None
    assert _C.first_axis(x._t, np.int64(1)) is None  # other indices: the ops
    assert _C.first_axis(x._t, slice(None, None, 2)) is None
    assert _C.first_axis(x._t, 3) is None
    v = ms.Tensor(np.float32(5))._t
    assert _C.fill_first_axis(x._t, 0, v) is True
    assert _C.fill_first_axis(x._t, 0, ms.Tensor(np.float64(5))._t) is None  # another dtype
    shared = ms.Tensor.from_numpy(a)  # memory Python writes: the ops copy it, never a view
    assert _C.first_axis(shared._t, 0) is None
    assert _C.fill_first_axis(shared._t, 0, v) is None
    shared[0] = 7.0
    assert a[0, 0] == 7.0  # written through, as the ops write host-shared memory
    w = ms.Parameter(ms.Tensor(a.copy()), name="w")

    def f(w):
        return (w[1] * 2 + w[0:1].sum()).sum()

    grad = ms.grad(f)(w)  # recorded: the ops run, gradients flow
    np.testing.assert_array_equal(grad.asnumpy(), [[2, 2], [2, 2], [0, 0]])


def test_a_gradient_of_a_gradient_leaves_the_shortcut_on():
    # The first-order check that create_graph installs acts only while calls
    # are recorded: afterwards x[i] is a view again.
    w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0, 3.0], np.float32)), name="w")

    def f(w):
        return (w * w * w).sum()

    np.testing.assert_allclose(ms.grad(ms.grad(f))(w).asnumpy(), [6, 12, 18])
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert _C.first_axis(x._t, 1) is not None
    assert x[1]._t._data_ptr == x._t._data_ptr + 2 * (x._t.nbytes // 6)


RESHAPES = [((6,), [(2, 3), (3, -1), (-1,), (6,), (1, 6, 1), (-1, 1, 2)]), ((2, 3), [(6,), (3, 2), (-1, 2), (1, -1)]),
            ((1,), [(), (1, 1), (-1,)]), ((), [(1,), (), (1, -1)]), ((0, 3), [(3, 0), (0, 1, 3), (0,), (2, 0, 5)])]


def _general_reshape(x, shape):
    """x.reshape(shape) through the op call (_C.call_any: no shortcut)."""
    return _wrap(_C.call_any("reshape", [x._t], {"shape": list(shape)}))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reshapes_give_the_ops_result_as_views(dtype):
    for shape, targets in RESHAPES:
        a = _array(shape, dtype) if shape else np.array(3, dtype)
        for target in targets:
            x = ms.Tensor(a)  # not read by asnumpy() (which shares the memory with Python: the op copies)
            want = _general_reshape(x, target)
            gots = [x.reshape(*target), x.reshape(target), x.reshape(list(target)), x.view(*target),
                    ops.reshape(x, target)]
            for got in gots:
                if x.size:
                    assert got._t._data_ptr == want._t._data_ptr == x._t._data_ptr  # a view, as the op's output
            for got in gots:
                assert got.shape == want.shape == a.reshape(target).shape, target
                assert got.dtype == want.dtype == x.dtype
                np.testing.assert_array_equal(got.asnumpy(), a.reshape(target))
    x = ms.Tensor(np.arange(4, dtype=np.float32))
    assert _C.view_shape("reshape", x._t, (2, 2), True) is not None
    assert _C.view_shape("reshape", x._t, ((2, 2),), True) is not None  # x.reshape((2, 2))
    assert _C.view_shape("reshape", x._t, ((2, 2),), False) is None  # ops.reshape(x, ((2, 2),)): the op's error


def test_reshape_errors_are_the_ops():
    x = ms.Tensor(np.arange(6, dtype=np.float32))
    cases = [((4, -1), ValueError, "can not infer the -1"), ((-1, -1), ValueError, "may hold one -1"),
             ((5,), ValueError, "expected 6 elements, but got 5"), ((0, -1), ValueError, "can not infer"),
             ((2, -2), ValueError, "ints >= -1"),
             ((1 << 70,), (ValueError, TypeError, OverflowError), ""), ((2.0, 3), TypeError, ""),
             ((True, 6), (TypeError, ValueError), "")]
    for shape, kind, message in cases:
        with pytest.raises(kind, match=message) as general:
            _general_reshape(x, shape)
        for call in (lambda: x.reshape(*shape), lambda: x.reshape(shape), lambda: x.view(shape)):
            with pytest.raises(kind, match=message) as fast:
                call()
            assert fast.type is general.type and str(fast.value) == str(general.value), shape


def test_the_reshape_shortcut_steps_aside_where_the_op_must_run():
    a = np.arange(6, dtype=np.float32)
    x = ms.Tensor(a)
    assert _C.view_shape("reshape", x._t, (np.int64(2), 3), True) is None  # not Python ints: the op converts
    assert x.reshape(np.int64(2), 3).shape == (2, 3)
    assert _C.view_shape("exp", x._t, (2, 3), True) is None  # not a view op of a shape
    assert _C.view_shape("reshape", x._t, (4, -1), True) is None  # refused: the op raises
    shared = ms.Tensor.from_numpy(a)  # memory Python writes: the op copies it
    assert _C.view_shape("reshape", shared._t, (2, 3), True) is None
    assert shared.reshape(2, 3)._t._data_ptr != shared._t._data_ptr
    w = ms.Parameter(ms.Tensor(a.copy()), name="w")

    def f(w):
        return (w.reshape(2, 3) * ms.Tensor(np.array([[1, 2, 3]], np.float32))).sum()

    grad = ms.grad(f)(w)  # recorded: the op runs, gradients flow
    np.testing.assert_array_equal(grad.asnumpy(), [1, 2, 3, 1, 2, 3])
    assert _C.view_shape("reshape", x._t, (2, 3), True) is not None
