"""Parity tests of the composites in src/ops/math_composite.cc against NumPy
and PyTorch: logsumexp, norm (vector and matrix), chunk, meshgrid, pad
(constant, reflect, replicate, circular) and einsum; gradients through the
ops they call; errors; GRAPH_MODE."""
import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import check_grad, covers, gradients, run_op

covers("logsumexp", "norm", "chunk", "meshgrid", "pad", "einsum")

RNG = np.random.default_rng(13)
FLOATS = [np.float32, np.float64, np.float16]


def rand(shape, dtype=np.float64):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-5, 6, size=shape).astype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


def tol(dtype):
    return {np.float16: 3e-3, np.float32: 2e-6, np.float64: 1e-12}[dtype]


# ---- logsumexp ----

@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp(dtype):
    torch = pytest.importorskip("torch")
    x = rand((3, 4, 5), dtype) * 30  # large values: the shift matters
    for axis in (0, 1, -1, (0, 2), ()):
        for keep in (False, True):
            got = run_op("logsumexp", [x], {"axis": axis, "keep_dims": keep})[0]
            dims = tuple(range(3)) if axis == () else axis
            want = torch.logsumexp(torch.tensor(x.astype(np.float64)), dim=dims, keepdim=keep).numpy()
            assert got.dtype == x.dtype
            np.testing.assert_allclose(got, want, rtol=tol(dtype), atol=tol(dtype))


def test_logsumexp_infinities_forms_gradient():
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, -np.inf], [np.nan, 1.0]], np.float32)
    got = ops.logsumexp(ms.Tensor(x), 1).asnumpy()
    assert got[0] == -np.inf and got[1] == np.inf and got[2] == 0.0 and np.isnan(got[3])
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = ms.Tensor(xi).logsumexp(1, keepdims=True)
    assert got.dtype == ms.float32 and got.shape == (2, 1)
    np.testing.assert_allclose(got.asnumpy()[:, 0], np.log(np.exp(xi.astype(np.float64)).sum(1)), rtol=1e-6)
    check_grad("logsumexp", [RNG.uniform(-3, 3, size=(3, 4))], {"axis": 1})
    check_grad("logsumexp", [RNG.uniform(-3, 3, size=(3, 4))], {"axis": [0, 1], "keep_dims": True})
    with pytest.raises(TypeError, match=r"\[logsumexp\] input 'x' has an unsupported dtype"):
        ops.logsumexp(ms.Tensor(np.ones(3, np.bool_)), 0)
    with pytest.raises(ValueError, match="logsumexp"):
        ops.logsumexp(ms.Tensor(np.ones(3, np.float32)), 1)


# ---- norm ----

@pytest.mark.parametrize("dtype", FLOATS)
def test_vector_norms(dtype):
    torch = pytest.importorskip("torch")
    x = rand((3, 4, 5), dtype)
    x.reshape(-1)[::7] = 0
    t = torch.tensor(x.astype(np.float64))
    for ord_ in (None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1):
        for dim in (None, 0, -1, (1,)):
            if dim is None and ord_ is not None:
                continue  # needs a 1-D or 2-D input
            for keep in (False, True):
                got = run_op("norm", [x], {"ord": ord_, "dim": dim, "keepdim": keep})[0]
                want = torch.linalg.norm(t.flatten() if dim is None else t, ord=ord_, dim=dim,
                                         keepdim=keep and dim is not None).numpy()
                if dim is None and keep:
                    want = want.reshape(1, 1, 1)
                assert got.dtype == x.dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=tol(dtype) * 2, atol=tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matrix_norms(dtype):
    torch = pytest.importorskip("torch")
    x = rand((3, 4, 5), dtype)
    t = torch.tensor(x.astype(np.float64))
    for ord_ in (None, "fro", 1, -1, np.inf, -np.inf):
        for dim in ((1, 2), (0, 2), (2, 0), (-1, -2)):
            for keep in (False, True):
                got = run_op("norm", [x], {"ord": ord_, "dim": dim, "keepdim": keep})[0]
                want = torch.linalg.matrix_norm(t, ord="fro" if ord_ is None else ord_, dim=dim, keepdim=keep)
                np.testing.assert_allclose(got, want.numpy(), rtol=tol(dtype) * 2, atol=tol(dtype))
    m = rand((4, 3), dtype)
    for ord_ in (1, np.inf, "fro"):  # dim None with ord given: a 2-D input is a matrix
        np.testing.assert_allclose(run_op("norm", [m], {"ord": ord_})[0],
                                   np.linalg.norm(m.astype(np.float64), ord_), rtol=tol(dtype) * 2)


def test_norm_forms_gradient_errors():
    x = ms.Tensor(np.array([[3.0, -4.0], [12.0, 0.0]], np.float32))
    assert ops.norm(x).asnumpy() == pytest.approx(13.0)
    assert ops.norm(x, 1, dim=1).asnumpy().tolist() == [7.0, 12.0]
    assert x.norm(dim=0, keepdim=True).shape == (1, 2)
    assert ops.norm(ms.Tensor(np.arange(3, dtype=np.int32)), dtype=ms.float64).dtype == ms.float64
    check_grad("norm", [RNG.uniform(0.5, 2, size=(3, 4))])
    check_grad("norm", [RNG.uniform(0.5, 2, size=(3, 4))], {"ord": 3, "dim": 1})
    check_grad("norm", [RNG.uniform(0.5, 2, size=(3, 4))], {"ord": 1, "dim": (0, 1)})
    check_grad("norm", [RNG.uniform(0.5, 2, size=(3, 4))], {"ord": "fro", "dim": (1, 0), "keepdim": True})
    # At the zero vector the gradient is 0, as torch gives, not NaN.
    torch = pytest.importorskip("torch")
    z = np.zeros((2, 3))
    for ord_, dim in [(None, None), (2, 1), (3, 1), (0.5, 1), ("fro", (0, 1))]:
        t = torch.tensor(z, requires_grad=True)
        torch.linalg.norm(t, ord=ord_, dim=dim).sum().backward()
        got = gradients("norm", [z], {"ord": ord_, "dim": dim})[0]
        np.testing.assert_array_equal(got, t.grad.numpy())
    infinite = np.array([np.inf, np.inf])
    assert run_op("norm", [infinite], {"ord": -1})[0] == np.inf
    with pytest.raises(NotImplementedError, match=r"\[norm\] the matrix norm ord='nuc' needs singular values"):
        ops.norm(x, "nuc")
    with pytest.raises(NotImplementedError, match="ord=2"):
        ops.norm(x, 2, dim=(0, 1))
    with pytest.raises(ValueError, match=r"ord 3 is not a matrix norm"):
        ops.norm(x, 3, dim=(0, 1))
    with pytest.raises(TypeError, match=r"ord 'fro' is a matrix norm"):
        ops.norm(x, "fro", dim=1)
    with pytest.raises(TypeError, match=r"attribute 'ord' must be None, a number, 'fro' or 'nuc'"):
        ops.norm(x, "max")
    with pytest.raises(TypeError, match=r"attribute 'dim' must be None, an int or a tuple of 1 or 2 ints"):
        ops.norm(x, dim=(0, 1, 2))
    with pytest.raises(ValueError, match=r"the two axes of 'dim' must differ"):
        ops.norm(x, dim=(1, -1))
    with pytest.raises(ValueError, match=r"with 'ord' given and 'dim' None the input must be 1-D or 2-D"):
        ops.norm(ms.Tensor(np.ones((2, 2, 2), np.float32)), 1)
    with pytest.raises(TypeError, match=r"\[norm\] input 'x' has an unsupported dtype"):
        ops.norm(ms.Tensor(np.ones(3, np.int32)))
    with pytest.raises(ValueError, match=r"\[norm\].*axis"):
        ops.norm(x, dim=2)


# ---- chunk ----

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16])
def test_chunk(dtype):
    torch = pytest.importorskip("torch")
    x = rand((7, 6), dtype)
    for chunks in (1, 2, 3, 4, 6, 7, 10):
        for axis in (0, 1, -1):
            got = run_op("chunk", [x], {"chunks": chunks, "axis": axis})
            want = torch.chunk(torch.tensor(x), chunks, dim=axis)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w.numpy())


def test_chunk_forms_gradient_errors():
    x = ms.Tensor(np.arange(10, dtype=np.float32))
    parts = ops.chunk(x, 3)
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(4,), (4,), (2,)]
    assert len(x.chunk(1)) == 1 and isinstance(x.chunk(1), tuple)
    check_grad("chunk", [RNG.uniform(-1, 1, size=(5, 3))], {"chunks": 2}, output_index=1)
    with pytest.raises(ValueError, match=r"\[chunk\] 'chunks' must be positive, but got 0"):
        ops.chunk(x, 0)
    with pytest.raises(ValueError, match=r"\[chunk\] input 'x' must have rank at least 1"):
        ops.chunk(ms.Tensor(np.float32(1)), 2)
    with pytest.raises(TypeError, match="chunks"):
        ops.chunk(x, 2.0)


# ---- meshgrid ----

def test_meshgrid():
    torch = pytest.importorskip("torch")
    a, b, c = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32) * 2, np.arange(2, dtype=np.float32) - 1
    for indexing in ("xy", "ij"):
        for arrays in ((a,), (a, b), (a, b, c)):
            got = ops.meshgrid(*[ms.Tensor(v) for v in arrays], indexing=indexing)
            want = torch.meshgrid(*[torch.tensor(v) for v in arrays], indexing=indexing)
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g.asnumpy(), w.numpy())
            np.testing.assert_array_equal(ops.meshgrid([ms.Tensor(v) for v in arrays], indexing=indexing)[0].asnumpy(),
                                          want[0].numpy())
            prim = ops.Meshgrid(indexing=indexing)(tuple(ms.Tensor(v) for v in arrays))
            np.testing.assert_array_equal(prim[-1].asnumpy(), want[-1].numpy())
    x, y = np.meshgrid(a, b)
    np.testing.assert_array_equal(ops.meshgrid(ms.Tensor(a), ms.Tensor(b))[0].asnumpy(), x)
    np.testing.assert_array_equal(ops.meshgrid(ms.Tensor(a), ms.Tensor(b))[1].asnumpy(), y)


def test_meshgrid_gradient_errors():
    check_grad("meshgrid", [RNG.uniform(size=3), RNG.uniform(size=4)], wrt=(0, 1), output_index=0)
    check_grad("meshgrid", [RNG.uniform(size=3), RNG.uniform(size=4)], {"indexing": "ij"}, wrt=(0, 1),
               output_index=1)
    with pytest.raises(ValueError, match=r"\[meshgrid\] every input must be 1-D; expected rank 1, but input 1"):
        ops.meshgrid(ms.Tensor(np.ones(2, np.float32)), ms.Tensor(np.ones((2, 2), np.float32)))
    with pytest.raises(TypeError, match=r"\[meshgrid\] every input must have the dtype of the first"):
        ops.meshgrid(ms.Tensor(np.ones(2, np.float32)), ms.Tensor(np.ones(2, np.int32)))
    with pytest.raises(ValueError, match="'indexing' must be one of"):
        ops.meshgrid(ms.Tensor(np.ones(2, np.float32)), indexing="xz")
    with pytest.raises(ValueError, match="meshgrid"):
        ops.meshgrid()


# ---- pad ----

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.bool_, np.float16])
def test_pad(dtype):
    torch = pytest.importorskip("torch")
    x = rand((2, 3, 4, 5), dtype)
    for mode in ("constant", "reflect", "replicate", "circular"):
        for padding in [(1, 2), (0, 0, 2, 1), (3, 1, 1, 2), (1, 1, 0, 2, 1, 0), (2, 0, 1, 1, 1, 1, 1, 0)]:
            if mode != "constant" and len(padding) > 6:
                continue  # torch pads at most 3 axes in these modes
            got = run_op("pad", [x], {"padding": padding, "mode": mode})[0]
            t = torch.tensor(x.astype(np.float64))  # values are only moved: exact in float64
            if mode != "constant":  # torch wants (N, C, ...) with the 1 to 3 padded axes last
                k = len(padding) // 2
                t = t.reshape((-1, 1) + x.shape[x.ndim - k:])
            want = torch.nn.functional.pad(t, padding, mode=mode).numpy().reshape(got.shape).astype(dtype)
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, want)
    got = run_op("pad", [x], {"padding": (2, 1), "value": 3.0})[0]
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0)] * 3 + [(2, 1)], constant_values=3))


def test_pad_forms_negative_gradient_errors():
    torch = pytest.importorskip("torch")
    x = rand((3, 4), np.float32)
    np.testing.assert_array_equal(ops.pad(ms.Tensor(x), (1, -1, -1, 2)).asnumpy(),
                                  torch.nn.functional.pad(torch.tensor(x), (1, -1, -1, 2)).numpy())
    np.testing.assert_array_equal(ops.pad(ms.Tensor(x), [2, 2], mode="reflect").asnumpy(),
                                  np.pad(x, [(0, 0), (2, 2)], mode="reflect"))
    np.testing.assert_array_equal(ops.pad(ms.Tensor(x), (1, 2, 2, 0), mode="replicate").asnumpy(),
                                  np.pad(x, [(2, 0), (1, 2)], mode="edge"))
    np.testing.assert_array_equal(ops.pad(ms.Tensor(x), (0, 0)).asnumpy(), x)
    for mode in ("constant", "reflect", "replicate", "circular"):
        check_grad("pad", [RNG.uniform(-1, 1, size=(3, 4))], {"padding": [2, 1, 1, 2], "mode": mode})
    check_grad("pad", [RNG.uniform(-1, 1, size=(3, 4))], {"padding": [-1, 2]})
    with pytest.raises(ValueError, match=r"\[pad\] reflect padding must be smaller than the axis"):
        ops.pad(ms.Tensor(x), (4, 0), mode="reflect")
    with pytest.raises(ValueError, match=r"\[pad\] 'padding' must hold \(left, right\) pairs"):
        ops.pad(ms.Tensor(x), (1, 2, 3))
    with pytest.raises(ValueError, match=r"\[pad\] 'padding' must hold \(left, right\) pairs"):
        ops.pad(ms.Tensor(x), (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"\[pad\] 'value' is only for mode 'constant'"):
        ops.pad(ms.Tensor(x), (1, 1), mode="replicate", value=1.0)
    with pytest.raises(ValueError, match="leaves a negative size"):
        ops.pad(ms.Tensor(x), (-3, -2))
    with pytest.raises(ValueError, match="'mode' must be one of"):
        ops.pad(ms.Tensor(x), (1, 1), mode="edge")
    with pytest.raises(ValueError, match="For 'pad', the size .* does not fit in a signed 64-bit integer"):
        ops.pad(ms.Tensor(x), (2**62, 2**62))
    with pytest.raises(ValueError, match="For 'pad', a tensor of shape"):
        ops.pad(ms.Tensor(x), (2**61, 0))  # its bytes overflow, checked before any index table is made
    with pytest.raises(ValueError, match="circular padding must not exceed the axis"):
        ops.pad(ms.Tensor(x), (5, 0), mode="circular")


# ---- einsum ----

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]),
    ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("iij->j", [(3, 3, 2)]), ("ij->", [(3, 4)]), ("...", [(2, 3)]),
    ("a...,a->...", [(3, 2, 2), (3,)]), ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]), ("ij,ij->ij", [(3, 4), (1, 4)]),
    ("Ab,bA->", [(2, 3), (3, 2)]), (" ij , jk -> ki ", [(2, 3), (3, 4)]), ("i,i,i->i", [(4,), (4,), (4,)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM_CASES)
def test_einsum(equation, shapes):
    torch = pytest.importorskip("torch")
    for dtype in (np.float32, np.float64):
        xs = [rand(shape, dtype) for shape in shapes]
        got = ops.einsum(equation, *[ms.Tensor(x) for x in xs]).asnumpy()
        want = torch.einsum(equation.replace(" ", ""), *[torch.tensor(x) for x in xs]).numpy()
        assert got.shape == want.shape and got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol(dtype) * 10, atol=tol(dtype) * 10)


def test_einsum_forms_gradient_errors():
    a, b = rand((3, 4), np.float32), rand((4, 2), np.float32)
    got = ops.Einsum("ij,jk->ik")((ms.Tensor(a), ms.Tensor(b))).asnumpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)
    np.testing.assert_array_equal(ops.einsum("ij->ji", ms.Tensor(np.arange(6).reshape(2, 3))).asnumpy(),
                                  np.arange(6).reshape(2, 3).T)  # one integer operand: no matmul needed
    check_grad("einsum", [rand((3, 4)), rand((4, 2))], {"equation": "ij,jk->ik"}, wrt=(0, 1))
    check_grad("einsum", [rand((3, 3, 2))], {"equation": "iij->ji"})
    check_grad("einsum", [rand((2, 3)), rand((4, 3, 5)), rand((2, 5))], {"equation": "bn,anm,bm->ba"},
               wrt=(0, 1, 2))
    check_grad("einsum", [rand((3, 4)), rand((1, 4))], {"equation": "ij,ij->i"}, wrt=(0, 1))
    x = ms.Tensor(a)
    for equation, operands, message in [
            ("ij,jk->ik", (x,), "has subscripts for 2 operands; expected one term per operand, but got 1"),
            ("ij->i", (x, x), "has subscripts for 1 operands"),
            ("i2->i", (x,), "the equation may hold letters"),
            ("ijk->i", (x,), "the subscripts 'ijk' name 3 axes; expected one per axis of an operand of rank 2"),
            ("ij->ii", (x,), "output subscript 'i' appears more than once"),
            ("ij->k", (x,), "output subscript 'k' appears in no operand"),
            ("ij,ij->i", (x, ms.Tensor(b)), "subscript 'i' has size 3 and 4 in different places"),
            ("ii->i", (ms.Tensor(np.ones((1, 3), np.float32)),), "subscript 'i' repeats over axes of sizes 1 and 3")]:
        with pytest.raises(ValueError, match=r"\[einsum\] .*" + message.replace("(", r"\(")):
            ops.einsum(equation, *operands)
    with pytest.raises(TypeError, match="einsum|batch_matmul"):
        ops.einsum("ij,jk->ik", ms.Tensor(np.ones((2, 2), np.int32)), ms.Tensor(np.ones((2, 2), np.int32)))


def test_graph_mode():
    x = ms.Tensor(rand((3, 4), np.float32))

    def body(a):
        p = ops.pad(a, (1, 1), mode="reflect")
        u, v = ops.meshgrid(a[0], a[1])
        e = ops.einsum("ij,kj->ik", a, a)
        return ops.logsumexp(p, 1) * ops.norm(a) + ops.chunk(a, 2, 1)[0].sum() + (u * v).sum() + e.sum(1)

    np.testing.assert_allclose(ms.jit(body)(x).asnumpy(), body(x).asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(ms.grad(ms.jit(lambda a: body(a).sum()))(x).asnumpy(),
                               ms.grad(lambda a: body(a).sum())(x).asnumpy(), rtol=1e-5)
