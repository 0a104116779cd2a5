"""set_context / get_context: the spec's examples (§2.7), stored forms (§6),
ordering and atomicity (§2.1), and the public names of the module."""
import os
import threading
import time

import pytest

import msrt as ms
from ctxutil import assert_tokens, message, of_category, quiet_get, recorded_warnings, state

GB = " * 1024 * 1024 * 1024"


# ---------------------------------------------------------------------------
# Public names.


def test_mode_constants():
    assert (ms.GRAPH_MODE, ms.PYNATIVE_MODE) == (0, 1)
    assert (ms.context.GRAPH_MODE, ms.context.PYNATIVE_MODE) == (0, 1)
    assert (ms.context.STRICT, ms.context.COMPATIBLE, ms.context.LAX) == (0, 1, 2)
    assert (ms.context.RELEASE, ms.context.DEBUG) == (0, 1)


def test_parallel_mode_class():
    for pm in (ms.ParallelMode, ms.context.ParallelMode):
        assert pm.STAND_ALONE == "stand_alone"
        assert pm.DATA_PARALLEL == "data_parallel"
        assert pm.HYBRID_PARALLEL == "hybrid_parallel"
        assert pm.SEMI_AUTO_PARALLEL == "semi_auto_parallel"
        assert pm.AUTO_PARALLEL == "auto_parallel"
        assert pm.MODE_LIST == [
            "stand_alone", "data_parallel", "hybrid_parallel", "semi_auto_parallel", "auto_parallel",
        ]
    assert ms.ParallelMode is ms.context.ParallelMode


@pytest.mark.parametrize(
    "name",
    [
        "set_context", "get_context",
        "set_auto_parallel_context", "get_auto_parallel_context", "reset_auto_parallel_context",
        "set_ps_context", "get_ps_context", "reset_ps_context",
    ],
)
def test_functions_exist_under_ms_and_ms_context(name):
    assert callable(getattr(ms, name))
    assert getattr(ms, name) is getattr(ms.context, name)
    assert name in ms.__all__ and name in ms.context.__all__


def test_warning_classes():
    assert issubclass(ms.DeviceNotApplicableWarning, ms.MsrtWarning)
    assert issubclass(ms.ContextDeprecationWarning, ms.MsrtWarning)
    assert issubclass(ms.ContextDeprecationWarning, FutureWarning)
    assert issubclass(ms.MsrtWarning, UserWarning)


def test_set_context_takes_keywords_only():
    with pytest.raises(TypeError):
        ms.set_context(0)
    ms.set_context()  # nothing to do
    with pytest.raises(TypeError):
        ms.get_context()


# ---------------------------------------------------------------------------
# §2.7 examples.


def test_mode_examples():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(mode=2)
    assert_tokens(message(excinfo), ["'mode'", "context.GRAPH_MODE (0)", "context.PYNATIVE_MODE (1)", "but got 2"])
    with pytest.raises(TypeError) as excinfo:
        ms.set_context(mode="1")
    assert_tokens(message(excinfo), ["'mode'", "int", "str"])
    ms.set_context(mode=True)
    assert ms.get_context("mode") == 1 and type(ms.get_context("mode")) is int
    ms.set_context(mode=ms.GRAPH_MODE)
    assert ms.get_context("mode") == ms.GRAPH_MODE


def test_device_target_examples():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(device_target="gpu")
    assert_tokens(message(excinfo), ["'device_target'", "'gpu'", "['CPU', 'GPU', 'Ascend', 'Davinci']"])
    with recorded_warnings() as caught:
        ms.set_context(device_target="Davinci")
    assert ms.get_context("device_target") == "Ascend"
    found = of_category(caught, ms.ContextDeprecationWarning)
    assert len(found) == 1 and "Davinci" in found[0] and "Ascend" in found[0]
    for target in ("CPU", "GPU", "Ascend"):
        ms.set_context(device_target=target)
        assert ms.get_context("device_target") == target


@pytest.mark.parametrize("device_id", [4096, -1, 10**6])
def test_device_id_out_of_range(device_id):
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(device_id=device_id)
    assert_tokens(message(excinfo), ["'device_id'", "[0, 4095]", str(device_id)])


def test_huge_int_is_refused_not_truncated():
    with pytest.raises((ValueError, TypeError)) as excinfo:
        ms.set_context(device_id=2**70)
    assert_tokens(message(excinfo), ["'device_id'", str(2**70)])
    assert ms.get_context("device_id") == 0


def test_huge_int_is_a_range_error():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(device_id=2**70)
    assert "out of the range of a 64-bit integer" in message(excinfo)


def test_max_device_memory_examples():
    ms.set_context(max_device_memory="3.5GB")
    value = ms.get_context("max_device_memory")
    assert value == 3.5 and type(value) is float
    for bad in ("0GB", "0.GB", "3.5gb", "5GBx"):
        with pytest.raises(ValueError) as excinfo:
            ms.set_context(max_device_memory=bad)
        assert_tokens(message(excinfo), ["'max_device_memory'", repr(bad)])
    assert ms.get_context("max_device_memory") == 3.5


def test_gb_rule_regex_details():
    for text, expected in (("1GB", 1.0), ("10GB", 10.0), ("1.GB", 1.0), ("0.5GB", 0.5), ("12.25GB", 12.25)):
        ms.set_context(max_device_memory=text)
        assert ms.get_context("max_device_memory") == expected
    for text in ("05GB", ".5GB", "1 GB", "1gb", "1.5.5GB", "GB", "1024MB", "5GB ", " 5GB", "+5GB", "-5GB"):
        with pytest.raises(ValueError):
            ms.set_context(max_device_memory=text)
    assert ms.get_context("max_device_memory") == 12.25


def test_mempool_block_size_minimum():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(mempool_block_size="0.5GB")
    assert_tokens(message(excinfo), ["'mempool_block_size'", '"1GB"'])
    ms.set_context(mempool_block_size="1GB")
    assert ms.get_context("mempool_block_size") == 1.0
    ms.set_context(mode=ms.PYNATIVE_MODE, mempool_block_size="2GB")
    assert ms.get_context("mempool_block_size") == 2.0


def test_variable_memory_max_size_examples():
    with recorded_warnings() as caught:
        ms.set_context(variable_memory_max_size="6GB")
    assert ms.get_context("variable_memory_max_size") == "6" + GB
    found = of_category(caught, ms.ContextDeprecationWarning)
    assert len(found) == 1 and "max_device_memory" in found[0]
    # The graph share MindSpore derives from it: (31 - N) GB.
    assert ms.context.snapshot()["context"]["_graph_memory_max_size"] == "25" + GB
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(variable_memory_max_size="32GB")
    assert_tokens(message(excinfo), ["'variable_memory_max_size'", '"31GB"', "'32GB'"])
    with recorded_warnings():
        ms.set_context(variable_memory_max_size="31GB")
    assert ms.get_context("variable_memory_max_size") == "31" + GB
    assert ms.context.snapshot()["context"]["_graph_memory_max_size"] == "0" + GB
    with pytest.raises(ValueError):
        ms.set_context(variable_memory_max_size="3.5GB")  # int() of "3.5" fails in MindSpore
    assert ms.get_context("variable_memory_max_size") == "31" + GB


def test_variable_memory_max_size_default_is_unset_string():
    assert quiet_get("context", "variable_memory_max_size") == "0"
    assert ms.context.options("context")[
        [o["name"] for o in ms.context.options("context")].index("variable_memory_max_size")
    ]["default"] == "0"


def test_save_graphs_examples():
    ms.set_context(save_graphs=True)
    assert ms.get_context("save_graphs") == 2 and type(ms.get_context("save_graphs")) is int
    ms.set_context(save_graphs=False)
    assert ms.get_context("save_graphs") == 0
    ms.set_context(save_graphs=3)
    assert ms.get_context("save_graphs") == 3
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(save_graphs=4)
    assert_tokens(message(excinfo), ["'save_graphs'", "0-3", "4"])
    with pytest.raises(TypeError):
        ms.set_context(save_graphs="2")
    assert ms.get_context("save_graphs") == 3


def test_save_graphs_path_creates_an_absolute_directory(in_tmp):
    ms.set_context(save_graphs_path="./ir")
    expected = os.path.realpath(in_tmp / "ir")
    assert os.path.isdir(expected)
    assert ms.get_context("save_graphs_path") == expected
    ms.set_context(save_graphs_path="deep/er/path")
    assert os.path.isdir(in_tmp / "deep" / "er" / "path")
    assert ms.get_context("save_graphs_path") == os.path.realpath(in_tmp / "deep/er/path")


def test_save_graphs_path_bad_values(in_tmp):
    (in_tmp / "a_file").write_text("x")
    for bad in ("", "  ", None, "a_file", "a_file/sub"):
        with pytest.raises(ValueError) as excinfo:
            ms.set_context(save_graphs_path=bad)
        assert "'save_graphs_path'" in message(excinfo)
    with pytest.raises(TypeError):
        ms.set_context(save_graphs_path=3)
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(save_graphs_path="x\0y")
    assert "NUL" in message(excinfo)
    assert ms.get_context("save_graphs_path") == "."


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_save_graphs_path_without_permission(in_tmp):
    locked = in_tmp / "locked"
    locked.mkdir(mode=0o500)
    try:
        with pytest.raises(ValueError) as excinfo:
            ms.set_context(save_graphs_path=str(locked / "ir"))
        assert_tokens(message(excinfo), ["'save_graphs_path'", "No write permission"])
    finally:
        locked.chmod(0o700)


def test_unknown_keys():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(foo=1)
    assert message(excinfo).startswith("For 'context.set_context', the keyword argument foo is not recognized!")
    with pytest.raises(ValueError) as excinfo:
        ms.get_context("foo")
    assert message(excinfo).startswith("For 'context.get_context', the argument foo is not recognized!")
    for hidden in ("_graph_memory_max_size",):
        with pytest.raises(ValueError) as excinfo:
            ms.get_context(hidden)
        assert "is not recognized" in message(excinfo)
        with pytest.raises(ValueError):
            ms.set_context(**{hidden: "0"})


@pytest.mark.parametrize(
    "typo,closest",
    [("mdoe", "mode"), ("device_idd", "device_id"), ("save_graph", "save_graphs"),
     ("max_device_mem", "max_device_memory")],
)
def test_unknown_key_suggests_the_closest_keys(typo, closest):
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(**{typo: 1})
    text = message(excinfo)
    assert "not recognized" in text and "Did you mean" in text
    assert f"'{closest}'" in text
    with pytest.raises(ValueError) as excinfo:
        ms.get_context(typo)
    assert f"'{closest}'" in message(excinfo)


def test_unknown_key_without_a_close_key_has_no_suggestion():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(zzzzzzzzzzzz=1)
    assert "Did you mean" not in message(excinfo)


def test_unknown_key_fails_the_whole_call_first():
    before = state()
    with pytest.raises(ValueError):
        ms.set_context(mode=ms.GRAPH_MODE, device_target="Ascend", foo=1)
    assert state() == before


def test_enable_sparse_warns_only_in_r23():
    with recorded_warnings() as caught:
        ms.set_context(enable_sparse=True)
    found = of_category(caught, ms.ContextDeprecationWarning)
    assert len(found) == 1 and "'enable_sparse'" in found[0]
    assert ms.get_context("enable_sparse") is False


@pytest.mark.parametrize(
    "key",
    ["precision_mode", "jit_compile", "atomic_clean_policy", "matmul_allow_hf32", "conv_allow_hf32",
     "op_precision_mode", "host_scheduling_max_threshold", "ge_options", "op_debug_option"],
)
def test_moved_keys_point_to_ascend_config(key):
    before = state()
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(mode=ms.GRAPH_MODE, **{key: "force_fp16"})
    assert_tokens(message(excinfo), [f"'{key}'", "through parameter ascend_config"])
    assert state() == before


def test_ascend_config_examples(tmp_path):
    ms.set_context(device_target="Ascend")
    with pytest.raises(ValueError):
        ms.set_context(ascend_config={"precision_mode": "x"})
    with pytest.raises(ValueError):
        ms.set_context(ascend_config={"bad": 1})
    with pytest.raises(TypeError):
        ms.set_context(ascend_config={"op_precision_mode": 1})
    ms.set_context(ascend_config={"precision_mode": "force_fp16"})
    ms.set_context(ascend_config={"jit_compile": True})
    config = ms.get_context("ascend_config")
    # Keys merge over the current value.
    assert config["precision_mode"] == "force_fp16" and config["jit_compile"] is True
    # Processing stops at the first error and the call changes nothing.
    with pytest.raises(ValueError):
        ms.set_context(ascend_config={"precision_mode": "force_fp32", "exception_dump": "9"})
    assert ms.get_context("ascend_config")["precision_mode"] == "force_fp16"


def test_ascend_config_speed_up_file(tmp_path):
    ms.set_context(device_target="Ascend")
    good = tmp_path / "speed.json"
    good.write_text('{"recompute_comm_overlap": true, "compute_communicate_fusion_level": 3}')
    ms.set_context(ascend_config={"parallel_speed_up_json_path": str(good)})
    assert ms.get_context("ascend_config")["parallel_speed_up_json_path"] == os.path.realpath(good)
    bad = tmp_path / "bad.json"
    for text, token in (('{"compute_communicate_fusion_level": 4}', "[0, 3]"),
                        ('{"enable_task_opt": 1}', "true or false"),
                        ("[1]", "JSON object"),
                        ("not json", "valid JSON")):
        bad.write_text(text)
        with pytest.raises(ValueError) as excinfo:
            ms.set_context(ascend_config={"parallel_speed_up_json_path": str(bad)})
        assert token in message(excinfo)
    ms.set_context(ascend_config={"parallel_speed_up_json_path": None})
    assert ms.get_context("ascend_config")["parallel_speed_up_json_path"] == ""


def test_gpu_config_documented_algorithm_name_is_accepted():
    ms.set_context(device_target="GPU", gpu_config={"conv_fprop_algo": "implicit_precomp_gemm"})
    assert ms.get_context("gpu_config")["conv_fprop_algo"] == "precomp_gemm"
    ms.set_context(gpu_config={"conv_fprop_algo": "winograd_nonfused"})
    assert ms.get_context("gpu_config")["conv_fprop_algo"] == "winograd_nonfused"


def test_print_file_path_on_cpu_is_stored_because_msrt_implements_it(in_tmp):
    ms.set_context(device_target="CPU")
    with recorded_warnings() as caught:
        ms.set_context(print_file_path="p.pb")
    assert not of_category(caught, ms.DeviceNotApplicableWarning)
    assert ms.get_context("print_file_path") == os.path.realpath(in_tmp / "p.pb")
    opt = {o["name"]: o for o in ms.context.options("context")}["print_file_path"]
    assert opt["mindspore_devices"] == ["Ascend"]
    assert opt["devices"] == ["CPU", "GPU", "Ascend"]


def test_print_file_path_existing_file_gets_a_timestamp(in_tmp):
    (in_tmp / "out.pb").write_text("old")
    low = int(time.time())
    ms.set_context(print_file_path="out.pb")
    high = int(time.time())
    stored = ms.get_context("print_file_path")
    base = os.path.realpath(in_tmp / "out.pb")
    assert stored.startswith(base + ".")
    assert low <= int(stored[len(base) + 1:]) <= high
    assert (in_tmp / "out.pb").read_text() == "old"
    with pytest.raises(OSError) as excinfo:
        ms.set_context(print_file_path=str(in_tmp))
    assert_tokens(message(excinfo), ["'print_file_path'", "directory"])
    ms.set_context(print_file_path=None)
    assert ms.get_context("print_file_path") == ""


def test_memory_optimize_level_reads_back_as_int():
    ms.set_context(memory_optimize_level="O1")
    assert ms.get_context("memory_optimize_level") == 1
    assert type(ms.get_context("memory_optimize_level")) is int
    ms.set_context(memory_optimize_level="O0")
    assert ms.get_context("memory_optimize_level") == 0


def test_memory_offload_reads_back_as_bool():
    ms.set_context(device_target="GPU", memory_offload="ON")
    assert ms.get_context("memory_offload") is True
    ms.set_context(memory_offload="OFF")
    assert ms.get_context("memory_offload") is False


def test_deterministic_is_case_sensitive():
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(deterministic="on")
    assert_tokens(message(excinfo), ["'deterministic'", "'on'", "['ON', 'OFF']"])
    ms.set_context(deterministic="ON")
    assert ms.get_context("deterministic") == "ON"


@pytest.mark.parametrize(
    "key,value,token",
    [("runtime_num_threads", -1, "greater than or equal to 0"),
     ("op_timeout", -1, "greater than or equal to 0"),
     ("max_call_depth", 0, "greater than 0"),
     ("inter_op_parallel_num", -1, "greater than or equal to 0")],
)
def test_count_limits(key, value, token):
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(**{key: value})
    assert_tokens(message(excinfo), [f"'{key}'", token, str(value)])


def test_int_keys_accept_bool_as_python_does():
    ms.set_context(max_call_depth=True)
    assert ms.get_context("max_call_depth") == 1


def test_bool_keys_refuse_ints():
    with pytest.raises(TypeError) as excinfo:
        ms.set_context(precompile_only=1)
    assert_tokens(message(excinfo), ["'precompile_only'", "bool", "int"])
    with pytest.raises(TypeError):
        ms.set_context(reserve_class_name_in_scope=0)


def test_floats_are_not_ints():
    with pytest.raises(TypeError) as excinfo:
        ms.set_context(device_id=1.0)
    assert_tokens(message(excinfo), ["'device_id'", "int", "float"])


def test_enable_compile_cache_none_means_false():
    ms.set_context(enable_compile_cache=True)
    ms.set_context(enable_compile_cache=None)
    assert ms.get_context("enable_compile_cache") is False


def test_env_config_path_is_checked_and_stored_absolute(in_tmp):
    (in_tmp / "cfg.json").write_text('{"rdr": {"enable": true, "mode": 1, "path": "/tmp/rdr"}}')
    ms.set_context(env_config_path="cfg.json")
    assert ms.get_context("env_config_path") == os.path.realpath(in_tmp / "cfg.json")
    (in_tmp / "rel.json").write_text('{"rdr": {"path": "relative/dir"}}')
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(env_config_path="rel.json")
    assert "rdr.path" in message(excinfo)
    with pytest.raises(ValueError):
        ms.set_context(env_config_path=str(in_tmp))  # a directory
    assert ms.get_context("env_config_path") == os.path.realpath(in_tmp / "cfg.json")


def test_graph_kernel_flags_warn_on_bad_flags_but_are_stored():
    with recorded_warnings() as caught:
        ms.set_context(mode=ms.GRAPH_MODE, graph_kernel_flags="--opt_level=2 bogus")
    assert ms.get_context("graph_kernel_flags") == "--opt_level=2 bogus"
    assert any("bogus" in str(w.message) for w in caught)


def test_support_binary_message():
    with pytest.raises(TypeError) as excinfo:
        ms.set_context(support_binary="yes")
    assert_tokens(message(excinfo), ["'support_binary'", "bool", "str"])


# ---------------------------------------------------------------------------
# Ordering and atomicity.


def test_device_target_is_applied_first_whatever_its_position():
    ms.set_context(device_target="CPU")
    with recorded_warnings() as caught:
        ms.set_context(memory_offload="ON", disable_format_transform=True, device_target="GPU")
    assert not of_category(caught, ms.DeviceNotApplicableWarning)
    assert ms.get_context("memory_offload") is True
    assert ms.get_context("disable_format_transform") is True


def test_leaving_a_device_drops_its_keys_in_the_same_call():
    ms.set_context(device_target="GPU")
    with recorded_warnings() as caught:
        ms.set_context(gpu_config={"matmul_allow_tf32": True}, device_target="CPU")
    found = of_category(caught, ms.DeviceNotApplicableWarning)
    assert len(found) == 1 and "'gpu_config'" in found[0] and "'CPU'" in found[0]
    assert quiet_get("context", "gpu_config")["matmul_allow_tf32"] is False
    assert ms.get_context("device_target") == "CPU"


@pytest.mark.parametrize(
    "bad",
    [{"device_id": 5000}, {"device_id": "x"}, {"max_device_memory": "0GB"}, {"save_graphs": 9}],
)
def test_a_failing_key_leaves_everything_unchanged(bad):
    before = state()
    with pytest.raises((ValueError, TypeError)):
        ms.set_context(mode=ms.GRAPH_MODE, device_target="Ascend", precompile_only=True, **bad)
    assert state() == before
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


def test_a_failing_key_after_a_created_directory_changes_nothing_stored(in_tmp):
    before = state()
    with pytest.raises(ValueError):
        ms.set_context(save_graphs_path="made", device_id=-5)
    assert state() == before


def test_get_on_wrong_device_warns_but_returns_the_value():
    ms.set_context(device_target="GPU", gpu_config={"conv_allow_tf32": False})
    ms.set_context(device_target="CPU")
    with recorded_warnings() as caught:
        config = ms.get_context("gpu_config")
    assert config["conv_allow_tf32"] is False
    found = of_category(caught, ms.DeviceNotApplicableWarning)
    assert len(found) == 1 and "'gpu_config'" in found[0] and "'CPU'" in found[0]


def test_mode_and_parallel_mode_interplay():
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_auto_parallel_context(parallel_mode="semi_auto_parallel")
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert_tokens(message(excinfo), ["'mode'", "semi_auto_parallel"])
    assert ms.get_context("mode") == ms.GRAPH_MODE
    ms.reset_auto_parallel_context()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for allowed in ("stand_alone", "data_parallel", "auto_parallel"):
        ms.set_auto_parallel_context(parallel_mode=allowed)
    for refused in ("semi_auto_parallel", "hybrid_parallel"):
        with pytest.raises(ValueError) as excinfo:
            ms.set_auto_parallel_context(parallel_mode=refused)
        assert "GRAPH_MODE" in message(excinfo)


def test_reserve_class_name_in_scope_is_per_thread():
    ms.set_context(reserve_class_name_in_scope=False)
    assert ms.get_context("reserve_class_name_in_scope") is False
    seen = {}

    def worker():
        seen["initial"] = ms.get_context("reserve_class_name_in_scope")
        ms.set_context(reserve_class_name_in_scope=False)
        seen["after_set"] = ms.get_context("reserve_class_name_in_scope")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == {"initial": True, "after_set": False}
    ms.set_context(reserve_class_name_in_scope=True)

    def second():
        seen["second"] = ms.get_context("reserve_class_name_in_scope")

    ms.set_context(reserve_class_name_in_scope=False)
    thread = threading.Thread(target=second)
    thread.start()
    thread.join()
    assert seen["second"] is True
    assert ms.get_context("reserve_class_name_in_scope") is False


def test_other_keys_are_shared_between_threads():
    done = threading.Event()

    def worker():
        ms.set_context(max_call_depth=4321)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert done.is_set()
    assert ms.get_context("max_call_depth") == 4321


def test_concurrent_setters_keep_a_consistent_state():
    errors = []

    def worker(n):
        try:
            for i in range(200):
                ms.set_context(max_call_depth=1 + n, op_timeout=1 + n)
                a, b = ms.get_context("max_call_depth"), ms.get_context("op_timeout")
                assert a >= 1 and b >= 1
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert ms.get_context("max_call_depth") == ms.get_context("op_timeout")
