"""jit_config and ms.JitConfig: the compile level of all networks, or of one."""
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import nn

OPTIMISATIONS = {"simplify_algebra", "fold_constants", "eliminate_common_subexpressions", "channels_last"}


def _x():
    return ms.Tensor(np.array([0.5, -1.0, 2.0], np.float32))


def _expected(x):
    return -np.tanh(x * 4.0)


def _function(**jit_kwargs):
    @ms.jit(**jit_kwargs)
    def f(x):
        four = ms.Tensor(np.float32(2.0)) + ms.Tensor(np.float32(2.0))  # a constant to fold
        return -ms.ops.tanh(x * four)  # an elementwise chain to fuse

    return f


def _passes(report):
    return {name for name, _ in report["passes"]}


class Chain(nn.Cell):
    def construct(self, x):
        four = ms.Tensor(np.float32(2.0)) + ms.Tensor(np.float32(2.0))
        return -ms.ops.tanh(x * four)


def test_global_o0_runs_only_the_passes_a_graph_needs():
    ms.set_context(jit_config={"jit_level": "O0"})
    f = _function()
    np.testing.assert_allclose(f(_x()).asnumpy(), _expected(_x().asnumpy()), rtol=1e-6)
    report = ms._jit.compile_report(f)[0]
    assert "eliminate_dead_code" in _passes(report)
    assert not _passes(report) & OPTIMISATIONS
    assert report["final_ops"] == report["captured_ops"]  # the constant add is kept
    assert ms.get_jit_config() == {"jit_level": "O0", "infer_boost": "off"}


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_global_o1_and_o2_optimise_and_fuse_without_enable_graph_kernel(level):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ms.set_context(jit_config={"jit_level": level})
    assert any("'O1'" in str(w.message) for w in caught) == (level == "O2")  # O2 says it runs as O1
    f = _function()
    np.testing.assert_allclose(f(_x()).asnumpy(), _expected(_x().asnumpy()), rtol=1e-6)
    report = ms._jit.compile_report(f)[0]
    assert {"fold_constants", "fuse_elementwise"} <= _passes(report)
    assert report["fused_chains"] >= 1


def test_unset_keeps_the_defaults():
    f = _function()
    f(_x())
    report = ms._jit.compile_report(f)[0]
    assert "fold_constants" in _passes(report) and report["fused_chains"] == 0


def test_changing_the_global_level_recompiles():
    f = _function()
    f(_x())
    ms.set_context(jit_config={"jit_level": "O0"})
    f(_x())
    reports = ms._jit.compile_report(f)
    assert len(reports) == 2
    assert "fold_constants" in _passes(reports[0]) and "fold_constants" not in _passes(reports[1])


def test_a_cell_jit_config_applies_to_that_cell_only(graph_mode):
    own, plain = Chain(), Chain()
    own.set_jit_config(ms.JitConfig(jit_level="O0"))
    assert own.jit_config_dict["jit_level"] == "O0" and plain.jit_config_dict == {}
    for net in (own, plain):
        np.testing.assert_allclose(net(_x()).asnumpy(), _expected(_x().asnumpy()), rtol=1e-6)
    assert not _passes(ms._jit.compile_report(own)[0]) & OPTIMISATIONS
    assert "fold_constants" in _passes(ms._jit.compile_report(plain)[0])
    assert ms.get_jit_config()["jit_level"] == ""  # the global context is untouched


def test_a_network_config_wins_over_the_global_one(graph_mode):
    ms.set_context(jit_config={"jit_level": "O0"})
    net = Chain()
    net.set_jit_config(ms.JitConfig(jit_level="O1"))
    net(_x())
    assert ms._jit.compile_report(net)[0]["fused_chains"] >= 1


def test_jit_function_config_sets_the_syntax_level():
    def branchy(x):
        if x.sum() > 0:
            return x
        return -x

    lax = ms.jit(branchy)
    with pytest.warns(ms.MsrtWarning, match="runs in PYNATIVE mode"):
        lax(_x())
    strict = ms.jit(branchy, jit_config=ms.JitConfig(jit_syntax_level="STRICT"))
    with pytest.raises(RuntimeError, match="jit_syntax_level=STRICT"):
        strict(_x())
    assert ms.get_context("jit_syntax_level") == ms.context.LAX


@pytest.mark.parametrize("kwargs, error, words", [
    ({"jit_level": "O5"}, ValueError, ["'JitConfig'", "jit_level", "'O5'"]),
    ({"jit_level": "O1", "infer_boost": "on"}, ValueError, ["'JitConfig'", "infer_boost", "'O0'"]),
    ({"exc_mode": "fast"}, ValueError, ["exc_mode", "'fast'"]),
    ({"jit_syntax_level": "LOOSE"}, ValueError, ["jit_syntax_level", "'LOOSE'"]),
    ({"debug_level": 1}, TypeError, ["debug_level", "str", "int"]),
])
def test_bad_jit_config_arguments(kwargs, error, words):
    with pytest.raises(error) as raised:
        ms.JitConfig(**kwargs)
    for word in words:
        assert word in str(raised.value)


def test_a_jit_config_must_be_a_jit_config():
    with pytest.raises(TypeError, match="JitConfig"):
        Chain().set_jit_config({"jit_level": "O0"})
    with pytest.raises(TypeError, match="JitConfig"):
        ms.jit(lambda x: x, jit_config={"jit_level": "O0"})


def test_sink_mode_warns_that_it_is_ascends():
    with pytest.warns(ms.DeviceNotApplicableWarning, match="no_sink"):
        ms.JitConfig(exc_mode="sink")
