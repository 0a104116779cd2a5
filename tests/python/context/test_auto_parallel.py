"""set_auto_parallel_context / get_auto_parallel_context /
reset_auto_parallel_context (spec §3, §5.4, §6)."""
import os

import pytest

import msrt as ms
from ctxutil import assert_tokens, message, of_category, options, quiet_get, recorded_warnings, state

SET, GET, RESET = ms.set_auto_parallel_context, ms.get_auto_parallel_context, ms.reset_auto_parallel_context

COMM_FUSION_DEFAULT = {
    "openstate": True,
    "allreduce": {"mode": "auto", "config": None},
    "allgather": {"mode": "auto", "config": None},
    "reducescatter": {"mode": "auto", "config": None},
}

# The C++ Reset list of spec §3.2 (r2.x) as get_* reads it.
RESET_DEFAULTS = {
    "device_num": 1,
    "global_rank": 0,
    "gradients_mean": False,
    "gradient_fp32_sync": True,
    "loss_repeated_mean": True,
    "parallel_mode": "stand_alone",
    "search_mode": "dynamic_programming",
    "sharding_propagation": False,
    "parameter_broadcast": False,
    "strategy_ckpt_load_file": "",
    "strategy_ckpt_save_file": "",
    "strategy_ckpt_config": {"load_file": "", "save_file": "", "only_trainable_params": True},
    "full_batch": False,
    "dataset_strategy": "data_parallel",
    "enable_parallel_optimizer": False,
    "parallel_optimizer_config": {
        "gradient_accumulation_shard": True,
        "parallel_optimizer_threshold": -1,
        "optimizer_weight_shard_size": -1,
    },
    "optimizer_weight_shard_size": -1,
    "optimizer_weight_shard_aggregated_save": False,
    "all_reduce_fusion_config": [],
    "comm_fusion": COMM_FUSION_DEFAULT,
    "enable_alltoall": False,
    "communi_parallel_mode": "all_group_parallel",
    "pipeline_stages": 1,
    "pipeline_config": {"pipeline_interleave": False, "pipeline_scheduler": "1f1b"},
    "grad_accumulation_step": 1,
}

NON_DEFAULTS = {
    "device_num": 8,
    "global_rank": 3,
    "gradients_mean": True,
    "gradient_fp32_sync": False,
    "loss_repeated_mean": False,
    "parallel_mode": "semi_auto_parallel",
    "search_mode": "recursive_programming",
    "parameter_broadcast": True,
    "strategy_ckpt_load_file": "load.ckpt",
    "full_batch": True,
    "enable_parallel_optimizer": True,
    "parallel_optimizer_config": {"gradient_accumulation_shard": False, "parallel_optimizer_threshold": 8},
    "optimizer_weight_shard_size": 4,
    "optimizer_weight_shard_aggregated_save": True,
    "all_reduce_fusion_config": [2, 7],
    "enable_alltoall": True,
    "communi_parallel_mode": "no_group_parallel",
    "pipeline_stages": 2,
    "pipeline_config": {"pipeline_scheduler": "gpipe"},
    "grad_accumulation_step": 4,
}


def test_reset_restores_the_listed_defaults(tmp_path):
    assert set(RESET_DEFAULTS) | {"group_ckpt_save_file"} == set(options("auto_parallel_context"))
    for key, value in RESET_DEFAULTS.items():
        assert options("auto_parallel_context")[key]["default"] == value, key
    ms.set_context(mode=ms.GRAPH_MODE)
    with recorded_warnings():
        SET(**NON_DEFAULTS, sharding_propagation=True, strategy_ckpt_save_file=str(tmp_path / "s.ckpt"),
            group_ckpt_save_file=str(tmp_path / "g.ckpt"))
        SET(comm_fusion={"allgather": {"mode": "size", "config": 16}}, dataset_strategy=((1, 2),))
    for key, value in RESET_DEFAULTS.items():
        if key in ("dataset_strategy", "full_batch"):
            continue
        assert GET(key) != value, f"{key} was not changed by the test set-up"
    RESET()
    for key, value in RESET_DEFAULTS.items():
        if key == "dataset_strategy":
            continue  # see test_dataset_strategy_form_flag_survives_reset
        assert GET(key) == value, key
    # Kept by a reset (spec §3.2: not in the C++ Reset list).
    assert GET("group_ckpt_save_file") == str(tmp_path / "g.ckpt")


def test_reset_makes_sources_default_again():
    SET(device_num=4)
    assert ms.context.explain("device_num")["source"] == "api"
    RESET()
    assert ms.context.explain("device_num")["source"] == "default"


def test_reset_does_not_touch_the_other_contexts():
    ms.set_context(max_call_depth=77)
    ms.set_ps_context(worker_num=5)
    RESET()
    assert ms.get_context("max_call_depth") == 77
    assert ms.get_ps_context("worker_num") == 5


# ---------------------------------------------------------------------------
# dataset_strategy and full_batch.


def test_dataset_strategy_string_form_is_the_full_batch_flag():
    assert GET("dataset_strategy") == "data_parallel"
    SET(dataset_strategy="full_batch")
    assert GET("full_batch") is True and GET("dataset_strategy") == "full_batch"
    SET(full_batch=False)
    assert GET("dataset_strategy") == "data_parallel"
    SET(full_batch=True)
    assert GET("dataset_strategy") == "full_batch"
    SET(dataset_strategy="data_parallel")
    assert GET("full_batch") is False


def test_dataset_strategy_tuple_reads_as_list_of_lists():
    ms.set_context(mode=ms.GRAPH_MODE)
    SET(dataset_strategy=((1, 8), (1, 8)))
    assert GET("dataset_strategy") == [[1, 8], [1, 8]]
    SET(dataset_strategy="full_batch")
    assert GET("dataset_strategy") == "full_batch"


def test_dataset_strategy_tuple_needs_graph_mode():
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    before = state()
    with pytest.raises(ValueError) as excinfo:
        SET(dataset_strategy=((1, 8),))
    assert_tokens(message(excinfo), ["'dataset_strategy'", "PYNATIVE_MODE"])
    assert state() == before
    ms.set_context(mode=ms.GRAPH_MODE)
    SET(dataset_strategy=((1, 8),))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(ValueError) as excinfo:
        GET("dataset_strategy")
    assert "PYNATIVE_MODE" in message(excinfo)


def test_dataset_strategy_form_flag_survives_reset():
    ms.set_context(mode=ms.GRAPH_MODE)
    SET(dataset_strategy=((2, 4),))
    RESET()
    assert GET("dataset_strategy") == []  # tuple form kept, strategy cleared (spec §3.4)
    SET(dataset_strategy="data_parallel")
    RESET()
    assert GET("dataset_strategy") == "data_parallel"


def test_dataset_strategy_element_types():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(TypeError):
        SET(dataset_strategy=[(1, 8)])
    with pytest.raises(TypeError):
        SET(dataset_strategy=((1, 8.0),))
    with pytest.raises(ValueError):
        SET(dataset_strategy="Full_Batch")


# ---------------------------------------------------------------------------
# comm_fusion and all_reduce_fusion_config (spec §3.3, §3.4).


def test_comm_fusion_default_record():
    assert GET("comm_fusion") == COMM_FUSION_DEFAULT


def test_comm_fusion_records_each_entry_over_the_defaults():
    SET(comm_fusion={"allreduce": {"mode": "size", "config": 32}})
    SET(comm_fusion={"reducescatter": {"mode": "auto", "config": 8}})
    assert GET("comm_fusion") == {
        "openstate": True,
        "allreduce": {"mode": "size", "config": 32},
        "allgather": {"mode": "auto", "config": None},
        "reducescatter": {"mode": "auto", "config": 8},
    }
    RESET()
    assert GET("comm_fusion") == COMM_FUSION_DEFAULT


def test_comm_fusion_index_mode_is_all_reduce_fusion_config():
    SET(comm_fusion={"allreduce": {"mode": "index", "config": [2, 10]}})
    assert GET("all_reduce_fusion_config") == [2, 10]
    assert GET("comm_fusion")["allreduce"] == {"mode": "index", "config": [2, 10]}
    with pytest.raises(ValueError) as excinfo:
        SET(comm_fusion={"allreduce": {"mode": "index", "config": [3, 1]}})
    assert "ascending" in message(excinfo)
    with pytest.raises(ValueError):
        SET(comm_fusion={"allreduce": {"mode": "index", "config": []}})
    assert GET("all_reduce_fusion_config") == [2, 10]


@pytest.mark.parametrize(
    "config,error,tokens",
    [
        ({"allreduce": {"mode": "bogus", "config": 1}}, KeyError, ["comm_fusion['allreduce']", "'bogus'"]),
        ({"allreduce": {"config": 1}}, KeyError, ["comm_fusion['allreduce']", "'mode'"]),
        ({"allgather": {"mode": "size"}}, KeyError, ["comm_fusion['allgather']", "'config'"]),
        ({"reducescatter": {"mode": "index", "config": [1]}}, KeyError, ["'auto' or 'size'"]),
        ({"broadcast": {"mode": "auto", "config": 1}}, KeyError, ["comm fusion type", "'broadcast'"]),
        ({"allreduce": {"mode": "size", "config": -1}}, ValueError, ["comm_fusion['allreduce']['config']", "-1"]),
        ({"allreduce": {"mode": "size", "config": "8"}}, TypeError, ["comm_fusion['allreduce']['config']", "str"]),
        ({"allreduce": [1]}, TypeError, ["comm_fusion['allreduce']", "dict"]),
        ({"openstate": "no"}, TypeError, ["comm_fusion['openstate']", "bool"]),
        ([("allreduce", {})], TypeError, ["'comm_fusion'", "dict"]),
    ],
)
def test_comm_fusion_errors(config, error, tokens):
    before = state()
    with pytest.raises(error) as excinfo:
        SET(comm_fusion=config)
    assert type(excinfo.value) is error
    assert_tokens(message(excinfo), tokens)
    assert state() == before


def test_comm_fusion_zero_size_is_allowed():
    SET(comm_fusion={"allreduce": {"mode": "size", "config": 0}})
    assert GET("comm_fusion")["allreduce"] == {"mode": "size", "config": 0}


def test_comm_fusion_openstate_false_makes_later_entries_no_ops():
    SET(comm_fusion={"openstate": False})
    assert GET("comm_fusion")["openstate"] is False
    # Fusion is off: entries are skipped without checks (spec §3.3).
    SET(comm_fusion={"allreduce": {"mode": "bogus", "config": 1}})
    SET(comm_fusion={"allgather": {"mode": "index", "config": [1]}})
    assert GET("all_reduce_fusion_config") == []
    # An unknown collective is still an error.
    with pytest.raises(KeyError):
        SET(comm_fusion={"broadcast": {}})


def test_all_reduce_fusion_config_is_kept_per_device_group():
    ms.set_context(device_target="GPU")
    SET(all_reduce_fusion_config=[1, 5])
    assert GET("all_reduce_fusion_config") == [1, 5]
    ms.set_context(device_target="Ascend")
    assert GET("all_reduce_fusion_config") == []
    SET(all_reduce_fusion_config=[3])
    assert GET("all_reduce_fusion_config") == [3]
    ms.set_context(device_target="CPU")  # CPU and GPU share the nccl world group
    assert GET("all_reduce_fusion_config") == [1, 5]
    RESET()
    assert GET("all_reduce_fusion_config") == []


@pytest.mark.parametrize(
    "value,error,token",
    [([], ValueError, "empty"), ([3, 1], ValueError, "ascending"), ([1, 1], ValueError, "duplicates"),
     ([1, True], TypeError, "bool"), ([1, 2.0], TypeError, "float"), ((1, 2), TypeError, "tuple"),
     (5, TypeError, "int")],
)
def test_all_reduce_fusion_config_errors(value, error, token):
    with pytest.raises(error) as excinfo:
        SET(all_reduce_fusion_config=value)
    assert_tokens(message(excinfo), ["'all_reduce_fusion_config'", token])


# ---------------------------------------------------------------------------
# Modes, search, strategy files, optimizer.


def test_parallel_mode_accepts_mode_list_only():
    ms.set_context(mode=ms.GRAPH_MODE)
    for mode in ms.ParallelMode.MODE_LIST:
        SET(parallel_mode=mode)
        assert GET("parallel_mode") == mode
    with pytest.raises(ValueError) as excinfo:
        SET(parallel_mode="Data_Parallel")
    assert_tokens(message(excinfo), ["'parallel_mode'", "'Data_Parallel'", *map(repr, ms.ParallelMode.MODE_LIST)])


def test_search_mode_alias_and_sharding_propagation():
    with recorded_warnings() as caught:
        SET(auto_parallel_search_mode="recursive_programming")
    assert GET("search_mode") == "recursive_programming"
    assert of_category(caught, ms.ContextDeprecationWarning)
    with recorded_warnings() as caught:
        assert GET("auto_parallel_search_mode") == "recursive_programming"
    assert of_category(caught, ms.ContextDeprecationWarning)
    with recorded_warnings() as caught:
        SET(sharding_propagation=True)
    assert GET("sharding_propagation") is True
    assert GET("search_mode") == "sharding_propagation"
    found = of_category(caught, ms.ContextDeprecationWarning)
    assert len(found) == 1 and "search_mode" in found[0]


def test_mirror_mean_is_gradients_mean():
    with recorded_warnings():
        SET(mirror_mean=True, cast_before_mirror=False)
    assert GET("gradients_mean") is True
    assert GET("gradient_fp32_sync") is False


def test_strategy_ckpt_config_shares_its_files_with_the_file_keys(tmp_path):
    SET(strategy_ckpt_config={"load_file": "a.ckpt", "save_file": str(tmp_path / "b.ckpt")})
    assert GET("strategy_ckpt_load_file") == "a.ckpt"
    assert GET("strategy_ckpt_save_file") == str(tmp_path / "b.ckpt")
    SET(strategy_ckpt_load_file="c.ckpt")  # last writer wins
    assert GET("strategy_ckpt_config") == {
        "load_file": "c.ckpt", "save_file": str(tmp_path / "b.ckpt"), "only_trainable_params": True,
    }
    SET(strategy_ckpt_config={"only_trainable_params": False})
    assert GET("strategy_ckpt_config")["only_trainable_params"] is False
    assert GET("strategy_ckpt_config")["load_file"] == "c.ckpt"


def test_strategy_save_file_creates_its_directory(tmp_path):
    target = tmp_path / "new" / "dir" / "s.ckpt"
    SET(strategy_ckpt_save_file=str(target))
    assert target.parent.is_dir()
    assert not target.exists()
    SET(group_ckpt_save_file=str(tmp_path / "grp" / "g.ckpt"))
    assert (tmp_path / "grp").is_dir()


def test_strategy_load_file_is_not_checked(tmp_path):
    missing = str(tmp_path / "nope" / "x.ckpt")
    SET(strategy_ckpt_load_file=missing)
    assert GET("strategy_ckpt_load_file") == missing
    assert not os.path.exists(tmp_path / "nope")


def test_optimizer_weight_shard_size_one_or_less_is_ignored_with_a_warning():
    for value in (1, 0, -3):
        with recorded_warnings() as caught:
            SET(optimizer_weight_shard_size=value)
        assert any("optimizer_weight_shard_size" in str(w.message) for w in caught)
        assert GET("optimizer_weight_shard_size") == -1
    SET(optimizer_weight_shard_size=2)
    assert GET("optimizer_weight_shard_size") == 2


def test_parallel_optimizer_config_merges_over_the_current_value():
    SET(parallel_optimizer_config={"gradient_accumulation_shard": False})
    SET(parallel_optimizer_config={"parallel_optimizer_threshold": 24})
    assert GET("parallel_optimizer_config") == {
        "gradient_accumulation_shard": False,
        "parallel_optimizer_threshold": 24,
        "optimizer_weight_shard_size": -1,
    }
    with pytest.raises(ValueError) as excinfo:
        SET(parallel_optimizer_config={"Unknown": 1})
    assert_tokens(message(excinfo), ["'Unknown'", "'gradient_accumulation_shard'"])


@pytest.mark.parametrize(
    "key,value,error",
    [("device_num", 0, ValueError), ("device_num", 4097, ValueError), ("global_rank", 4096, ValueError),
     ("global_rank", -1, ValueError), ("pipeline_stages", 0, ValueError), ("pipeline_stages", True, TypeError),
     ("pipeline_stages", 1.5, TypeError), ("grad_accumulation_step", 0, ValueError),
     ("gradients_mean", 1, TypeError), ("loss_repeated_mean", "True", TypeError),
     ("communi_parallel_mode", "x", ValueError), ("search_mode", "DP", ValueError)],
)
def test_auto_parallel_errors_name_the_key(key, value, error):
    before = state()
    with pytest.raises(error) as excinfo:
        # A valid key in the same call must not be stored either.
        SET(**{key: value, "enable_alltoall": True})
    text = message(excinfo)
    assert text.startswith("For 'context.set_auto_parallel_context', ")
    assert f"'{key}'" in text and repr(value) in text
    assert state() == before


def test_device_num_and_global_rank_bounds():
    SET(device_num=4096, global_rank=4095)
    assert (GET("device_num"), GET("global_rank")) == (4096, 4095)


def test_unknown_keys_use_mindspore_wording():
    with pytest.raises(ValueError) as excinfo:
        SET(device_nums=8)
    text = message(excinfo)
    assert text.startswith("Set context keyword device_nums is not recognized!")
    assert "'device_num'" in text
    with pytest.raises(ValueError) as excinfo:
        GET("device_nums")
    assert message(excinfo).startswith("Get context keyword device_nums is not recognized!")
    for hidden in ("_device_num_is_set", "_comm_fusion_record", "_dataset_strategy"):
        with pytest.raises(ValueError):
            GET(hidden)
        with pytest.raises(ValueError):
            SET(**{hidden: True})


def test_is_set_flags_follow_the_setters():
    snap = ms.context.snapshot()["auto_parallel_context"]
    assert snap["_device_num_is_set"] is False and snap["_global_rank_is_set"] is False
    SET(device_num=2, global_rank=1, parameter_broadcast=True)
    snap = ms.context.snapshot()["auto_parallel_context"]
    assert snap["_device_num_is_set"] and snap["_global_rank_is_set"] and snap["_parameter_broadcast_is_set"]
    RESET()
    snap = ms.context.snapshot()["auto_parallel_context"]
    assert not snap["_device_num_is_set"] and not snap["_global_rank_is_set"]


def test_atomic_across_keys():
    before = state()
    with pytest.raises(ValueError):
        SET(device_num=8, gradients_mean=True, pipeline_stages=0)
    assert state() == before
    assert quiet_get("auto_parallel_context", "device_num") == 1
