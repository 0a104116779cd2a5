"""Environment variables (spec §7) and compatibility profiles.

Variables that supply a default are read while the user has set nothing, so
they are tested in fresh processes; override variables are consulted at use
and are tested in this process with monkeypatch.
"""
import os

import pytest

import msrt as ms
from ctxutil import PROFILES, assert_tokens, message, of_category, recorded_warnings

# ---------------------------------------------------------------------------
# DEVICE_ID.


def test_device_id_default_comes_from_device_id(python_subprocess):
    proc = python_subprocess(
        """
        e = ms.context.explain("device_id")
        before = [ms.get_context("device_id"), e["source"], e["source_detail"]]
        ms.set_context(device_id=2)
        print("RESULT=" + json.dumps(before + [ms.get_context("device_id"), ms.context.explain("device_id")["source"]]))
        """,
        env={"DEVICE_ID": "7"},
    )
    assert proc.result == [7, "environment", "env DEVICE_ID=7", 2, "api"]


def test_freezing_compares_with_the_environment_default(python_subprocess):
    proc = python_subprocess(
        """
        ms.context._mark_in_effect("device_id", "device 3 was opened")
        ms.set_context(device_id=3)  # the value in effect: a no-op
        try:
            ms.set_context(device_id=0)
            out = None
        except RuntimeError as e:
            out = str(e)
        print("RESULT=" + json.dumps([out, ms.get_context("device_id")]))
        """,
        env={"DEVICE_ID": "3"},
    )
    error, value = proc.result
    assert error is not None
    assert_tokens(error, ["'device_id'", "device 3 was opened", "3", "0"])
    assert value == 3


@pytest.mark.parametrize("text", ["abc", "-1", "5000", "1.5", " 3"])
def test_bad_device_id_warns_and_uses_zero(text, python_subprocess):
    proc = python_subprocess(
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = ms.get_context("device_id")
        print("RESULT=" + json.dumps([value, [str(w.message) for w in caught]]))
        """,
        env={"DEVICE_ID": text},
    )
    value, messages = proc.result
    assert value == 0
    assert messages and all("DEVICE_ID" in m for m in messages)
    assert repr(text) in messages[0]


def test_unset_device_id_is_zero(python_subprocess):
    proc = python_subprocess('print("RESULT=" + json.dumps(ms.get_context("device_id")))')
    assert proc.result == 0


# ---------------------------------------------------------------------------
# MS_DEV_SAVE_GRAPHS / MS_DEV_SAVE_GRAPHS_PATH (override at use).


def test_save_graphs_env_overrides_the_effective_level(monkeypatch):
    ms.set_context(save_graphs=1)
    monkeypatch.setenv("MS_DEV_SAVE_GRAPHS", "3")
    assert ms.get_context("save_graphs") == 1  # what the user asked for
    assert ms.context.effective("save_graphs") == 3
    e = ms.context.explain("save_graphs")
    assert (e["requested"], e["effective"], e["source"]) == (1, 3, "environment")
    assert "MS_DEV_SAVE_GRAPHS=3" in e["source_detail"]
    assert "effective: 3" in str(e)
    summary = ms.context.summary()
    assert "save_graphs" in summary and "MS_DEV_SAVE_GRAPHS=3" in summary
    monkeypatch.delenv("MS_DEV_SAVE_GRAPHS")
    assert ms.context.effective("save_graphs") == 1
    assert ms.context.explain("save_graphs")["source"] == "api"


def test_save_graphs_path_env_overrides_the_effective_path(monkeypatch, tmp_path):
    ms.set_context(save_graphs_path=str(tmp_path / "ctx"))
    monkeypatch.setenv("MS_DEV_SAVE_GRAPHS_PATH", str(tmp_path / "env"))
    assert ms.get_context("save_graphs_path") == os.path.realpath(tmp_path / "ctx")
    assert ms.context.effective("save_graphs_path") == os.path.realpath(tmp_path / "env")
    e = ms.context.explain("save_graphs_path")
    assert e["source"] == "environment" and "MS_DEV_SAVE_GRAPHS_PATH" in e["source_detail"]


@pytest.mark.parametrize("text", ["4", "12", "x", "-1", "3 "])
def test_bad_save_graphs_env_is_a_value_error_naming_the_variable(text, monkeypatch):
    monkeypatch.setenv("MS_DEV_SAVE_GRAPHS", text)
    with pytest.raises(ValueError) as excinfo:
        ms.context.effective("save_graphs")
    assert_tokens(message(excinfo), ["MS_DEV_SAVE_GRAPHS", repr(text)])
    with pytest.raises(ValueError) as excinfo:
        ms.context.explain("save_graphs")
    assert "MS_DEV_SAVE_GRAPHS" in message(excinfo)
    # The stored value is still readable and settable.
    ms.set_context(save_graphs=2)
    assert ms.get_context("save_graphs") == 2
    ms.context.summary()  # does not fail on a bad override


# ---------------------------------------------------------------------------
# MS_COMPILER_CACHE_ENABLE / MS_COMPILER_CACHE_PATH (defaults while unset).


def test_compiler_cache_env_supplies_defaults_until_the_user_sets_them(python_subprocess):
    proc = python_subprocess(
        """
        out = [ms.get_context("enable_compile_cache"), ms.get_context("compile_cache_path"),
               ms.context.explain("enable_compile_cache")["source"]]
        ms.set_context(enable_compile_cache=False, compile_cache_path="/user/cache")
        out += [ms.get_context("enable_compile_cache"), ms.get_context("compile_cache_path"),
                ms.context.explain("compile_cache_path")["source"]]
        print("RESULT=" + json.dumps(out))
        """,
        env={"MS_COMPILER_CACHE_ENABLE": "1", "MS_COMPILER_CACHE_PATH": "/env/cache"},
    )
    assert proc.result == [True, "/env/cache", "environment", False, "/user/cache", "api"]


def test_compiler_cache_enable_zero(python_subprocess):
    proc = python_subprocess(
        'print("RESULT=" + json.dumps(ms.get_context("enable_compile_cache")))',
        env={"MS_COMPILER_CACHE_ENABLE": "0"},
    )
    assert proc.result is False


def test_bad_compiler_cache_enable_names_the_variable(python_subprocess):
    proc = python_subprocess(
        """
        try:
            ms.get_context("enable_compile_cache")
            out = None
        except ValueError as e:
            out = str(e)
        ms.set_context(enable_compile_cache=True)  # the user's value needs no variable
        print("RESULT=" + json.dumps([out, ms.get_context("enable_compile_cache")]))
        """,
        env={"MS_COMPILER_CACHE_ENABLE": "yes"},
    )
    error, value = proc.result
    assert error is not None and "MS_COMPILER_CACHE_ENABLE" in error and "'yes'" in error
    assert value is True


# ---------------------------------------------------------------------------
# MS_DEV_GRAPH_KERNEL_FLAGS (override at use).


def test_graph_kernel_flags_env_overrides(monkeypatch):
    ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags="--opt_level=1")
    monkeypatch.setenv("MS_DEV_GRAPH_KERNEL_FLAGS", "--opt_level=3 --dump_as_text")
    assert ms.get_context("graph_kernel_flags") == "--opt_level=1"
    assert ms.context.effective("graph_kernel_flags") == "--opt_level=3 --dump_as_text"
    e = ms.context.explain("graph_kernel_flags")
    assert e["source"] == "environment" and "MS_DEV_GRAPH_KERNEL_FLAGS" in e["source_detail"]


def test_empty_override_variable_is_ignored(monkeypatch):
    monkeypatch.setenv("MS_DEV_SAVE_GRAPHS", "")
    ms.set_context(save_graphs=1)
    assert ms.context.effective("save_graphs") == 1


def test_options_name_the_variables():
    env = {(o["name"], o["env_var"], o["env_role"]) for o in ms.context.options() if o["env_var"]}
    assert env == {
        ("device_id", "DEVICE_ID", "default"),
        ("save_graphs", "MS_DEV_SAVE_GRAPHS", "override"),
        ("save_graphs_path", "MS_DEV_SAVE_GRAPHS_PATH", "override"),
        ("enable_compile_cache", "MS_COMPILER_CACHE_ENABLE", "default"),
        ("compile_cache_path", "MS_COMPILER_CACHE_PATH", "default"),
        ("graph_kernel_flags", "MS_DEV_GRAPH_KERNEL_FLAGS", "override"),
    }


# ---------------------------------------------------------------------------
# GLOG_v.


@pytest.mark.parametrize("text,level", [("0", 0), ("1", 1), ("2", 2), ("3", 3), (None, 2)])
def test_log_level_from_glog_v(text, level, python_subprocess):
    proc = python_subprocess('print("RESULT=" + json.dumps(ms._C.log_level()))', env={"GLOG_v": text})
    assert proc.result == level
    assert "GLOG_v" not in proc.stderr


@pytest.mark.parametrize("text", ["4", "x", "-1"])
def test_bad_glog_v_warns_and_uses_warning_level(text, python_subprocess):
    proc = python_subprocess('print("RESULT=" + json.dumps(ms._C.log_level()))', env={"GLOG_v": text})
    assert proc.result == 2
    assert "GLOG_v" in proc.stderr and repr(text) in proc.stderr


# ---------------------------------------------------------------------------
# Profiles.


PROFILE_DEFAULTS = {
    # (family, key): {profile: default}
    ("context", "mode"): {"r0.5": 1, "r1.0": 1, "r1.6": 0, "r2.3": 1},
    ("context", "enable_auto_mixed_precision"): {"r0.5": True, "r1.0": False, "r1.6": False, "r2.3": False},
}


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_from_environment(profile, python_subprocess):
    proc = python_subprocess(
        """
        e = ms.context.explain("mode")
        print("RESULT=" + json.dumps([ms.context.get_profile(), ms.get_context("mode"),
              ms.get_context("enable_auto_mixed_precision"), e["source"], e["source_detail"],
              [o["default"] for o in ms.context.options("context") if o["name"] == "mode"][0]]))
        """,
        env={"MSRT_CONTEXT_PROFILE": profile},
    )
    name, mode, amp, source, detail, documented = proc.result
    assert name == profile
    assert mode == PROFILE_DEFAULTS[("context", "mode")][profile] == documented
    assert amp == PROFILE_DEFAULTS[("context", "enable_auto_mixed_precision")][profile]
    assert source == "default"
    if profile == "r1.6":
        assert detail == "profile r1.6"


def test_default_profile_is_r23(python_subprocess):
    proc = python_subprocess('print("RESULT=" + json.dumps(ms.context.get_profile()))')
    assert proc.result == "r2.3"


def test_bad_profile_variable_warns_naming_it_and_uses_the_default(python_subprocess):
    # A bad variable must not make every call fail: it warns once, naming the
    # variable and the valid profiles, and the default profile applies. The
    # store starts while libmsrt loads, before Python's warning hook exists,
    # so the warning goes to the log (stderr).
    proc = python_subprocess(
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mode = ms.get_context("mode")
        print("RESULT=" + json.dumps([mode, ms.context.get_profile(), [str(w.message) for w in caught]]))
        """,
        env={"MSRT_CONTEXT_PROFILE": "r9"},
    )
    mode, profile, messages = proc.result
    assert (mode, profile) == (1, "r2.3")
    logged = " ".join(messages) + proc.stderr
    assert logged.count("MSRT_CONTEXT_PROFILE='r9'") == 1
    assert_tokens(logged, ["'r0.5'", "'r1.0'", "'r1.6'", "'r2.3'"])


def test_set_profile_switches_defaults_but_keeps_user_values(python_subprocess):
    proc = python_subprocess(
        """
        out = []
        ms.context.set_profile("r1.6")
        out.append([ms.context.get_profile(), ms.get_context("mode"), ms.get_context("enable_auto_mixed_precision")])
        ms.context.set_profile("r0.5")
        out.append([ms.context.get_profile(), ms.get_context("mode"), ms.get_context("enable_auto_mixed_precision")])
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.context.set_profile("r2.3")
        out.append([ms.context.get_profile(), ms.get_context("mode"), ms.get_context("enable_auto_mixed_precision")])
        print("RESULT=" + json.dumps(out))
        """
    )
    assert proc.result == [["r1.6", 0, False], ["r0.5", 1, True], ["r2.3", 0, False]]


def test_set_profile_rejects_unknown_names():
    with pytest.raises(ValueError) as excinfo:
        ms.context.set_profile("r2.4")
    assert_tokens(message(excinfo), ["'r2.4'", "'r0.5'", "'r1.0'", "'r1.6'", "'r2.3'"])
    assert ms.context.get_profile() == "r2.3"


def test_profile_changes_unknown_key_wording():
    ms.context.set_profile("r1.6")
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(foo=1)
    assert message(excinfo).startswith("Set context keyword foo is not recognized!")
    with pytest.raises(ValueError) as excinfo:
        ms.get_context("foo")
    assert message(excinfo).startswith("Get context keyword foo is not recognized!")
    ms.context.set_profile("r2.3")
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(foo=1)
    assert message(excinfo).startswith("For 'context.set_context', the keyword argument foo is not recognized!")


def test_profile_changes_deprecations_in_process():
    ms.context.set_profile("r1.6")
    with recorded_warnings() as caught:
        ms.set_context(enable_sparse=True)
    assert not of_category(caught, ms.ContextDeprecationWarning)
    assert ms.get_context("enable_sparse") is True
    ms.context.set_profile("r2.3")
    with recorded_warnings() as caught:
        ms.set_context(enable_sparse=False)
    assert of_category(caught, ms.ContextDeprecationWarning)
    assert ms.get_context("enable_sparse") is True  # ignored in r2.3


def test_profile_is_part_of_the_snapshot():
    ms.context.set_profile("r1.0")
    assert ms.context.snapshot()["profile"] == "r1.0"


def test_loading_a_fresh_snapshot_keeps_defaults_live(python_subprocess):
    proc = python_subprocess(
        """
        ms.context.load(ms.context.snapshot())
        out = [ms.context.explain("mode")["source"]]
        ms.context.set_profile("r1.6")
        out.append(ms.get_context("mode"))
        print("RESULT=" + json.dumps(out))
        """
    )
    assert proc.result == ["default", 0]
