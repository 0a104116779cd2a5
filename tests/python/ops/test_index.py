"""Parity tests of gather_elements (GatherD), tensor_scatter_elements
(scatter), masked_fill, tril and triu (src/ops/index.cc) against NumPy and
PyTorch: every dtype, each axis, smaller index shapes, negative indices,
repeated indices; gradients (finite differences and torch); errors;
GRAPH_MODE."""
import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import check_grad, covers, gradients, run_op

covers("gather_elements", "tensor_scatter_elements", "masked_fill", "tril", "triu")

RNG = np.random.default_rng(3)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_, np.float16]


def rand(shape, dtype=np.float64):
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(0, 50, size=shape).astype(dtype)
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


def index_for(x_shape, index_shape, axis, dtype=np.int64, negative=False):
    n = x_shape[axis]
    low = -n if negative else 0
    return RNG.integers(low, n, size=index_shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_elements(dtype):
    x = rand((4, 5, 3), dtype)
    for axis in (0, 1, 2, -1):
        for index_shape in [(4, 5, 3), (2, 5, 3), (4, 7, 1), (1, 1, 1)]:
            shape = list(index_shape)
            for d in range(3):
                if d != axis % 3:
                    shape[d] = min(shape[d], x.shape[d])
            for index_dtype in (np.int32, np.int64):
                idx = index_for(x.shape, shape, axis, index_dtype, negative=True)
                got = run_op("gather_elements", [x, idx], {"dim": axis})[0]
                part = tuple(slice(0, s) if d != axis % 3 else slice(None) for d, s in enumerate(shape))
                want = np.take_along_axis(x[part], idx % x.shape[axis], axis)
                assert got.dtype == x.dtype
                np.testing.assert_array_equal(got, want)


def test_gather_elements_against_torch():
    torch = pytest.importorskip("torch")
    x = rand((5, 6), np.float32)
    idx = index_for(x.shape, (3, 4), 1)
    got = ops.gather_elements(ms.Tensor(x), 1, ms.Tensor(idx)).asnumpy()
    np.testing.assert_array_equal(got, torch.gather(torch.tensor(x), 1, torch.tensor(idx)).numpy())
    got = ms.Tensor(x).gather_elements(0, ms.Tensor(idx[:, :2] % 5)).asnumpy()
    np.testing.assert_array_equal(got, torch.gather(torch.tensor(x), 0, torch.tensor(idx[:, :2] % 5)).numpy())
    got = ops.GatherD()(ms.Tensor(x), 1, ms.Tensor(idx.astype(np.int32))).asnumpy()
    np.testing.assert_array_equal(got, torch.gather(torch.tensor(x), 1, torch.tensor(idx)).numpy())
    xb = ms.Tensor(x, dtype=ms.bfloat16)
    got = ops.gather_elements(xb, 1, ms.Tensor(idx))
    assert got.dtype == ms.bfloat16
    np.testing.assert_array_equal(got.float().asnumpy(), np.take_along_axis(xb.float().asnumpy()[:3], idx, 1))


def scatter_reference(x, idx, updates, axis, add):
    out = x.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[axis] = idx[pos] % x.shape[axis]
        if add:
            with np.errstate(over="ignore"):  # integers wrap, as msrt's do
                out[tuple(target)] += updates[pos]
        else:
            out[tuple(target)] = updates[pos]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_scatter_elements(dtype):
    x = rand((4, 5, 3), dtype)
    for axis in (0, 1, -1):
        for index_shape in [(4, 5, 3), (2, 3, 3), (6, 2, 1)]:
            shape = list(index_shape)
            for d in range(3):
                if d != axis % 3:
                    shape[d] = min(shape[d], x.shape[d])
            idx = index_for(x.shape, shape, axis, negative=True)  # with repeats: the last wins, or all add
            updates = rand(shape, dtype)
            for reduction in ("none", "add"):
                if reduction == "add" and dtype == np.bool_:
                    continue
                got = run_op("tensor_scatter_elements", [x, idx, updates], {"axis": axis, "reduction": reduction})[0]
                want = scatter_reference(x, idx, updates, axis % 3, reduction == "add")
                assert got.dtype == x.dtype
                if dtype == np.float16:
                    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
                else:
                    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_forms_against_torch():
    torch = pytest.importorskip("torch")
    x = rand((5, 5), np.float32)
    idx = np.array([[0, 1, 2], [2, 0, 4], [4, 4, 3]], np.int64)  # distinct per column along axis 0
    src = rand((3, 3), np.float32)
    tx, ti, ts = torch.tensor(x), torch.tensor(idx), torch.tensor(src)
    np.testing.assert_array_equal(ops.scatter(ms.Tensor(x), 0, ms.Tensor(idx), ms.Tensor(src)).asnumpy(),
                                  tx.scatter(0, ti, ts).numpy())
    np.testing.assert_array_equal(ms.Tensor(x).scatter(1, ms.Tensor(idx), ms.Tensor(src)).asnumpy(),
                                  tx.scatter(1, ti, ts).numpy())
    got = ops.tensor_scatter_elements(ms.Tensor(x), ms.Tensor(idx), ms.Tensor(src), axis=1, reduction="add")
    np.testing.assert_allclose(got.asnumpy(), tx.scatter_add(1, ti, ts).numpy(), rtol=1e-6)
    got = ops.TensorScatterElements(axis=0, reduction="add")(ms.Tensor(x), ms.Tensor(idx), ms.Tensor(src))
    np.testing.assert_allclose(got.asnumpy(), tx.scatter_add(0, ti, ts).numpy(), rtol=1e-6)


def test_large_parallel():
    x = RNG.standard_normal((200, 300))
    idx = RNG.integers(0, 300, size=(200, 400))
    upd = RNG.standard_normal((200, 400))
    got = run_op("tensor_scatter_elements", [x, idx, upd], {"axis": 1, "reduction": "add"})[0]
    want = x.copy()
    for r in range(200):
        np.add.at(want[r], idx[r], upd[r])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(run_op("gather_elements", [x, idx], {"dim": 1})[0], np.take_along_axis(x, idx, 1))


def test_index_gradients():
    x = RNG.uniform(-1, 1, size=(4, 5))
    idx = np.array([[0, 4, 4], [1, 1, 2], [3, 0, 0], [2, 2, 2]])
    check_grad("gather_elements", [x, idx], {"dim": 1})
    check_grad("gather_elements", [x, idx[:3] % 4], {"dim": 0})
    upd = RNG.uniform(-1, 1, size=idx.shape)
    check_grad("tensor_scatter_elements", [x, idx, upd], {"axis": 1, "reduction": "add"}, wrt=(0, 2))
    distinct = np.array([[0, 4, 2], [1, 3, 2], [3, 0, 4], [2, 1, 0]])
    check_grad("tensor_scatter_elements", [x, distinct, upd], {"axis": 1}, wrt=(0, 2))
    torch = pytest.importorskip("torch")
    t, tu = torch.tensor(x, requires_grad=True), torch.tensor(upd, requires_grad=True)
    sens = RNG.uniform(0.5, 1.5, size=x.shape)
    (t.scatter(1, torch.tensor(distinct), tu) * torch.tensor(sens)).sum().backward()
    gx, gu = gradients("tensor_scatter_elements", [x, distinct, upd], {"axis": 1}, wrt=(0, 2), sens=sens)
    np.testing.assert_allclose(gx, t.grad.numpy())
    np.testing.assert_allclose(gu, tu.grad.numpy())


def test_index_errors():
    x = ms.Tensor(np.ones((3, 4), np.float32))
    idx = ms.Tensor(np.zeros((3, 4), np.int64))
    with pytest.raises(IndexError, match=r"\[gather_elements\] index 4 at position 0 of 'index' is out of range"):
        ops.gather_elements(x, 1, ms.Tensor(np.full((3, 4), 4, np.int64))).asnumpy()
    with pytest.raises(IndexError, match=r"expected -3 <= index < 3, but got -4"):
        ops.scatter(x, 0, ms.Tensor(np.full((3, 4), -4, np.int64)), x).asnumpy()
    with pytest.raises(TypeError, match=r"\[gather_elements\] input 'index' has an unsupported dtype"):
        ops.gather_elements(x, 1, ms.Tensor(np.zeros((3, 4), np.float32)))
    with pytest.raises(ValueError, match=r"'index' must have the rank of 'x'; expected rank 2"):
        ops.gather_elements(x, 1, ms.Tensor(np.zeros(3, np.int64)))
    with pytest.raises(ValueError, match=r"'index' must be no larger than 'x' along every axis but 1"):
        ops.gather_elements(x, 1, ms.Tensor(np.zeros((4, 2), np.int64)))
    with pytest.raises(ValueError, match=r"\[gather_elements\].*axis"):
        ops.gather_elements(x, 2, idx)
    with pytest.raises(ValueError, match=r"'updates' must have the shape of 'indices'"):
        ops.scatter(x, 0, idx, ms.Tensor(np.ones((2, 4), np.float32)))
    with pytest.raises(TypeError, match=r"\[tensor_scatter_elements\].*'updates'"):
        ops.scatter(x, 0, idx, ms.Tensor(np.ones((3, 4), np.float64)))
    with pytest.raises(ValueError, match="'reduction' must be one of"):
        ops.tensor_scatter_elements(x, idx, x, reduction="mul")
    with pytest.raises(ValueError, match="rank at least 1"):
        run_op("gather_elements", [np.float32(1), np.int64(0)], {"dim": 0})


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_fill(dtype):
    x = rand((3, 4), dtype)
    mask = rand((3, 4), np.bool_)
    value = np.asarray(7, dtype=dtype) if dtype != np.bool_ else np.asarray(True)
    got = run_op("masked_fill", [x, mask, value])[0]
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, np.where(mask, value, x))
    row = rand((4,), np.bool_)  # the mask broadcasts
    np.testing.assert_array_equal(run_op("masked_fill", [x, row, value])[0], np.where(row, value, x))


def test_masked_fill_forms_and_gradient():
    torch = pytest.importorskip("torch")
    x = rand((3, 4), np.float32)
    mask = rand((3, 4), np.bool_)
    want = torch.tensor(x).masked_fill(torch.tensor(mask), -1.5).numpy()
    np.testing.assert_array_equal(ops.masked_fill(ms.Tensor(x), ms.Tensor(mask), -1.5).asnumpy(), want)
    np.testing.assert_array_equal(ms.Tensor(x).masked_fill(ms.Tensor(mask), ms.Tensor(np.float32(-1.5))).asnumpy(),
                                  want)
    np.testing.assert_array_equal(ops.MaskedFill()(ms.Tensor(x), ms.Tensor(mask), -1.5).asnumpy(), want)
    xi = ms.Tensor(np.arange(4, dtype=np.int32))
    assert ops.masked_fill(xi, xi > 1, 9).dtype == ms.int32
    # Gradients: x where not masked, the value's the sum where masked.
    x64, m = RNG.uniform(-1, 1, size=(3, 4)), rand((3, 4), np.bool_)
    check_grad("masked_fill", [x64, m, np.float64(0.5)], wrt=(0, 2))
    with pytest.raises(TypeError, match=r"\[masked_fill\] input 'mask' has an unsupported dtype"):
        ops.masked_fill(ms.Tensor(x), ms.Tensor(x), 1.0)
    with pytest.raises(ValueError, match=r"\[masked_fill\] 'value' must be a number or a 0-d tensor"):
        ops.masked_fill(ms.Tensor(x), ms.Tensor(mask), ms.Tensor(np.ones(2, np.float32)))
    with pytest.raises(ValueError, match="masked_fill|select"):
        ops.masked_fill(ms.Tensor(x), ms.Tensor(np.ones(3, np.bool_)), 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu(dtype):
    for shape in [(4, 4), (3, 5), (2, 5, 3), (0, 3)]:
        x = rand(shape, dtype)
        for k in (-2, -1, 0, 1, 3, 7):
            got = run_op("tril", [x], {"diagonal": k})[0]
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, np.tril(x, k))
            np.testing.assert_array_equal(run_op("triu", [x], {"diagonal": k})[0], np.triu(x, k))


def test_tril_triu_forms_gradient_errors():
    torch = pytest.importorskip("torch")
    x = rand((4, 5), np.float32)
    np.testing.assert_array_equal(ops.tril(ms.Tensor(x), 1).asnumpy(), torch.tril(torch.tensor(x), 1).numpy())
    np.testing.assert_array_equal(ms.Tensor(x).triu(-1).asnumpy(), torch.triu(torch.tensor(x), -1).numpy())
    np.testing.assert_array_equal(ops.Tril(diagonal=-1)(ms.Tensor(x)).asnumpy(), np.tril(x, -1))
    np.testing.assert_array_equal(ops.Triu()(ms.Tensor(x)).asnumpy(), np.triu(x))
    xb = ms.Tensor(x, dtype=ms.bfloat16)
    assert ops.triu(xb).dtype == ms.bfloat16
    np.testing.assert_array_equal(ops.triu(xb).float().asnumpy(), np.triu(xb.float().asnumpy()))
    check_grad("tril", [RNG.uniform(-1, 1, size=(3, 4))], {"diagonal": 1})
    check_grad("triu", [RNG.uniform(-1, 1, size=(2, 3, 3))])
    with pytest.raises(ValueError, match=r"\[tril\] input 'x' must have rank at least 2"):
        ops.tril(ms.Tensor(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="diagonal"):
        ops.triu(ms.Tensor(x), 1.5)


def test_graph_mode():
    x = ms.Tensor(rand((4, 5), np.float32))
    idx = ms.Tensor(np.array([[0, 4], [1, 1], [3, 0], [2, 2]], np.int64))

    def body(a):
        g = ops.gather_elements(a, 1, idx)
        s = ops.scatter(ops.zeros_like(a), 1, idx, g * 2)
        return ops.tril(s, 1) + ops.masked_fill(a, a > 0, 0.0)

    np.testing.assert_array_equal(ms.jit(body)(x).asnumpy(), body(x).asnumpy())
    np.testing.assert_allclose(ms.grad(ms.jit(lambda a: body(a).sum()))(x).asnumpy(),
                               ms.grad(lambda a: body(a).sum())(x).asnumpy())
