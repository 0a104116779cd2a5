"""ms.vmap / ops.functional.vmap: in_axes and out_axes against NumPy, gradients
through it, and MindSpore's errors."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, ops
from msrt.ops.functional import vmap

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
W = RNG.standard_normal((3, 2)).astype(np.float32)


def test_maps_axis_zero_of_every_input():
    out = vmap(lambda x, w: ops.matmul(x, w))(Tensor(X[:, None, :]), Tensor(np.stack([W] * 4)))
    np.testing.assert_allclose(out.asnumpy(), (X @ W)[:, None, :], rtol=1e-5)


def test_in_axes_none_and_other_axes():
    out = vmap(lambda x, w: ops.matmul(x.reshape(1, 3), w), in_axes=(1, None))(Tensor(X.T.copy()), Tensor(W))
    np.testing.assert_allclose(out.asnumpy(), (X @ W)[:, None, :], rtol=1e-5)
    neg = vmap(lambda x: x * 2, in_axes=-1)(Tensor(X))  # slices X[:, j], stacked on axis 0
    np.testing.assert_allclose(neg.asnumpy(), X.T * 2, rtol=1e-6)


def test_out_axes_and_tuple_outputs():
    fn = vmap(lambda x: (x * 2, x.sum()), in_axes=0, out_axes=(1, 0))
    a, b = fn(Tensor(X))
    np.testing.assert_allclose(a.asnumpy(), (X * 2).T, rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), X.sum(axis=1), rtol=1e-5)
    unmapped = vmap(lambda x, w: (x + 1, w), in_axes=(0, None), out_axes=(0, None))(Tensor(X), Tensor(W))
    np.testing.assert_array_equal(unmapped[1].asnumpy(), W)


def test_nested_inputs_and_a_cell():
    net = ms.nn.Dense(3, 2)
    out = vmap(net)(Tensor(X[:, None, :]))
    expected = X @ net.weight.asnumpy().T + net.bias.asnumpy()
    np.testing.assert_allclose(out.asnumpy()[:, 0, :], expected, rtol=1e-5, atol=1e-6)
    pair = vmap(lambda p: p[0] * p[1], in_axes=((0, None),))((Tensor(X), Tensor(np.float32(3))))
    np.testing.assert_allclose(pair.asnumpy(), X * 3, rtol=1e-6)


def test_gradient_flows_through_vmap():
    def loss(x):
        return vmap(lambda row: (row * row).sum())(x).sum()

    g = ms.grad(loss)(Tensor(X))
    np.testing.assert_allclose(g.asnumpy(), 2 * X, rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="one size"):
        vmap(lambda a, b: a + b)(Tensor(X), Tensor(W))
    with pytest.raises(ValueError, match="at least one"):
        vmap(lambda a: a, in_axes=None)(Tensor(X))
    with pytest.raises(ValueError, match="range"):
        vmap(lambda a: a, in_axes=2)(Tensor(X))
    with pytest.raises(ValueError, match="structure"):
        vmap(lambda a, b: a, in_axes=(0, 0, 0))(Tensor(X), Tensor(X))
    with pytest.raises(TypeError, match="in_axes"):
        vmap(lambda a: a, in_axes="0")
    with pytest.raises(TypeError, match="callable"):
        vmap(3)
    with pytest.raises(TypeError, match="must be a Tensor"):
        vmap(lambda a, b: a)(Tensor(X), 2.0)


def test_vmap_inside_a_compiled_function_and_graph_mode():
    @ms.jit
    def row_norms(x):
        return vmap(lambda r: (r * r).sum())(x)

    np.testing.assert_allclose(row_norms(Tensor(X)).asnumpy(), (X * X).sum(axis=1), rtol=1e-5)

    class Doubler(ms.nn.Cell):
        def construct(self, x):
            return ms.ops.vmap(lambda c: c * 2, in_axes=1)(x)

    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(Doubler()(Tensor(X)).asnumpy(), X.T * 2, rtol=1e-6)
