"""Parity tests of sort, argsort and topk (src/ops/sort.cc) against NumPy
and PyTorch: values and int32 indices for every number dtype and axis,
descending, ties (stable: the lower index first), NaN (above every number),
k from 0 to the axis size; gradients scattered back (finite differences and
torch); errors; GRAPH_MODE."""
import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import check_grad, covers, gradients, run_op

covers("sort", "argsort", "topk")

RNG = np.random.default_rng(5)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.int16, np.float16]


def rand(shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(0, 6, size=shape).astype(dtype)  # many ties
    return RNG.permutation(np.prod(shape, dtype=int)).reshape(shape).astype(dtype) / 7 - 3  # distinct


def stable_order(x, axis, descending):
    """The stable order of each line along axis: by value (descending or not),
    equal values by index."""
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape, np.int64)
    for idx in np.ndindex(*moved.shape[:-1]):
        line = moved[idx].astype(np.float64)
        sign = -1 if descending else 1
        out[idx] = sorted(range(line.size), key=lambda i: (sign * line[i], i))
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_and_argsort(dtype):
    for shape in [(9,), (4, 7), (3, 5, 4)]:
        x = rand(shape, dtype)
        for axis in range(-len(shape), len(shape)):
            for descending in (False, True):
                values, indices = run_op("sort", [x], {"axis": axis, "descending": descending})
                order = stable_order(x, axis, descending)
                assert values.dtype == x.dtype and indices.dtype == np.int32
                np.testing.assert_array_equal(indices, order)
                np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis))
                got = run_op("argsort", [x], {"axis": axis, "descending": descending})[0]
                np.testing.assert_array_equal(got, order)


def test_sort_nan_and_torch():
    torch = pytest.importorskip("torch")
    x = np.array([[3.0, np.nan, -1.0, 2.0, np.nan, -np.inf], [0.5, 0.25, np.inf, -2.0, 1.0, 0.0]], np.float32)
    for descending in (False, True):
        v, i = ops.sort(ms.Tensor(x), axis=1, descending=descending)
        tv, ti = torch.sort(torch.tensor(x), dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(v.asnumpy(), tv.numpy())
        np.testing.assert_array_equal(i.asnumpy(), ti.numpy())
    x = rand((6, 50), np.float32)
    v, i = ms.Tensor(x).sort(axis=0)
    tv, ti = torch.sort(torch.tensor(x), dim=0)
    np.testing.assert_array_equal(v.asnumpy(), tv.numpy())
    np.testing.assert_array_equal(i.asnumpy(), ti.numpy())
    v, i = ops.Sort(axis=-1, descending=True)(ms.Tensor(x))
    np.testing.assert_array_equal(i.asnumpy(), torch.sort(torch.tensor(x), dim=-1, descending=True)[1].numpy())
    np.testing.assert_array_equal(ops.argsort(ms.Tensor(x), axis=0).asnumpy(), np.argsort(x, axis=0))
    np.testing.assert_array_equal(ms.Tensor(x).argsort(descending=True).asnumpy(), np.argsort(-x, axis=-1))


def test_sort_half_types():
    x = rand((5, 8), np.float32)
    v, i = ops.sort(ms.Tensor(x, dtype=ms.bfloat16), axis=1)
    assert v.dtype == ms.bfloat16
    np.testing.assert_array_equal(v.float().asnumpy(), np.sort(ms.Tensor(x, dtype=ms.bfloat16).float().asnumpy(), 1))
    v, i = ops.sort(ms.Tensor(x.astype(np.float16)), axis=0, descending=True)
    np.testing.assert_array_equal(v.asnumpy(), -np.sort(-x.astype(np.float16), 0))


def test_large_parallel():
    x = RNG.standard_normal((300, 2000)).astype(np.float32)
    v, i = run_op("sort", [x], {"axis": 1})
    np.testing.assert_array_equal(i, np.argsort(x, axis=1, kind="stable"))
    v, i = run_op("topk", [x], {"k": 5, "axis": 0})
    np.testing.assert_array_equal(v, -np.sort(-x, axis=0)[:5])


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk(dtype):
    torch = pytest.importorskip("torch")
    x = rand((4, 9), dtype)
    for axis in (0, 1, -1):
        n = x.shape[axis]
        for k in (0, 1, 3, n):
            for largest in (True, False):
                values, indices = run_op("topk", [x], {"k": k, "axis": axis, "largest": largest})
                order = stable_order(x, axis, largest)
                want = np.take(order, range(k), axis=axis)
                assert indices.dtype == np.int32 and values.dtype == x.dtype
                np.testing.assert_array_equal(indices, want)
                np.testing.assert_array_equal(values, np.take_along_axis(x, want, axis))
                if dtype in (np.float32, np.float64):  # distinct values: torch agrees on the indices
                    tv, ti = torch.topk(torch.tensor(x), k, dim=axis, largest=largest, sorted=True)
                    np.testing.assert_array_equal(values, tv.numpy())
                    np.testing.assert_array_equal(indices, ti.numpy())


def test_topk_forms():
    x = rand((3, 6), np.float32)
    v, i = ops.topk(ms.Tensor(x), 2)
    np.testing.assert_array_equal(v.asnumpy(), -np.sort(-x, 1)[:, :2])
    v, i = ms.Tensor(x).topk(2, dim=0, largest=False)
    np.testing.assert_array_equal(v.asnumpy(), np.sort(x, 0)[:2])
    v, i = ops.TopK(sorted=True)(ms.Tensor(x), 3)
    np.testing.assert_array_equal(i.asnumpy(), np.argsort(-x, 1)[:, :3])
    v, i = ops.topk(ms.Tensor(np.array([1.0, np.nan, 3.0], np.float32)), 2)
    assert np.isnan(v.asnumpy()[0]) and v.asnumpy()[1] == 3.0 and list(i.asnumpy()) == [1, 2]


def test_gradients():
    x = RNG.permutation(24).reshape(4, 6) / 5.0 - 2
    for axis in (0, 1):
        for descending in (False, True):
            check_grad("sort", [x], {"axis": axis, "descending": descending})
        for k in (1, 3):
            check_grad("topk", [x], {"k": k, "axis": axis})
            check_grad("topk", [x], {"k": k, "axis": axis, "largest": False})
    # The indices carry no gradient; the values' gradient scatters back (torch).
    torch = pytest.importorskip("torch")
    sens = RNG.uniform(0.5, 1.5, size=(4, 2))
    t = torch.tensor(x, requires_grad=True)
    (torch.topk(t, 2, dim=1)[0] * torch.tensor(sens)).sum().backward()
    np.testing.assert_allclose(gradients("topk", [x], {"k": 2, "axis": 1}, sens=sens)[0], t.grad.numpy())
    g = ms.grad(lambda a: (ops.sort(a, 0)[0] * ms.Tensor(np.arange(4.0).reshape(4, 1))).sum())(ms.Tensor(x))
    t = torch.tensor(x, requires_grad=True)
    (torch.sort(t, 0)[0] * torch.arange(4.0, dtype=torch.float64).reshape(4, 1)).sum().backward()
    np.testing.assert_allclose(g.asnumpy(), t.grad.numpy())


def test_errors():
    x = ms.Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[topk\] 'k' must be in \[0, 3\].*but got 4"):
        ops.topk(x, 4)
    with pytest.raises(ValueError, match=r"\[topk\] 'k' must be in \[0, 2\].*but got -1"):
        ops.topk(x, -1, dim=0)
    with pytest.raises(ValueError, match=r"\[sort\].*axis"):
        ops.sort(x, axis=2)
    with pytest.raises(TypeError, match=r"\[sort\] input 'x' has an unsupported dtype"):
        ops.sort(ms.Tensor(np.ones(3, np.bool_)))
    with pytest.raises(TypeError, match="descending"):
        ops.sort(x, descending=1)
    with pytest.raises(TypeError, match="'k'"):
        ops.topk(x, 1.5)
    with pytest.raises(ValueError, match=r"\[argsort\].*axis|\[sort\].*axis"):
        ops.argsort(x, axis=-3)


def test_graph_mode():
    x = ms.Tensor(rand((4, 5), np.float32))

    @ms.jit
    def f(a):
        v, i = ops.topk(a, 2)
        s, j = ops.sort(a, axis=0, descending=True)
        return v * 2, i, s, j

    got = f(x)
    want = (ops.topk(x, 2)[0] * 2, ops.topk(x, 2)[1]) + tuple(ops.sort(x, axis=0, descending=True))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
    g = ms.grad(lambda a: f(a)[0].sum() + f(a)[2][0].sum())(x)
    g_eager = ms.grad(lambda a: ops.topk(a, 2)[0].sum() * 2 + ops.sort(a, axis=0, descending=True)[0][0].sum())(x)
    np.testing.assert_array_equal(g.asnumpy(), g_eager.asnumpy())
    assert g.asnumpy().sum() == pytest.approx(2 * 2 * 4 + 5)


# --- unique -------------------------------------------------------------------------------------
covers("unique")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.int16,
                                   np.float16, np.bool_])
def test_unique_against_numpy(dtype):
    for shape in [(1,), (9,), (4, 7), (3, 5, 4), (0,)]:
        x = rand(shape, dtype) if dtype is not np.bool_ else RNG.integers(0, 2, size=shape).astype(bool)
        values, idx = ops.unique(ms.Tensor(x))
        want, inverse = np.unique(x, return_inverse=True)
        assert values.dtype == ms.Tensor(x).dtype and idx.dtype == ms.int32
        assert values.shape == want.shape and idx.shape == x.shape
        np.testing.assert_array_equal(values.asnumpy(), want)
        np.testing.assert_array_equal(idx.asnumpy(), inverse.reshape(x.shape))
        np.testing.assert_array_equal(values.asnumpy()[idx.asnumpy()], x)  # idx indexes the values


def test_unique_forms_and_nan():
    x = ms.Tensor(np.array([1, 2, 5, 2], np.int32))
    y, idx = ops.Unique()(x)
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 5])
    np.testing.assert_array_equal(idx.asnumpy(), [0, 1, 2, 1])
    z = np.array([3.0, np.nan, -1.0, np.nan, 3.0], np.float32)
    y, idx = ops.unique(ms.Tensor(z))
    np.testing.assert_array_equal(y.asnumpy(), [-1.0, 3.0, np.nan])  # NaNs are one value, last
    np.testing.assert_array_equal(idx.asnumpy(), [1, 2, 0, 2, 1])
    # The result is an ordinary tensor: later ops see its size.
    np.testing.assert_allclose((y[:2] * 2).asnumpy(), [-2.0, 6.0])
    with pytest.raises(TypeError):
        ops.unique(np.array([1, 2]))
    # Not differentiable (no gradient rule): nothing flows back to x.
    grad = ms.grad(lambda t: ops.unique(t)[0].sum())(ms.Tensor(z))
    np.testing.assert_array_equal(grad.asnumpy(), np.zeros(5, np.float32))


def test_unique_in_graph_mode_runs_eagerly_or_is_refused_under_strict():
    """Its output's shape depends on the data: as a read of a tensor's value,
    LAX runs the call eagerly with a warning, STRICT refuses it."""
    class Net(ms.nn.Cell):
        def construct(self, x):
            y, idx = ops.unique(x)
            return y * 2, idx

    ms.set_context(mode=ms.GRAPH_MODE)
    x = ms.Tensor(np.array([3, 1, 3, 2], np.int32))
    with pytest.warns(UserWarning, match="test_sort.py.*the shape of the output depends on the input.s values"):
        y, idx = Net()(x)
    np.testing.assert_array_equal(y.asnumpy(), [2, 4, 6])
    np.testing.assert_array_equal(idx.asnumpy(), [2, 0, 2, 1])
    ms.set_context(jit_syntax_level=ms.STRICT)
    try:
        with pytest.raises(RuntimeError, match="depends on the input's values"):
            Net()(x)
    finally:
        ms.set_context(jit_syntax_level=ms.LAX)
