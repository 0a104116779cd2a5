"""ms.mutable (a new value runs the same graph), ms.jit_class (instances used
inside compiled code), Cell.set_inputs / get_inputs (calls checked against the
declared signature; tests/python/jit/test_dynamic_shapes.py covers compiling
once for every size)."""
import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops

X = np.array([1.0, -2.0, 3.0], np.float32)


def test_mutable_scalars_run_one_graph():
    @ms.jit
    def scale(x, n):
        return x * n

    for n in (2.0, 3.0, 0.5):
        np.testing.assert_allclose(scale(ms.Tensor(X), ms.mutable(n)).asnumpy(), X * n)
    assert len(ms._jit.compile_report(scale)) == 1
    for n in (2.0, 3.0):
        np.testing.assert_allclose(scale(ms.Tensor(X), n).asnumpy(), X * n)
    assert len(ms._jit.compile_report(scale)) == 3  # plain numbers are constants: one graph each


def test_mutable_structures_in_graph_mode_cell():
    ms.set_context(mode=ms.GRAPH_MODE)

    class Net(nn.Cell):
        def construct(self, pair, weights):
            return pair[0] * weights["a"] + pair[1] * weights["b"]

    net = Net()
    for a, b in ((1.0, 2.0), (-1.0, 0.5)):
        out = net(ms.mutable((ms.Tensor(X), ms.Tensor(X * 2))), ms.mutable({"a": a, "b": b}))
        np.testing.assert_allclose(out.asnumpy(), X * a + 2 * X * b)
    assert len(ms._jit.compile_report(net)) == 1
    m = ms.mutable([1, 2.5])
    assert m == [1, 2.5] and isinstance(m, list) and m[0] + 1 == 2  # eagerly, plain numbers
    assert ms.mutable((ms.Tensor(X),), dynamic_len=True).__ms_dynamic_len__


def test_mutable_errors():
    with pytest.raises(TypeError, match="mutable"):
        ms.mutable("text")
    with pytest.raises(TypeError, match="mutable"):
        ms.mutable((ms.Tensor(X), object()))
    with pytest.raises(TypeError, match="dynamic_len"):
        ms.mutable(3.0, dynamic_len=True)
    with pytest.raises(TypeError, match="dynamic_len"):
        ms.mutable((1.0,), dynamic_len=1)


@ms.jit_class
class Affine:
    def __init__(self, scale, shift):
        self.scale = scale
        self.shift = ms.Tensor(np.float32(shift))

    def apply(self, x):
        return x * self.scale + self.shift


def test_jit_class_instances_inside_a_graph_mode_cell():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.affine = Affine(3.0, 0.5)

        def construct(self, x):
            return ops.tanh(self.affine.apply(x))

    eager = Net()(ms.Tensor(X)).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    net = Net()
    np.testing.assert_allclose(net(ms.Tensor(X)).asnumpy(), np.tanh(X * 3.0 + 0.5), rtol=1e-6)
    np.testing.assert_allclose(eager, np.tanh(X * 3.0 + 0.5), rtol=1e-6)
    assert ms._jit.compile_report(net), "the cell was not compiled"
    assert Affine.__ms_class__
    with pytest.raises(TypeError, match="class type"):
        ms.jit_class(lambda: None)
    with pytest.raises(TypeError, match="nn.Cell"):
        ms.jit_class(nn.Dense)


class Mean(nn.Cell):
    def construct(self, x):
        return ops.mean(x * 2.0, axis=1)


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_set_inputs_with_dynamic_dimensions(mode):
    ms.set_context(mode=mode)
    net = Mean()
    spec = ms.Tensor(shape=[None, 3], dtype=ms.float32)
    assert spec.dynamic_shape == (-1, 3)
    net.set_inputs(spec)
    assert net.get_inputs() == [spec]
    for rows in (1, 4, 7):
        x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_allclose(net(ms.Tensor(x)).asnumpy(), (x * 2).mean(axis=1), rtol=1e-6)
    with pytest.raises(ValueError, match="dimension 1 of the 0th input must be 3"):
        net(ms.Tensor(np.ones((2, 4), np.float32)))
    with pytest.raises(ValueError, match="2 dimensions"):
        net(ms.Tensor(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="dtype"):
        net(ms.Tensor(np.ones((2, 3), np.int32)))
    with pytest.raises(ValueError, match="declared 1"):
        net(ms.Tensor(np.ones((2, 3), np.float32)), ms.Tensor(np.ones((2, 3), np.float32)))
    with pytest.raises(TypeError, match="set_inputs"):
        Mean().set_inputs(object())
    assert Mean().get_inputs() is None
