"""What msrt offers beyond MindSpore: override, explain, summary, options,
snapshot and load, and their behaviour across threads."""
import json
import threading

import pytest

import msrt as ms
from ctxutil import FAMILIES, assert_tokens, message, of_category, options, quiet_get, recorded_warnings, state

# ---------------------------------------------------------------------------
# override.


def test_override_is_scoped_and_restores():
    ms.set_context(max_call_depth=100)
    with ms.context.override(mode=ms.GRAPH_MODE, max_call_depth=5):
        assert ms.get_context("mode") == ms.GRAPH_MODE
        assert ms.get_context("max_call_depth") == 5
        assert ms.context.explain("mode")["source"] == "override"
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    assert ms.get_context("max_call_depth") == 100


def test_override_restores_on_exceptions():
    with pytest.raises(KeyError):
        with ms.context.override(mode=ms.GRAPH_MODE):
            raise KeyError("boom")
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_override_nests():
    with ms.context.override(max_call_depth=10):
        with ms.context.override(max_call_depth=20, precompile_only=True):
            assert ms.get_context("max_call_depth") == 20
            assert ms.get_context("precompile_only") is True
        assert ms.get_context("max_call_depth") == 10
        assert ms.get_context("precompile_only") is False
    assert ms.get_context("max_call_depth") == 1000


def test_override_does_not_store_anything():
    before = state()
    with ms.context.override(device_id=3, save_graphs=True):
        pass
    assert state() == before


def test_override_is_per_thread():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def other():
        inside.wait()
        seen["other"] = ms.get_context("mode")
        with ms.context.override(max_call_depth=7):
            seen["other_own"] = ms.get_context("max_call_depth")
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    with ms.context.override(mode=ms.GRAPH_MODE):
        inside.set()
        release.wait()
        seen["main"] = ms.get_context("mode")
        seen["main_depth"] = ms.get_context("max_call_depth")
    thread.join()
    assert seen == {"other": ms.PYNATIVE_MODE, "other_own": 7, "main": ms.GRAPH_MODE, "main_depth": 1000}


def test_a_thread_started_inside_an_override_does_not_inherit_it():
    seen = {}
    with ms.context.override(mode=ms.GRAPH_MODE):
        thread = threading.Thread(target=lambda: seen.setdefault("mode", ms.get_context("mode")))
        thread.start()
        thread.join()
    assert seen["mode"] == ms.PYNATIVE_MODE


def test_set_context_inside_an_override_changes_the_stored_value():
    with ms.context.override(max_call_depth=5):
        ms.set_context(max_call_depth=50)
        assert ms.get_context("max_call_depth") == 5
    assert ms.get_context("max_call_depth") == 50


def test_override_validates_like_set_context():
    before = state()
    with pytest.raises(ValueError) as excinfo:
        with ms.context.override(mode=7):
            pytest.fail("the block must not run")
    assert "'mode'" in message(excinfo)
    with pytest.raises(ValueError):
        with ms.context.override(no_such_key=1):
            pass
    with pytest.raises(TypeError):
        with ms.context.override(device_id="0"):
            pass
    assert state() == before
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_override_across_families_is_all_or_nothing():
    with pytest.raises(ValueError):
        with ms.context.override(mode=ms.GRAPH_MODE, device_num=0):
            pass
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    with ms.context.override(mode=ms.GRAPH_MODE, device_num=8, worker_num=3):
        assert ms.get_context("mode") == ms.GRAPH_MODE
        assert ms.get_auto_parallel_context("device_num") == 8
        assert ms.get_ps_context("worker_num") == 3
    assert ms.get_auto_parallel_context("device_num") == 1
    assert ms.get_ps_context("worker_num") == 0


def test_override_applies_device_target_first_and_warns_for_wrong_device():
    ms.set_context(device_target="CPU")
    with recorded_warnings() as caught:
        with ms.context.override(memory_offload="ON", device_target="GPU"):
            assert ms.get_context("device_target") == "GPU"
            assert ms.get_context("memory_offload") is True
    assert not of_category(caught, ms.DeviceNotApplicableWarning)
    assert ms.get_context("device_target") == "CPU"
    with recorded_warnings() as caught:
        with ms.context.override(memory_offload="ON"):
            assert quiet_get("context", "memory_offload") is False
    found = of_category(caught, ms.DeviceNotApplicableWarning)
    assert len(found) == 1 and "'memory_offload'" in found[0]


def test_override_of_a_frozen_key_is_refused(python_subprocess):
    proc = python_subprocess(
        """
        ms.context._mark_in_effect("device_id", "device 0 was opened")
        try:
            with ms.context.override(device_id=1):
                pass
            out = None
        except RuntimeError as e:
            out = str(e)
        with ms.context.override(device_id=0):
            same = ms.get_context("device_id")
        print("RESULT=" + json.dumps([out, same]))
        """
    )
    error, same = proc.result
    assert error is not None and "'device_id'" in error and "device 0 was opened" in error
    assert same == 0


def test_override_with_an_alias():
    with recorded_warnings():
        with ms.context.override(mirror_mean=True):
            assert ms.get_auto_parallel_context("gradients_mean") is True
    assert ms.get_auto_parallel_context("gradients_mean") is False


# ---------------------------------------------------------------------------
# explain.

EXPLAIN_FIELDS = {
    "key", "family", "type", "requested", "effective", "default", "source", "source_detail", "applies",
    "applies_reason", "devices", "mindspore_devices", "frozen", "frozen_reason", "affects_compile",
    "per_thread", "env_var", "env_role", "aliases", "deprecated_since", "consumers", "doc",
}


def test_explain_fields():
    ms.set_context(max_call_depth=123)
    e = ms.context.explain("max_call_depth")
    assert set(e) == EXPLAIN_FIELDS
    assert e["key"] == "max_call_depth" and e["family"] == "context"
    assert (e["requested"], e["effective"], e["default"]) == (123, 123, 1000)
    assert e["source"] == "api"
    assert e["applies"] is True and e["frozen"] is False
    assert e["affects_compile"] is True
    text = str(e)
    assert_tokens(text, ["context.max_call_depth", "requested: 123", "[api]", "default:   1000", "applies:   yes"])
    assert json.loads(json.dumps(dict(e))) == dict(e)


def test_explain_for_a_key_that_does_not_apply_here():
    ms.set_context(device_target="CPU")
    e = ms.context.explain("gpu_config")
    assert e["applies"] is False
    assert_tokens(e["applies_reason"], ["'gpu_config'", "'CPU'", "GPU"])
    assert "applies:   no" in str(e)


def test_explain_names_why_msrt_applies_a_key_mindspore_restricts():
    e = ms.context.explain("print_file_path")
    assert e["applies"] is True
    assert e["mindspore_devices"] == ["Ascend"]
    assert e["applies_reason"] == options("context")["print_file_path"]["device_note"] != ""


def test_explain_auto_parallel_and_ps_keys():
    ms.reset_auto_parallel_context()
    e = ms.context.explain("device_num")
    assert (e["family"], e["requested"], e["source"]) == ("auto_parallel_context", 1, "default")
    e = ms.context.explain("dataset_strategy")
    assert e["source"] == "derived"
    e = ms.context.explain("search_mode")
    assert e["aliases"] == ["auto_parallel_search_mode"]
    e = ms.context.explain("auto_parallel_search_mode")
    assert e["key"] == "search_mode"


def test_explain_deprecated_and_per_thread_keys():
    e = ms.context.explain("variable_memory_max_size")
    assert e["deprecated_since"] == "r1.6" and "deprecated since r1.6" in str(e)
    assert ms.context.explain("reserve_class_name_in_scope")["per_thread"] is True
    ms.set_context(reserve_class_name_in_scope=False)
    e = ms.context.explain("reserve_class_name_in_scope")
    assert e["requested"] is False and e["source"] == "api"


def test_explain_unknown_key():
    with pytest.raises(ValueError) as excinfo:
        ms.context.explain("mdoe")
    assert_tokens(message(excinfo), ["mdoe", "not recognized", "'mode'"])


def test_explain_frozen_key(python_subprocess):
    proc = python_subprocess(
        """
        ms.set_context(max_device_memory="2GB")
        ms.context._mark_in_effect("max_device_memory", "the GPU pool was created")
        e = ms.context.explain("max_device_memory")
        print("RESULT=" + json.dumps([e["frozen"], e["frozen_reason"], str(e), ms.context.summary()]))
        """
    )
    frozen, reason, text, summary = proc.result
    assert frozen is True and reason == "the GPU pool was created"
    assert "frozen:    yes" in text and "the GPU pool was created" in text
    line = next(line for line in summary.splitlines() if line.strip().startswith("max_device_memory"))
    assert "frozen" in line and "2.0" in line


def test_effective_equals_get_without_overrides():
    ms.set_context(save_graphs=2, device_id=4)
    for key in ("save_graphs", "device_id", "mode"):
        assert ms.context.effective(key) == ms.get_context(key)


# ---------------------------------------------------------------------------
# summary.


def _summary_rows(text):
    rows = {}
    for line in text.splitlines()[2:]:
        parts = line.split()
        if parts:
            rows[parts[0]] = line
    return rows


def test_summary_lists_changed_keys_with_their_source(python_subprocess):
    # In a fresh process: keys restored by load() count as set (see the load
    # defect in test_env_and_profiles.py), which would list every key here.
    proc = python_subprocess(
        """
        ms.set_context(max_call_depth=321, device_target="CPU")
        ms.set_auto_parallel_context(device_num=4)
        print("RESULT=" + json.dumps([ms.context.summary(), ms.context.get_profile()]))
        """
    )
    text, profile = proc.result
    assert text.splitlines()[0] == f"msrt context (profile {profile}, device CPU)"
    assert text.splitlines()[1].split() == ["key", "value", "source", "note"]
    rows = _summary_rows(text)
    assert "321" in rows["max_call_depth"] and "api" in rows["max_call_depth"]
    assert "4" in rows["auto_parallel_context.device_num"] and "api" in rows["auto_parallel_context.device_num"]
    assert set(rows) == {"mode", "device_target", "device_id", "max_call_depth", "auto_parallel_context.device_num",
                         "auto_parallel_context.parallel_mode", "ps_context.enable_ps"}
    assert "default" in rows["mode"]


def test_summary_notes_keys_that_do_not_apply():
    ms.set_context(device_target="GPU", memory_offload="ON")
    ms.set_context(device_target="CPU")
    rows = _summary_rows(ms.context.summary())
    assert "not used on this device" in rows["memory_offload"]


def test_summary_all_lists_every_public_key():
    rows = _summary_rows(ms.context.summary(all=True))
    for (family, name) in options():
        label = name if family == "context" else f"{family}.{name}"
        assert label in rows, label
    assert not any(key.split(".")[-1].startswith("_") for key in rows)


def test_summary_shows_overrides_of_this_thread():
    with ms.context.override(max_call_depth=9):
        rows = _summary_rows(ms.context.summary())
        assert "override" in rows["max_call_depth"] and "9" in rows["max_call_depth"]


# ---------------------------------------------------------------------------
# options.


def test_options_lists_every_key_with_type_default_and_doc():
    all_options = ms.context.options()
    assert len(all_options) == sum(len(ms.context.options(f)) for f in FAMILIES)
    for family in FAMILIES:
        names = [o["name"] for o in ms.context.options(family)]
        assert len(names) == len(set(names)), family
        assert all(o["family"] == family for o in ms.context.options(family))
    for o in all_options:
        assert {"name", "type", "default", "doc", "devices", "freezes", "env_var", "aliases",
                "deprecated_since", "affects_compile", "per_thread"} <= set(o)
        assert o["doc"].strip() and o["type"].strip()
    assert json.loads(json.dumps(all_options)) == all_options


def test_options_unknown_family():
    with pytest.raises(ValueError) as excinfo:
        ms.context.options("runtime")
    assert_tokens(message(excinfo), ["'runtime'", "'context'", "'auto_parallel_context'", "'ps_context'"])


def test_options_defaults_follow_the_profile():
    ms.context.set_profile("r1.6")
    assert options("context")["mode"]["default"] == ms.GRAPH_MODE
    ms.context.set_profile("r2.3")
    assert options("context")["mode"]["default"] == ms.PYNATIVE_MODE


# ---------------------------------------------------------------------------
# snapshot and load.


def test_snapshot_is_json_serialisable_and_round_trips(tmp_path):
    ms.set_context(mode=ms.GRAPH_MODE, max_device_memory="2.5GB", save_graphs_path=str(tmp_path / "ir"))
    ms.set_auto_parallel_context(dataset_strategy=((1, 4), (1, 4)), comm_fusion={"allreduce": {"mode": "size",
                                                                                               "config": 8}})
    ms.set_ps_context(worker_num=3)
    snap = ms.context.snapshot()
    assert set(snap) == {"profile", "context", "auto_parallel_context", "ps_context", "offload_context",
                         "algo_parameters"}
    text = json.dumps(snap)
    restored = json.loads(text)
    assert restored == json.loads(json.dumps(snap))
    expected = {
        "mode": ms.get_context("mode"),
        "max_device_memory": ms.get_context("max_device_memory"),
        "save_graphs_path": ms.get_context("save_graphs_path"),
        "dataset_strategy": ms.get_auto_parallel_context("dataset_strategy"),
        "comm_fusion": ms.get_auto_parallel_context("comm_fusion"),
        "worker_num": ms.get_ps_context("worker_num"),
    }
    # Change everything, then load the JSON text back.
    ms.set_context(mode=ms.PYNATIVE_MODE, max_device_memory="1GB")
    ms.reset_auto_parallel_context()
    ms.set_ps_context(worker_num=9)
    ms.context.load(restored)
    got = {
        "mode": ms.get_context("mode"),
        "max_device_memory": ms.get_context("max_device_memory"),
        "save_graphs_path": ms.get_context("save_graphs_path"),
        "dataset_strategy": ms.get_auto_parallel_context("dataset_strategy"),
        "comm_fusion": ms.get_auto_parallel_context("comm_fusion"),
        "worker_num": ms.get_ps_context("worker_num"),
    }
    assert got == expected
    assert type(ms.get_context("max_device_memory")) is float
    assert ms.context.snapshot() == snap


def test_load_restores_the_profile():
    snap = ms.context.snapshot()
    ms.context.set_profile("r0.5")
    ms.context.load(snap)
    assert ms.context.get_profile() == "r2.3"
    ms.context.load(dict(snap, profile="r1.6"))
    assert ms.context.get_profile() == "r1.6"


def test_load_with_one_bad_value_changes_nothing():
    ms.set_context(max_call_depth=55)
    good = ms.context.snapshot()
    bad = json.loads(json.dumps(good))
    bad["context"]["mode"] = ms.GRAPH_MODE
    bad["auto_parallel_context"]["device_num"] = 8
    bad["context"]["device_id"] = 5000
    before = state()
    with pytest.raises(ValueError) as excinfo:
        ms.context.load(bad)
    assert_tokens(message(excinfo), ["context.load", "'device_id'", "5000"])
    assert state() == before


@pytest.mark.parametrize(
    "mutate,error,tokens",
    [
        (lambda s: s.__setitem__("bogus", {}), ValueError, ["'bogus'"]),
        (lambda s: s["context"].__setitem__("no_such_key", 1), ValueError, ["'no_such_key'"]),
        (lambda s: s["context"].__setitem__("mode", "0"), TypeError, ["'mode'", "str"]),
        (lambda s: s.__setitem__("profile", "r7"), ValueError, ["'r7'"]),
        (lambda s: s.__setitem__("profile", 2), TypeError, ["'profile'"]),
        (lambda s: s.__setitem__("context", []), TypeError, ["'context'"]),
        (lambda s: s["auto_parallel_context"].__setitem__("_fusion_mode", 3), TypeError, ["'_fusion_mode'"]),
    ],
)
def test_load_rejects_malformed_snapshots(mutate, error, tokens):
    snap = json.loads(json.dumps(ms.context.snapshot()))
    mutate(snap)
    before = state()
    with pytest.raises(error) as excinfo:
        ms.context.load(snap)
    assert_tokens(message(excinfo), tokens)
    assert state() == before


@pytest.mark.parametrize(
    "section,key,value",
    [("auto_parallel_context", "device_num", 0),
     ("context", "variable_memory_max_size", "lots"),
     ("ps_context", "_role", "MS_BOSS"),
     ("auto_parallel_context", "_all_reduce_fusion_threshold", -5)],
)
def test_load_validates_every_value(section, key, value):
    snap = ms.context.snapshot()
    snap[section][key] = value
    before = state()
    with pytest.raises(ValueError):
        ms.context.load(snap)
    assert state() == before


def test_load_rejects_non_dicts():
    for bad in ([], "snapshot", None, 3):
        with pytest.raises(TypeError):
            ms.context.load(bad)


def test_load_of_a_partial_snapshot_resets_missing_keys_to_defaults():
    ms.set_context(max_call_depth=42, mode=ms.GRAPH_MODE)
    ms.context.load({"context": {"max_call_depth": 42}})
    assert ms.get_context("max_call_depth") == 42
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_load_keeps_stored_forms_and_does_not_reparse_them(tmp_path):
    # Paths are stored absolute; load must not re-create or re-resolve them.
    ms.set_context(save_graphs_path=str(tmp_path / "ir"))
    snap = ms.context.snapshot()
    (tmp_path / "ir").rmdir()
    ms.context.load(snap)
    assert ms.get_context("save_graphs_path") == str((tmp_path / "ir").resolve())
    assert not (tmp_path / "ir").exists()


def test_load_warns_for_nothing_it_restores_quietly():
    with recorded_warnings() as caught:
        ms.set_context(variable_memory_max_size="6GB")
    assert caught
    snap = ms.context.snapshot()
    with recorded_warnings() as caught:
        ms.context.load(snap)
    assert not of_category(caught, ms.ContextDeprecationWarning)
    assert ms.get_context("variable_memory_max_size") == "6 * 1024 * 1024 * 1024"


def test_snapshot_and_load_per_thread_key():
    ms.set_context(reserve_class_name_in_scope=False)
    snap = ms.context.snapshot()
    assert snap["context"]["reserve_class_name_in_scope"] is False
    ms.set_context(reserve_class_name_in_scope=True)
    ms.context.load(snap)
    assert ms.get_context("reserve_class_name_in_scope") is False


def test_offload_context_takes_and_gives_one_dict_and_says_it_has_no_effect():
    with pytest.warns(ms.MsrtWarning, match="'offload_param' is stored but has no effect"):
        ms.set_offload_context({"offload_param": "disk", "offload_cpu_size": "64GB"})
    got = ms.get_offload_context()
    assert got["offload_param"] == "disk" and got["offload_cpu_size"] == "64GB" and got["hbm_ratio"] == 1.0
    before = ms.get_offload_context()
    with pytest.raises(ValueError, match="'bad' is not an attribute of offload_config"):
        ms.set_offload_context({"hbm_ratio": 0.5, "bad": 1})
    assert ms.get_offload_context() == before  # nothing half-applied
    with pytest.raises(TypeError, match="'offload_config' must be dict, but got list"):
        ms.set_offload_context([("offload_param", "cpu")])


def test_algo_parameters_are_set_read_and_reset_and_say_they_have_no_effect():
    from msrt.parallel import get_algo_parameters, reset_algo_parameters, set_algo_parameters

    assert set_algo_parameters is ms.set_algo_parameters
    with pytest.warns(ms.MsrtWarning, match="'fully_use_devices' is stored but has no effect"):
        set_algo_parameters(fully_use_devices=False, tensor_slice_align_size=64)
    assert get_algo_parameters("fully_use_devices") is False and get_algo_parameters("tensor_slice_align_size") == 64
    with pytest.raises(ValueError, match="no_such is not recognized"):
        set_algo_parameters(elementwise_op_strategy_follow=True, no_such=1)
    assert get_algo_parameters("elementwise_op_strategy_follow") is False  # nothing half-applied
    reset_algo_parameters()
    assert get_algo_parameters("fully_use_devices") is True and get_algo_parameters("tensor_slice_align_size") == 16
