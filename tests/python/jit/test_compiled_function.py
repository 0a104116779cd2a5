"""The C++ front door of graph compilation (_C.CompiledFunction,
src/compiler/compiled_function.h) as msrt/_jit.py drives it."""
import gc
import warnings
import weakref

import numpy as np
import pytest

import msrt as ms
from msrt import _C, nn

from .helpers import compiles


def _x(n=3):
    return ms.Tensor(np.arange(n, dtype=np.float32))


def test_a_jit_function_keeps_its_graphs_in_a_compiled_function():
    @ms.jit
    def f(x):
        return x * 2.0

    assert isinstance(f._graph_cache, _C.CompiledFunction) and f._graph_cache == {}
    f(_x())
    f(_x())
    assert len(f._graph_cache) == 1 and f._graph_cache != {}
    f(_x(4))  # another shape: another graph
    assert compiles(f) == 2
    report = ms._jit.compile_report(f)
    assert report[0]["compile_cache"] is None and report[0]["seconds"] > 0


def test_python_arguments_key_by_type_and_value():
    traces = []

    @ms.jit
    def scale(x, k):
        traces.append(k)
        return x * k

    x = _x()
    np.testing.assert_allclose(scale(x, 2).asnumpy(), [0, 2, 4])
    scale(x, 2)
    np.testing.assert_allclose(scale(x, 3).asnumpy(), [0, 3, 6])
    scale(x, True)  # equal to 1 in Python, but another type: its own graph
    scale(x, 1)
    scale(x, -1)  # hash(-1) == hash(-2) in CPython: the repr tells them apart
    np.testing.assert_allclose(scale(x, -2).asnumpy(), [0, -2, -4])
    assert traces == [2, 3, True, 1, -1, -2] and compiles(scale) == 6


def test_unhashable_arguments_key_by_repr():
    traces = []

    @ms.jit
    def pick(x, options):
        traces.append(len(options))
        return x + float(len(options))

    pick(_x(), {1, 2})
    pick(_x(), {1, 2})
    pick(_x(), {1, 2, 3})
    assert traces == [2, 3] and compiles(pick) == 2


def test_a_fallback_is_decided_once_per_key():
    @ms.jit
    def branchy(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.warns(ms.MsrtWarning, match="runs in PYNATIVE mode instead of as a graph"):
        branchy(_x())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        branchy(_x())
    assert len(branchy._graph_cache) == 1 and compiles(branchy) == 0  # an eager entry has no graph
    ms.set_context(jit_syntax_level=ms.context.STRICT)
    with pytest.raises(RuntimeError, match="jit_syntax_level=STRICT"):
        branchy(_x(5))  # a new key decides again


def test_a_graph_mode_cell_with_compiled_graphs_is_collected(graph_mode):
    net = nn.Dense(3, 2)
    net(ms.Tensor(np.ones((1, 3), np.float32)))
    assert len(net._graph_cache) == 1  # its entry refers back to the cell: a cycle through C++
    ref = weakref.ref(net)
    del net
    gc.collect()
    assert ref() is None


def test_the_build_knows_the_package_version():
    assert _C.version() == ms.__version__  # part of the compile cache's dependency hash


def _make_scaled(factor, compile_once):
    @ms.jit(compile_once=compile_once)
    def scaled(x):
        return x * factor

    return scaled


def test_compile_once_shares_the_graphs_of_functions_made_from_one_code_object():
    x = _x()
    first, again = _make_scaled(2.0, False), _make_scaled(3.0, False)
    np.testing.assert_allclose(again(x).asnumpy(), [0, 3, 6])
    assert compiles(first) == 0 and compiles(again) == 1  # each its own graphs
    first, again = _make_scaled(2.0, True), _make_scaled(3.0, True)
    first(x)
    assert again._graph_cache is first._graph_cache and compiles(again) == 1
    np.testing.assert_allclose(again(x).asnumpy(), [0, 2, 4])  # MindSpore's caveat: the first free variables


def test_a_jit_method_compiles_per_owner_with_its_parameters_as_weights():
    class Net(nn.Cell):
        def __init__(self, w):
            super().__init__()
            self.w = ms.Parameter(ms.Tensor(np.full(3, w, np.float32)), name="w")

        @ms.jit
        def apply(self, x):
            return x * self.w

    a, b = Net(2.0), Net(5.0)
    np.testing.assert_allclose(a.apply(_x()).asnumpy(), [0, 2, 4])
    np.testing.assert_allclose(b.apply(_x()).asnumpy(), [0, 5, 10])
    assert compiles(Net.apply) == 2  # one per owner
    a.w.set_data(ms.Tensor(np.full(3, 4.0, np.float32)))
    np.testing.assert_allclose(a.apply(_x()).asnumpy(), [0, 4, 8])  # the weight is bound per call
