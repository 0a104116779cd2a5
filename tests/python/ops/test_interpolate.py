"""Parity tests of interpolate (src/ops/nn_interpolate.cc) against
torch.nn.functional.interpolate: nearest, nearest-exact, linear, bilinear,
trilinear; size and scale_factor (one per axis or one for all), align_corners,
recompute_scale_factor; dtypes; gradients against torch autograd and finite
differences; errors; GRAPH_MODE."""
import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import check_grad, covers

covers("interpolate")

try:  # the coverage test imports this module whether or not torch is there
    import torch
    F = torch.nn.functional
except ImportError:
    torch = F = None
pytestmark = pytest.mark.skipif(torch is None, reason="the peer, PyTorch, is not installed")
RNG = np.random.default_rng(23)

CASES = [
    ((2, 3, 7), "linear", dict(size=12)), ((2, 3, 7), "linear", dict(size=4, align_corners=True)),
    ((2, 3, 7), "linear", dict(scale_factor=1.7)), ((2, 3, 7), "nearest", dict(size=12)),
    ((2, 3, 7), "nearest", dict(scale_factor=0.5)), ((1, 2, 5, 6), "bilinear", dict(scale_factor=2.0)),
    ((1, 2, 5, 6), "bilinear", dict(size=(3, 4), align_corners=True)), ((1, 2, 5, 6), "bilinear", dict(size=(1, 1))),
    ((1, 2, 5, 6), "bilinear", dict(size=(1, 9), align_corners=True)),
    ((1, 2, 5, 6), "bilinear", dict(scale_factor=0.7)),
    ((1, 2, 5, 6), "bilinear", dict(scale_factor=0.7, recompute_scale_factor=True)),
    ((1, 2, 5, 6), "nearest", dict(scale_factor=(1.5, 0.5))), ((1, 2, 8, 9), "nearest", dict(size=(3, 4))),
    ((1, 2, 5, 6), "nearest-exact", dict(size=(9, 4))), ((1, 2, 5, 6), "nearest", dict(size=(5, 6))),
    ((1, 1, 3, 4, 5), "trilinear", dict(size=(5, 6, 7))),
    ((1, 1, 3, 4, 5), "trilinear", dict(scale_factor=(2, 1, 0.5), align_corners=True)),
    ((2, 1, 3, 4, 5), "nearest", dict(scale_factor=2)),
]


@pytest.mark.parametrize("shape,mode,kwargs", CASES)
def test_forward_against_torch(shape, mode, kwargs):
    for dtype, tol in ((np.float32, 2e-6), (np.float64, 1e-12)):
        x = RNG.standard_normal(shape).astype(dtype)
        got = ops.interpolate(ms.Tensor(x), mode=mode, **kwargs).asnumpy()
        want = F.interpolate(torch.tensor(x), mode=mode, **kwargs).numpy()
        assert got.shape == want.shape and got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_other_dtypes():
    x = RNG.integers(-50, 50, size=(1, 2, 4, 5)).astype(np.int32)
    got = ops.interpolate(ms.Tensor(x), size=(7, 3))
    assert got.dtype == ms.int32
    np.testing.assert_array_equal(got.asnumpy(), F.interpolate(torch.tensor(x).double(), size=(7, 3)).int().numpy())
    xh = RNG.standard_normal((1, 2, 4, 5)).astype(np.float16)
    got = ops.interpolate(ms.Tensor(xh), scale_factor=2.0, mode="bilinear")
    assert got.dtype == ms.float16
    want = F.interpolate(torch.tensor(xh.astype(np.float32)), scale_factor=2.0, mode="bilinear").numpy()
    np.testing.assert_allclose(got.asnumpy().astype(np.float32), want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("shape,mode,kwargs", [c for c in CASES if c[1] != "nearest"][:8] + [CASES[4], CASES[11]])
def test_gradients_against_torch(shape, mode, kwargs):
    x = RNG.standard_normal(shape)
    t = torch.tensor(x, requires_grad=True)
    out = F.interpolate(t, mode=mode, **kwargs)
    sens = RNG.uniform(0.5, 1.5, size=tuple(out.shape))
    (out * torch.tensor(sens)).sum().backward()
    g = ms.grad(lambda a: (ops.interpolate(a, mode=mode, **kwargs) * ms.Tensor(sens)).sum())(ms.Tensor(x))
    np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_finite_differences():
    check_grad("interpolate", [RNG.standard_normal((1, 2, 3, 4))], {"size": [5, 3], "mode": "bilinear"})
    check_grad("interpolate", [RNG.standard_normal((1, 1, 5))], {"scale_factor": 0.6, "mode": "linear",
                                                                 "align_corners": True})


def test_errors():
    x = ms.Tensor(np.ones((1, 2, 4, 4), np.float32))
    with pytest.raises(ValueError, match=r"\[interpolate\] exactly one of 'size' and 'scale_factor' must be given, "
                                         r"but got neither"):
        ops.interpolate(x)
    with pytest.raises(ValueError, match="but got both"):
        ops.interpolate(x, size=2, scale_factor=2.0)
    with pytest.raises(ValueError, match=r"mode 'linear' needs a 3-D input; expected rank 3"):
        ops.interpolate(x, size=2, mode="linear")
    with pytest.raises(ValueError, match=r"align_corners is only for the linear modes"):
        ops.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match=r"mode 'bicubic' is not supported by msrt"):
        ops.interpolate(x, size=2, mode="bicubic")
    with pytest.raises(ValueError, match="'mode' must be one of"):
        ops.interpolate(x, size=2, mode="cubic")
    with pytest.raises(ValueError, match=r"'size' must have one entry per spatial axis; expected 2"):
        ops.interpolate(x, size=(2, 2, 2))
    with pytest.raises(ValueError, match=r"the output size must be positive"):
        ops.interpolate(x, scale_factor=0.1)
    with pytest.raises(ValueError, match=r"'scale_factor' must be positive"):
        ops.interpolate(x, scale_factor=-2.0)
    with pytest.raises(TypeError, match=r"attribute 'size' must be None, an int or a tuple of ints"):
        ops.interpolate(x, size=2.5)
    with pytest.raises(ValueError, match=r"expected rank 3, 4 or 5"):
        ops.interpolate(ms.Tensor(np.ones((2, 2), np.float32)), size=3)
    with pytest.raises(TypeError, match=r"\[interpolate\] input 'x' has an unsupported dtype"):
        ops.interpolate(ms.Tensor(np.ones((1, 1, 3), np.int32)), size=5, mode="linear")


def test_graph_mode():
    x = ms.Tensor(RNG.standard_normal((1, 2, 5, 6)).astype(np.float32))

    @ms.jit
    def f(a):
        return ops.interpolate(a, size=(8, 3), mode="bilinear") * 2

    np.testing.assert_allclose(f(x).asnumpy(), ops.interpolate(x, size=(8, 3), mode="bilinear").asnumpy() * 2,
                               rtol=1e-6)
    g = ms.grad(lambda a: f(a).sum())(x)
    g_eager = ms.grad(lambda a: (ops.interpolate(a, size=(8, 3), mode="bilinear") * 2).sum())(x)
    np.testing.assert_allclose(g.asnumpy(), g_eager.asnumpy(), rtol=1e-6)
