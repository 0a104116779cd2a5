"""Schema-driven tests: every key of every family, from ms.context.options().

A generic probe cannot invent valid and invalid values, so SAMPLES holds them
per key; test_every_key_has_samples fails when a key is added to a table
without test data here (or when a key disappears and its samples stay).
"""
import json
import math
import warnings

import pytest

import msrt as ms
from ctxutil import (
    DEVICES,
    FAMILIES,
    GETTERS,
    PROFILES,
    SETTERS,
    Tmp,
    assert_tokens,
    device_kwargs,
    message,
    of_category,
    options,
    profile_where,
    quiet_get,
    recorded_warnings,
    resolve,
    state,
)

GB = " * 1024 * 1024 * 1024"


class Ok:
    """A valid input and the stored form get_* returns (same as input if omitted)."""

    def __init__(self, value, *stored):
        self.value = value
        self.stored = stored[0] if stored else value

    def __repr__(self):
        return f"Ok({self.value!r})"


class Bad:
    """An invalid input, the exception it raises and tokens of its message."""

    def __init__(self, value, error, *tokens):
        self.value, self.error, self.tokens = value, error, tokens

    def __repr__(self):
        return f"Bad({self.value!r}, {self.error.__name__})"


BOOL = {"valid": [Ok(True), Ok(False)], "invalid": [Bad(1, TypeError, "must be bool", "but got int")]}


def _merged(default, **changes):
    out = dict(default)
    out.update(changes)
    return out


ASCEND_CONFIG_DEFAULT = {
    "precision_mode": "",
    "jit_compile": False,
    "atomic_clean_policy": 1,
    "matmul_allow_hf32": False,
    "conv_allow_hf32": True,
    "op_precision_mode": "",
    "parallel_speed_up_json_path": "",
    "exception_dump": "2",
    "ge_options": {},
    "host_scheduling_max_threshold": 0,
    "op_debug_option": "",
}
JIT_CONFIG_DEFAULT = {"jit_level": "", "infer_boost": "off"}
GPU_CONFIG_DEFAULT = {
    "conv_fprop_algo": "normal",
    "conv_dgrad_algo": "normal",
    "conv_wgrad_algo": "normal",
    "conv_allow_tf32": True,
    "matmul_allow_tf32": False,
}
COMM_FUSION_DEFAULT = {
    "openstate": True,
    "allreduce": {"mode": "auto", "config": None},
    "allgather": {"mode": "auto", "config": None},
    "reducescatter": {"mode": "auto", "config": None},
}
CKPT_CONFIG_DEFAULT = {"load_file": "", "save_file": "", "only_trainable_params": True}
OPTIMIZER_CONFIG_DEFAULT = {
    "gradient_accumulation_shard": True,
    "parallel_optimizer_threshold": -1,
    "optimizer_weight_shard_size": -1,
}
GB_FORMAT_ERRORS = ["0GB", "3.5gb", "5GBx", "05GB", ".5GB", "1 GB", "1024MB", "GB", "1.5.5GB", ""]

# Per family and key: "valid" samples (input → stored form), "invalid" ones,
# and optionally "setup" (calls made first: {family: kwargs}).
GB_STRING = {
    "valid": [Ok("512GB"), Ok("0.5GB")],
    "invalid": [Bad("512", ValueError, "GB", "'512'"), Bad(512, TypeError, "str", "int")],
}
RATIO = {
    "valid": [Ok(0.5), Ok(1, 1.0)],
    "invalid": [Bad(0, ValueError, "(0, 1]", "0"), Bad(1.5, ValueError, "(0, 1]", "1.5"),
                Bad("0.5", TypeError, "float", "str")],
}
PLACE = {"valid": [Ok("cpu"), Ok("disk")], "invalid": [Bad("gpu", ValueError, "'cpu', 'disk'", "'gpu'")]}

SAMPLES = {
    "context": {
        "mode": {
            "valid": [Ok(0), Ok(1), Ok(True, 1), Ok(False, 0)],
            "invalid": [
                Bad(2, ValueError, "'mode'", "GRAPH_MODE (0)", "PYNATIVE_MODE (1)", "but got 2"),
                Bad(-1, ValueError, "'mode'", "but got -1"),
                Bad("1", TypeError, "'mode'", "must be int", "but got str"),
            ],
        },
        "device_target": {
            "valid": [Ok("CPU"), Ok("GPU"), Ok("Ascend"), Ok("Davinci", "Ascend")],
            "invalid": [
                Bad("gpu", ValueError, "'device_target'", "['CPU', 'GPU', 'Ascend', 'Davinci']", "'gpu'"),
                Bad("TPU", ValueError, "'device_target'", "'TPU'"),
            ],
        },
        "device_id": {
            "valid": [Ok(0), Ok(7), Ok(4095), Ok(True, 1)],
            "invalid": [
                Bad(4096, ValueError, "'device_id'", "[0, 4095]", "4096"),
                Bad(-1, ValueError, "'device_id'", "[0, 4095]", "-1"),
            ],
        },
        "max_device_memory": {
            "valid": [Ok("3.5GB", 3.5), Ok("1.GB", 1.0), Ok("0.5GB", 0.5), Ok("1024GB", 1024.0)],
            "invalid": [Bad("0.GB", ValueError, "'max_device_memory'", '"0GB"', "'0.GB'")]
            + [Bad(text, ValueError, "'max_device_memory'", repr(text)) for text in GB_FORMAT_ERRORS],
        },
        "mempool_block_size": {
            "valid": [Ok("1GB", 1.0), Ok("2.5GB", 2.5)],
            "invalid": [
                Bad("0.5GB", ValueError, "'mempool_block_size'", '"1GB"', "'0.5GB'"),
                Bad("2gb", ValueError, "'mempool_block_size'", "'2gb'"),
            ],
        },
        "variable_memory_max_size": {
            "valid": [Ok("6GB", "6" + GB), Ok("31GB", "31" + GB), Ok("1GB", "1" + GB)],
            "invalid": [
                Bad("32GB", ValueError, "'variable_memory_max_size'", '"31GB"', "'32GB'"),
                Bad("3.5GB", ValueError, "'variable_memory_max_size'", "'3.5GB'"),
                Bad("6gb", ValueError, "'variable_memory_max_size'", "'6gb'"),
            ],
        },
        "memory_optimize_level": {
            "valid": [Ok("O0", 0), Ok("O1", 1)],
            "invalid": [
                Bad("O2", ValueError, "'memory_optimize_level'", "['O0', 'O1']", "'O2'"),
                Bad("o1", ValueError, "'memory_optimize_level'", "'o1'"),
            ],
        },
        "memory_offload": {
            "valid": [Ok("ON", True), Ok("OFF", False)],
            "invalid": [Bad("on", ValueError, "'memory_offload'", "['ON', 'OFF']", "'on'")],
        },
        "runtime_num_threads": {
            "valid": [Ok(0), Ok(4)],
            "invalid": [
                Bad(-1, ValueError, "'runtime_num_threads'", "greater than or equal to 0", "-1"),
                Bad(2**32, ValueError, "'runtime_num_threads'", "4294967295"),
            ],
        },
        "inter_op_parallel_num": {
            "valid": [Ok(0), Ok(3)],
            "invalid": [Bad(-1, ValueError, "'inter_op_parallel_num'", "greater than or equal to 0", "-1")],
        },
        "op_timeout": {
            "valid": [Ok(0), Ok(60)],
            "invalid": [Bad(-1, ValueError, "'op_timeout'", "greater than or equal to 0", "-1")],
        },
        "jit_syntax_level": {
            "valid": [Ok(ms.context.STRICT, 0), Ok(ms.context.COMPATIBLE, 1), Ok(ms.context.LAX, 2)],
            "invalid": [Bad(3, ValueError, "'jit_syntax_level'", "STRICT", "LAX", "but got 3")],
        },
        "jit_config": {
            "valid": [
                Ok({"jit_level": "O0"}, _merged(JIT_CONFIG_DEFAULT, jit_level="O0")),
                Ok({"jit_level": "O1"}, _merged(JIT_CONFIG_DEFAULT, jit_level="O1")),
                Ok({"infer_boost": "off"}, JIT_CONFIG_DEFAULT),
            ],
            "invalid": [
                Bad({"jit_level": "O3"}, ValueError, "jit_config['jit_level']", "'O0', 'O1', 'O2'", "'O3'"),
                Bad({"jit_level": ""}, ValueError, "jit_config['jit_level']", "''"),
                Bad({"infer_boost": "yes"}, ValueError, "jit_config['infer_boost']", "'yes'"),
                Bad({"jit_level": "O1", "infer_boost": "on"}, ValueError, "infer_boost", "'O0'", "'O1'"),
                Bad({"bad": 1}, ValueError, "'bad'", "'jit_config'", "not recognized"),
                Bad({"jit_level": 0}, TypeError, "jit_config['jit_level']", "str"),
                Bad("O0", TypeError, "'jit_config'", "dict"),
            ],
        },
        "debug_level": {
            "valid": [Ok(ms.context.RELEASE, 0), Ok(ms.context.DEBUG, 1)],
            "invalid": [Bad(2, ValueError, "'debug_level'", "RELEASE", "DEBUG", "but got 2")],
        },
        "max_call_depth": {
            "valid": [Ok(1), Ok(5000)],
            "invalid": [
                Bad(0, ValueError, "'max_call_depth'", "greater than 0", "but got 0"),
                Bad(-3, ValueError, "'max_call_depth'", "but got -3"),
            ],
        },
        "precompile_only": BOOL,
        "check_bprop": BOOL,
        "grad_for_scalar": BOOL,
        "enable_reduce_precision": BOOL,
        "deterministic": {
            "valid": [Ok("ON"), Ok("OFF")],
            "invalid": [Bad("on", ValueError, "'deterministic'", "['ON', 'OFF']", "'on'")],
        },
        "reserve_class_name_in_scope": BOOL,
        "support_binary": {
            "valid": [Ok(True), Ok(False)],
            "invalid": [Bad(1, TypeError, "'support_binary'", "bool", "int")],
        },
        "enable_sparse": BOOL,
        "enable_auto_mixed_precision": BOOL,
        "enable_graph_kernel": BOOL,
        "graph_kernel_flags": {
            "valid": [Ok("--opt_level=1"), Ok("")],
            "invalid": [],  # any str: bad flags only warn when parsed
        },
        "enable_compile_cache": {
            "valid": [Ok(True), Ok(False), Ok(None, False)],
            "invalid": [Bad(1, TypeError, "'enable_compile_cache'", "bool", "int")],
        },
        "compile_cache_path": {"valid": [Ok("/tmp/msrt-cache"), Ok("")], "invalid": []},  # any str
        "save_graphs": {
            "valid": [Ok(True, 2), Ok(False, 0), Ok(0), Ok(1), Ok(3)],
            "invalid": [
                Bad(4, ValueError, "'save_graphs'", "0-3", "but got 4"),
                Bad(-1, ValueError, "'save_graphs'", "0-3", "but got -1"),
            ],
        },
        "save_graphs_path": {
            "valid": [Ok(Tmp("ir"), Tmp("ir", real=True)), Ok(Tmp("a/b/c"), Tmp("a/b/c", real=True))],
            "invalid": [
                Bad("", ValueError, "'save_graphs_path'"),
                Bad("   ", ValueError, "'save_graphs_path'"),
                Bad(None, ValueError, "'save_graphs_path'", "None"),
                Bad(Tmp("file.txt", "file"), ValueError, "'save_graphs_path'", "file"),
            ],
        },
        "print_file_path": {
            "valid": [Ok(Tmp("print.pb"), Tmp("print.pb", real=True)), Ok("", ""), Ok(None, "")],
            "invalid": [Bad(Tmp("adir", "dir"), OSError, "'print_file_path'", "file path", "directory")],
        },
        "env_config_path": {
            "valid": [
                Ok(
                    Tmp("env.json", "file", '{"rdr": {"enable": true, "mode": 2}, "sys": {"mem_Reuse": false}}'),
                    Tmp("env.json", real=True),
                ),
                Ok("", ""),
            ],
            "invalid": [
                Bad(Tmp("missing.json"), ValueError, "'env_config_path'", "existing JSON file"),
                Bad(Tmp("bad.json", "file", "{"), ValueError, "env_config_path", "not valid JSON"),
                Bad(Tmp("mode.json", "file", '{"rdr": {"mode": 3}}'), ValueError, "env_config_path", "rdr.mode"),
                Bad(Tmp("sec.json", "file", '{"other": {}}'), ValueError, "env_config_path", "'other'"),
            ],
        },
        "pynative_synchronize": BOOL,
        "pynative_queue_depth": {
            "valid": [Ok(1), Ok(64), Ok(1 << 20)],
            "invalid": [Bad(0, ValueError, "'pynative_queue_depth'", "must be in [1, 1048576]", "0"),
                        Bad(1 << 20 + 1, ValueError, "'pynative_queue_depth'", "1048576"),
                        Bad(True, TypeError, "'pynative_queue_depth'", "int"),
                        Bad("8", TypeError, "'pynative_queue_depth'", "int")],
        },
        "enable_dump": BOOL,
        "save_dump_path": {"valid": [Ok("/tmp/msrt-dump")], "invalid": []},  # any str
        "enable_profiling": BOOL,
        "profiling_options": {
            "valid": [
                Ok("training_trace"),
                Ok("task_trace:training_trace"),
                Ok('{"output": "/tmp/prof", "training_trace": "on", "aicpu": false}'),
            ],
            "invalid": [
                Bad("bogus_trace", ValueError, "'profiling_options'", "'bogus_trace'"),
                Bad('{"nope": 1}', ValueError, "'profiling_options'", "unknown option 'nope'"),
                Bad('{"training_trace": 1}', ValueError, "'profiling_options'", "'training_trace'"),
                Bad("{", ValueError, "'profiling_options'", "JSON"),
            ],
        },
        "ascend_config": {
            "valid": [
                Ok({"precision_mode": "force_fp16"}, _merged(ASCEND_CONFIG_DEFAULT, precision_mode="force_fp16")),
                Ok(
                    {"jit_compile": True, "atomic_clean_policy": 0, "ge_options": {"global": {"a": "1"}}},
                    _merged(ASCEND_CONFIG_DEFAULT, jit_compile=True, atomic_clean_policy=0,
                            ge_options={"global": {"a": "1"}}),
                ),
                Ok(
                    {"op_precision_mode": Tmp("op.ini", "file", "x"), "parallel_speed_up_json_path": None},
                    _merged(ASCEND_CONFIG_DEFAULT, op_precision_mode=Tmp("op.ini", real=True)),
                ),
            ],
            "invalid": [
                Bad({"precision_mode": "x"}, ValueError, "ascend_config['precision_mode']", "force_fp16", "'x'"),
                Bad({"bad": 1}, ValueError, "'bad'", "'ascend_config'", "not recognized"),
                Bad({"op_precision_mode": 1}, TypeError, "ascend_config['op_precision_mode']", "str", "int"),
                Bad({"op_precision_mode": Tmp("missing.ini")}, ValueError, "op_precision_mode", "existing file"),
                Bad({"ge_options": {"other": {}}}, ValueError, "'other'", "['global', 'session']"),
                Bad({"ge_options": {"global": 1}}, TypeError, "ascend_config['ge_options']['global']", "dict"),
                Bad({"ge_options": {"global": {"a": 1}}}, TypeError, "'a'", "str"),
                Bad({"exception_dump": "3"}, ValueError, "exception_dump", "'3'"),
                Bad({"host_scheduling_max_threshold": -1}, ValueError, "host_scheduling_max_threshold", "-1"),
                Bad({"jit_compile": "1"}, TypeError, "jit_compile", "bool"),
                Bad({"parallel_speed_up_json_path": Tmp("su.json", "file", '{"x": true}')}, ValueError,
                    "parallel_speed_up_json_path", "unknown key 'x'"),
                Bad({"op_debug_option": "all"}, ValueError, "ascend_config['op_debug_option']", "'oom'", "'all'"),
            ],
        },
        "gpu_config": {
            "valid": [
                Ok({"conv_fprop_algo": "implicit_precomp_gemm"},
                   _merged(GPU_CONFIG_DEFAULT, conv_fprop_algo="precomp_gemm")),
                Ok({"conv_wgrad_algo": "algo_3", "matmul_allow_tf32": True},
                   _merged(GPU_CONFIG_DEFAULT, conv_wgrad_algo="algo_3", matmul_allow_tf32=True)),
            ],
            "invalid": [
                Bad({"conv_fprop_algo": "x"}, ValueError, "gpu_config['conv_fprop_algo']", "'x'"),
                Bad({"conv_dgrad_algo": "algo_3"}, ValueError, "conv_dgrad_algo", "'algo_3'"),
                Bad({"bad": 1}, ValueError, "'bad'", "'gpu_config'"),
                Bad({"conv_allow_tf32": 1}, TypeError, "conv_allow_tf32", "bool"),
            ],
        },
        "disable_format_transform": BOOL,
        "auto_tune_mode": {
            "valid": [Ok("RL"), Ok("GA,RL"), Ok("NO_TUNE")],
            "invalid": [Bad("XX", ValueError, "'auto_tune_mode'", "'NO_TUNE'", "'XX'")],
        },
        "aoe_tune_mode": {
            "valid": [Ok("online"), Ok("offline")],
            "invalid": [
                Bad("x", ValueError, "'aoe_tune_mode'", "['online', 'offline']", "'x'"),
                Bad("", ValueError, "'aoe_tune_mode'"),
            ],
        },
        "aoe_config": {
            "valid": [Ok({"job_type": "1"})],
            "invalid": [
                Bad({"job_type": "3"}, ValueError, "aoe_config['job_type']", "'3'"),
                Bad({"bad": "1"}, ValueError, "'bad'", "'aoe_config'"),
            ],
        },
        "save_ms_model": BOOL,
        "save_ms_model_path": {"valid": [Ok("./net.ms")], "invalid": []},  # any str
    },
    "auto_parallel_context": {
        "device_num": {
            "valid": [Ok(1), Ok(8), Ok(4096)],
            "invalid": [
                Bad(0, ValueError, "'device_num'", "[1, 4096]", "0"),
                Bad(4097, ValueError, "'device_num'", "[1, 4096]", "4097"),
            ],
        },
        "global_rank": {
            "valid": [Ok(0), Ok(7), Ok(4095)],
            "invalid": [
                Bad(-1, ValueError, "'global_rank'", "[0, 4095]", "-1"),
                Bad(4096, ValueError, "'global_rank'", "[0, 4095]", "4096"),
            ],
        },
        "parallel_mode": {
            "setup": {"context": {"mode": ms.GRAPH_MODE}},
            "valid": [Ok(mode) for mode in ms.ParallelMode.MODE_LIST],
            "invalid": [
                Bad("SEMI_AUTO_PARALLEL", ValueError, "'parallel_mode'", "'semi_auto_parallel'",
                    "'SEMI_AUTO_PARALLEL'"),
                Bad("x", ValueError, "'parallel_mode'", "'x'"),
            ],
        },
        "search_mode": {
            "valid": [Ok("recursive_programming"), Ok("dynamic_programming"), Ok("sharding_propagation")],
            "invalid": [Bad("x", ValueError, "'search_mode'", "'dynamic_programming'", "'x'")],
        },
        "sharding_propagation": BOOL,
        "gradients_mean": BOOL,
        "gradient_fp32_sync": BOOL,
        "loss_repeated_mean": BOOL,
        "grad_accumulation_step": {
            "valid": [Ok(1), Ok(4)],
            "invalid": [
                Bad(0, ValueError, "'grad_accumulation_step'", "greater than or equal to 1", "0"),
                Bad(True, TypeError, "'grad_accumulation_step'", "int", "bool"),
            ],
        },
        "parameter_broadcast": BOOL,
        "strategy_ckpt_load_file": {"valid": [Ok("./strategy.ckpt")], "invalid": []},  # any str
        "strategy_ckpt_save_file": {
            "valid": [Ok(Tmp("sub/dir/s.ckpt"))],
            "invalid": [Bad(Tmp("x/s.ckpt", "under_file"), OSError, "'strategy_ckpt_save_file'")],
        },
        "strategy_ckpt_config": {
            "valid": [
                Ok({"load_file": "a.ckpt"}, _merged(CKPT_CONFIG_DEFAULT, load_file="a.ckpt")),
                Ok({"only_trainable_params": False}, _merged(CKPT_CONFIG_DEFAULT, only_trainable_params=False)),
            ],
            "invalid": [
                Bad({"x": 1}, ValueError, "'x'", "'strategy_ckpt_config'", "'only_trainable_params'"),
                Bad({"load_file": 1}, TypeError, "strategy_ckpt_config['load_file']", "str", "int"),
                Bad({"only_trainable_params": 1}, TypeError, "only_trainable_params", "bool"),
            ],
        },
        "group_ckpt_save_file": {
            "valid": [Ok(Tmp("g/group.ckpt"))],
            "invalid": [Bad(Tmp("x/g.ckpt", "under_file"), OSError, "'group_ckpt_save_file'")],
        },
        "full_batch": BOOL,
        "dataset_strategy": {
            "setup": {"context": {"mode": ms.GRAPH_MODE}},
            "valid": [Ok("full_batch"), Ok("data_parallel"), Ok(((1, 8), (1, 8)), [[1, 8], [1, 8]])],
            "invalid": [
                Bad("x", ValueError, "'dataset_strategy'", "'full_batch'", "'x'"),
                Bad([[1, 8]], TypeError, "'dataset_strategy'", "tuple", "list"),
                Bad(((1, "a"),), TypeError, "'dataset_strategy'", "int", "'a'"),
                Bad((1, 2), TypeError, "'dataset_strategy'", "tuple of int"),
            ],
        },
        "enable_parallel_optimizer": BOOL,
        "parallel_optimizer_config": {
            "valid": [
                Ok({"gradient_accumulation_shard": False},
                   _merged(OPTIMIZER_CONFIG_DEFAULT, gradient_accumulation_shard=False)),
                Ok({"parallel_optimizer_threshold": 0},
                   _merged(OPTIMIZER_CONFIG_DEFAULT, parallel_optimizer_threshold=0)),
            ],
            "invalid": [
                Bad({"bad": 1}, ValueError, "'bad'", "'parallel_optimizer_config'"),
                Bad({"parallel_optimizer_threshold": -1}, ValueError, "parallel_optimizer_threshold", "-1"),
                Bad({"gradient_accumulation_shard": 1}, TypeError, "gradient_accumulation_shard", "bool"),
            ],
        },
        "optimizer_weight_shard_size": {
            "valid": [Ok(2), Ok(8)],
            "invalid": [Bad(2.0, TypeError, "'optimizer_weight_shard_size'", "int", "float")],
        },
        "optimizer_weight_shard_aggregated_save": BOOL,
        "all_reduce_fusion_config": {
            "valid": [Ok([1, 5]), Ok([0])],
            "invalid": [
                Bad([], ValueError, "'all_reduce_fusion_config'", "empty"),
                Bad([3, 1], ValueError, "'all_reduce_fusion_config'", "ascending", "[3, 1]"),
                Bad([1, 1], ValueError, "'all_reduce_fusion_config'", "duplicates", "[1, 1]"),
                Bad([1, True], TypeError, "'all_reduce_fusion_config'", "int", "bool"),
                Bad((1, 2), TypeError, "'all_reduce_fusion_config'", "list", "tuple"),
            ],
        },
        "comm_fusion": {
            "valid": [
                Ok({"allreduce": {"mode": "size", "config": 32}},
                   _merged(COMM_FUSION_DEFAULT, allreduce={"mode": "size", "config": 32})),
                Ok({"openstate": False}, _merged(COMM_FUSION_DEFAULT, openstate=False)),
            ],
            "invalid": [
                Bad({"allreduce": {"mode": "x", "config": 1}}, KeyError, "comm_fusion['allreduce']",
                    "'auto', 'size' or 'index'", "'x'"),
                Bad({"allreduce": {"mode": "size"}}, KeyError, "comm_fusion['allreduce']", "'config'"),
                Bad({"allgather": {"mode": "index", "config": [1]}}, KeyError, "comm_fusion['allgather']",
                    "'auto' or 'size'"),
                Bad({"bad": {}}, KeyError, "comm fusion type", "'bad'"),
                Bad({"allreduce": {"mode": "size", "config": -1}}, ValueError, "comm_fusion['allreduce']['config']",
                    "-1"),
                Bad({"allreduce": 5}, TypeError, "comm_fusion['allreduce']", "dict", "int"),
                Bad({"openstate": 1}, TypeError, "comm_fusion['openstate']", "bool", "int"),
            ],
        },
        "enable_alltoall": BOOL,
        "communi_parallel_mode": {
            "valid": [Ok("all_group_parallel"), Ok("same_server_group_parallel"), Ok("no_group_parallel")],
            "invalid": [Bad("x", ValueError, "'communi_parallel_mode'", "'all_group_parallel'", "'x'")],
        },
        "pipeline_stages": {
            "valid": [Ok(1), Ok(4)],
            "invalid": [
                Bad(0, ValueError, "'pipeline_stages'", "greater than or equal to 1", "0"),
                Bad(True, TypeError, "'pipeline_stages'", "int", "bool"),
            ],
        },
        "pipeline_config": {
            "valid": [
                Ok({"pipeline_scheduler": "gpipe"}, {"pipeline_interleave": False, "pipeline_scheduler": "gpipe"}),
                Ok({"pipeline_interleave": True}, {"pipeline_interleave": True, "pipeline_scheduler": "1f1b"}),
            ],
            "invalid": [
                Bad({"pipeline_scheduler": "zb"}, ValueError, "pipeline_config['pipeline_scheduler']", "'gpipe'",
                    "'zb'"),
                Bad({"pipeline_interleave": 1}, TypeError, "pipeline_config['pipeline_interleave']", "bool"),
                Bad({"stages": 2}, ValueError, "'stages'", "'pipeline_config'"),
            ],
        },
    },
    "offload_context": {
        "offload_path": {"valid": [Ok("/tmp/offload")], "invalid": [Bad(1, TypeError, "'offload_path'", "str")]},
        "offload_cpu_size": GB_STRING,
        "offload_disk_size": GB_STRING,
        "aio_block_size": GB_STRING,
        "host_mem_block_size": GB_STRING,
        "hbm_ratio": RATIO,
        "cpu_ratio": RATIO,
        "enable_pinned_mem": BOOL,
        "enable_aio": BOOL,
        "auto_offload": BOOL,
        "aio_queue_size": {
            "valid": [Ok(1), Ok(1024)],
            "invalid": [Bad(0, ValueError, "'aio_queue_size'", "0"), Bad(True, TypeError, "'aio_queue_size'")],
        },
        "offload_param": PLACE,
        "offload_checkpoint": PLACE,
    },
    "algo_parameters": {
        "fully_use_devices": BOOL,
        "elementwise_op_strategy_follow": BOOL,
        "enable_algo_approxi": BOOL,
        "tensor_slice_align_enable": BOOL,
        "algo_approxi_epsilon": RATIO,
        "tensor_slice_align_size": {
            "valid": [Ok(1), Ok(1024)],
            "invalid": [Bad(0, ValueError, "'tensor_slice_align_size'", "0"),
                        Bad(1025, ValueError, "'tensor_slice_align_size'", "1025"),
                        Bad(True, TypeError, "'tensor_slice_align_size'")],
        },
    },
    "ps_context": {
        "enable_ps": BOOL,
        "ms_role": {
            # The getter reports the role in force, which is none while PS is off.
            "valid": [Ok("MS_WORKER", "MS_NOT_PS"), Ok("MS_SCHED", "MS_NOT_PS")],
            "invalid": [
                Bad("X", RuntimeError, "'ms_role'", "'MS_WORKER'", "'X'"),
                Bad("MS_NOT_PS", RuntimeError, "'ms_role'", "'MS_NOT_PS'"),
            ],
        },
        "config_file_path": {"valid": [Ok("/tmp/ps_recovery.json")], "invalid": []},  # any str
        "worker_num": {
            "valid": [Ok(0), Ok(8)],
            "invalid": [
                Bad(-1, ValueError, "'worker_num'", "greater than or equal to 0", "-1"),
                Bad(True, TypeError, "'worker_num'", "int", "bool"),
            ],
        },
        "server_num": {
            "valid": [Ok(0), Ok(2)],
            "invalid": [Bad(-1, ValueError, "'server_num'", "greater than or equal to 0", "-1")],
        },
        "scheduler_ip": {"valid": [Ok("127.0.0.1")], "invalid": []},  # any str
        "scheduler_port": {
            "valid": [Ok(1), Ok(65535)],
            "invalid": [
                Bad(0, ValueError, "'scheduler_port'", "[1, 65535]", "0"),
                Bad(65536, ValueError, "'scheduler_port'", "[1, 65535]", "65536"),
            ],
        },
        "scheduler_manage_port": {
            "valid": [Ok(11203)],
            "invalid": [Bad(70000, ValueError, "'scheduler_manage_port'", "[1, 65535]", "70000")],
        },
        "server_mode": {
            "valid": [Ok("PARAMETER_SERVER")],
            "invalid": [Bad("FEDERATED_LEARNING", RuntimeError, "'server_mode'", "'PARAMETER_SERVER'",
                            "'FEDERATED_LEARNING'")],
        },
        "enable_ssl": BOOL,
        "client_password": {
            "valid": [Ok("secret")],
            "invalid": [Bad("p" * 1024, RuntimeError, "'client_password'", "less than 1024", "1024")],
        },
        "server_password": {
            "valid": [Ok("secret")],
            "invalid": [Bad("p" * 1024, RuntimeError, "'server_password'", "less than 1024", "1024")],
        },
    },
}

# Keys that take any string: no value of the right type is invalid.
ANY_STRING_KEYS = {
    ("context", "graph_kernel_flags"),
    ("context", "compile_cache_path"),
    ("context", "save_dump_path"),
    ("context", "save_ms_model_path"),
    ("auto_parallel_context", "strategy_ckpt_load_file"),
    ("ps_context", "config_file_path"),
    ("ps_context", "scheduler_ip"),
}

# Every alias and the profile from which it is deprecated (options() lists
# alias names only).
ALIAS_SINCE = {
    ("auto_parallel_context", "mirror_mean"): ("gradients_mean", "r1.0"),
    ("auto_parallel_context", "cast_before_mirror"): ("gradient_fp32_sync", "r1.0"),
    ("auto_parallel_context", "auto_parallel_search_mode"): ("search_mode", "r1.6"),
}

# Keys whose default is computed when the store is created.
COMPUTED_DEFAULTS = {("context", "device_target")}

ALL_OPTIONS = options()
KEYS = sorted(ALL_OPTIONS)


def _ids(items):
    return [f"{family}.{name}" for family, name in items]


def _spec(family, name):
    return SAMPLES[family][name]


def _prepare(opt, root):
    """Selects a profile where the key is live and runs the key's setup."""
    profile = profile_where(opt, deprecated=False)
    if profile is not None:
        ms.context.set_profile(profile)
    for family, kwargs in _spec(opt["family"], opt["name"]).get("setup", {}).items():
        SETTERS[family](**resolve(kwargs, root))


def _set(opt, value):
    kwargs = device_kwargs(opt)
    kwargs[opt["name"]] = value
    SETTERS[opt["family"]](**kwargs)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


# ---------------------------------------------------------------------------
# The samples cover the schema.


def test_every_key_has_samples():
    for family in FAMILIES:
        keys = set(options(family))
        assert keys, family
        assert set(SAMPLES[family]) == keys, (
            f"{family}: keys without samples {sorted(keys - set(SAMPLES[family]))}, "
            f"samples without a key {sorted(set(SAMPLES[family]) - keys)}"
        )
    for key in KEYS:
        spec = _spec(*key)
        assert spec["valid"], f"{key} has no valid sample"
        if key in ANY_STRING_KEYS:
            assert ALL_OPTIONS[key]["type"] == "str", key
        else:
            assert spec["invalid"], f"{key} has no invalid sample"
    for key in ANY_STRING_KEYS:
        assert key in ALL_OPTIONS, key


def test_freezing_keys_have_two_distinct_values():
    for key in KEYS:
        if ALL_OPTIONS[key]["freezes"]:
            stored = {json.dumps(s.stored, sort_keys=True, default=repr) for s in _spec(*key)["valid"]}
            assert len(stored) >= 2, key


def test_every_alias_is_listed():
    aliases = {(o["family"], a): o["name"] for o in ALL_OPTIONS.values() for a in o["aliases"]}
    assert aliases == {k: v[0] for k, v in ALIAS_SINCE.items()}


def test_options_records_are_complete():
    for (family, name), opt in ALL_OPTIONS.items():
        assert opt["family"] == family and opt["name"] == name
        assert not name.startswith("_"), "hidden keys are not listed"
        assert opt["type"] and opt["doc"], name
        assert set(opt["devices"]) <= set(DEVICES) and opt["devices"], name
        assert set(opt["mindspore_devices"]) <= set(DEVICES) and opt["mindspore_devices"], name
        if opt["devices"] != opt["mindspore_devices"]:
            assert opt["device_note"], f"{name}: msrt's applicability differs from MindSpore's without a note"
        assert opt["env_role"] in ("", "default", "override")
        assert bool(opt["env_var"]) == bool(opt["env_role"]), name
        assert opt["deprecated_since"] in ("",) + PROFILES, name
        assert opt["deprecation_action"] in (("",) if not opt["deprecated_since"] else ("ignored", "applied"))
        assert isinstance(opt["freezes"], bool) and isinstance(opt["per_thread"], bool)
        assert isinstance(opt["affects_compile"], bool)


# ---------------------------------------------------------------------------
# Defaults: a fresh process reads the documented default of every key.


@pytest.mark.parametrize("profile", PROFILES)
def test_fresh_process_reads_documented_defaults(profile, python_subprocess):
    proc = python_subprocess(
        """
        warnings.simplefilter("ignore")
        getters = {"context": ms.get_context, "auto_parallel_context": ms.get_auto_parallel_context,
                   "ps_context": ms.get_ps_context, "offload_context": lambda k: ms.get_offload_context()[k],
                   "algo_parameters": ms.get_algo_parameters}
        out = []
        for o in ms.context.options():
            out.append([o["family"], o["name"], o["default"], getters[o["family"]](o["name"]),
                        ms.context.explain(o["name"])["source"] if o["family"] == "context" else None])
        print("RESULT=" + json.dumps({"profile": ms.context.get_profile(), "keys": out,
                                      "best": ms._C.build_info()["best_device"]}))
        """,
        env={"MSRT_CONTEXT_PROFILE": profile},
    )
    result = proc.result
    assert result["profile"] == profile
    seen = set()
    for family, name, default, got, source in result["keys"]:
        seen.add((family, name))
        if (family, name) in COMPUTED_DEFAULTS:
            assert got == result["best"]
            continue
        assert got == default, f"{family}.{name}: get returns {got!r}, options() says {default!r}"
        if source is not None:
            assert source == "default", (name, source)
    assert seen == set(KEYS)


def test_documented_defaults_have_the_stored_types():
    # The subprocess check goes through JSON, which cannot tell 1.0 from 1.
    expected_types = {
        ("context", "max_device_memory"): float,
        ("context", "mempool_block_size"): float,
        ("context", "variable_memory_max_size"): str,
        ("context", "memory_optimize_level"): int,
        ("context", "memory_offload"): bool,
        ("context", "save_graphs"): int,
        ("auto_parallel_context", "all_reduce_fusion_config"): list,
        ("auto_parallel_context", "comm_fusion"): dict,
        ("auto_parallel_context", "dataset_strategy"): str,
    }
    for key, kind in expected_types.items():
        assert type(ALL_OPTIONS[key]["default"]) is kind, key


# ---------------------------------------------------------------------------
# Wrong types, bad values, valid values.


@pytest.mark.parametrize("key", KEYS, ids=_ids(KEYS))
def test_bad_type_raises_type_error_and_changes_nothing(key, tmp_path):
    opt = ALL_OPTIONS[key]
    _prepare(opt, tmp_path)
    before = state()
    with recorded_warnings(), pytest.raises(TypeError) as excinfo:
        _set(opt, object())
    text = message(excinfo)
    assert_tokens(text, [opt["name"], "object"])
    assert any(word in text for word in ("int", "str", "bool", "dict", "list", "tuple")), text
    assert state() == before


def _invalid_cases():
    return [(key, i) for key in KEYS for i in range(len(_spec(*key)["invalid"]))]


@pytest.mark.parametrize(
    "key,index", _invalid_cases(), ids=[f"{f}.{n}-{i}" for (f, n), i in _invalid_cases()]
)
def test_bad_value_raises_and_changes_nothing(key, index, tmp_path):
    opt = ALL_OPTIONS[key]
    bad = _spec(*key)["invalid"][index]
    _prepare(opt, tmp_path)
    value = resolve(bad.value, tmp_path)
    before = state()
    with recorded_warnings(), pytest.raises(bad.error) as excinfo:
        _set(opt, value)
    assert type(excinfo.value) is bad.error, f"{type(excinfo.value).__name__}: {excinfo.value}"
    text = message(excinfo)
    assert_tokens(text, bad.tokens)
    assert text.startswith(f"For 'context.set_{opt['family']}', "), text
    assert state() == before


def _valid_cases():
    return [(key, i) for key in KEYS for i in range(len(_spec(*key)["valid"]))]


@pytest.mark.parametrize("key,index", _valid_cases(), ids=[f"{f}.{n}-{i}" for (f, n), i in _valid_cases()])
def test_valid_value_reads_back_in_stored_form(key, index, tmp_path):
    opt = ALL_OPTIONS[key]
    ok = _spec(*key)["valid"][index]
    _prepare(opt, tmp_path)
    value = resolve(ok.value, tmp_path)
    expected = resolve(ok.stored, tmp_path)
    with recorded_warnings() as caught:
        _set(opt, value)
    assert not of_category(caught, ms.DeviceNotApplicableWarning)
    got = quiet_get(opt["family"], opt["name"])
    assert _same(got, expected), f"{key}: set {value!r}, get returns {got!r}, expected {expected!r}"
    # Setting the same value again gives the same result.
    with recorded_warnings():
        _set(opt, value)
    assert _same(quiet_get(opt["family"], opt["name"]), expected)


# ---------------------------------------------------------------------------
# Device applicability.


def _not_applicable_cases():
    return [(device, key) for device in DEVICES for key in KEYS if device not in ALL_OPTIONS[key]["devices"]]


def test_some_keys_do_not_apply_somewhere():
    devices_without = {device for device, _ in _not_applicable_cases()}
    assert devices_without == set(DEVICES)


@pytest.mark.parametrize(
    "device,key", _not_applicable_cases(), ids=[f"{d}-{f}.{n}" for d, (f, n) in _not_applicable_cases()]
)
def test_key_on_wrong_device_warns_and_is_not_stored(device, key, tmp_path):
    opt = ALL_OPTIONS[key]
    _prepare(opt, tmp_path)
    ms.set_context(device_target=device)
    before = state()
    value = resolve(_spec(*key)["valid"][0].value, tmp_path)
    with recorded_warnings() as caught:
        SETTERS[opt["family"]](**{opt["name"]: value})
    found = of_category(caught, ms.DeviceNotApplicableWarning)
    assert len(found) == 1, [str(w.message) for w in caught]
    assert_tokens(found[0], [f"'{opt['name']}'", f"'{device}'", "ignore"])
    for allowed in opt["devices"]:
        assert allowed in found[0]
    assert state() == before
    # get still answers, with a warning that the key does not apply here.
    with recorded_warnings() as caught:
        GETTERS[opt["family"]](opt["name"])
    assert of_category(caught, ms.DeviceNotApplicableWarning)


def _extended_cases():
    return [
        (device, key)
        for key in KEYS
        for device in ALL_OPTIONS[key]["devices"]
        if device not in ALL_OPTIONS[key]["mindspore_devices"]
    ]


@pytest.mark.parametrize("device,key", _extended_cases(), ids=[f"{d}-{f}.{n}" for d, (f, n) in _extended_cases()])
def test_key_msrt_implements_beyond_mindspore_is_stored_silently(device, key, tmp_path):
    opt = ALL_OPTIONS[key]
    _prepare(opt, tmp_path)
    ms.set_context(device_target=device)
    ok = _spec(*key)["valid"][0]
    with recorded_warnings() as caught:
        SETTERS[opt["family"]](**{opt["name"]: resolve(ok.value, tmp_path)})
        got = GETTERS[opt["family"]](opt["name"])
    assert not of_category(caught, ms.DeviceNotApplicableWarning)
    assert _same(got, resolve(ok.stored, tmp_path))
    explanation = ms.context.explain(opt["name"])
    assert explanation["applies"] is True
    assert explanation["applies_reason"] == opt["device_note"]


def test_applicability_is_judged_with_the_device_target_of_the_same_call(tmp_path):
    restricted = [k for k in KEYS if k[0] == "context" and "CPU" not in ALL_OPTIONS[k]["devices"]]
    assert restricted
    for family, name in restricted:
        opt = ALL_OPTIONS[(family, name)]
        ok, other = _spec(family, name)["valid"][0], _spec(family, name)["valid"][-1]
        if opt["deprecated_since"]:
            ms.context.set_profile(profile_where(opt, deprecated=False))
        ms.set_context(device_target="CPU")
        with recorded_warnings() as caught:
            ms.set_context(**{name: resolve(ok.value, tmp_path), "device_target": opt["devices"][0]})
        assert not of_category(caught, ms.DeviceNotApplicableWarning), name
        assert _same(quiet_get(family, name), resolve(ok.stored, tmp_path)), name
        # The reverse: the new target in the same call drops the key.
        before = quiet_get(family, name)
        with recorded_warnings() as caught:
            ms.set_context(device_target="CPU", **{name: resolve(other.value, tmp_path)})
        assert of_category(caught, ms.DeviceNotApplicableWarning), name
        assert _same(quiet_get(family, name), before), name
        ms.context.set_profile("r2.3")


# ---------------------------------------------------------------------------
# Aliases and deprecations.


@pytest.mark.parametrize("alias", sorted(ALIAS_SINCE), ids=_ids(sorted(ALIAS_SINCE)))
@pytest.mark.parametrize("profile", PROFILES)
def test_alias_sets_and_gets_its_key_and_warns_once_deprecated(alias, profile):
    family, name = alias
    canonical, since = ALIAS_SINCE[alias]
    ms.context.set_profile(profile)
    deprecated = PROFILES.index(profile) >= PROFILES.index(since)
    sample = _spec(family, canonical)["valid"][0]
    if quiet_get(family, canonical) == sample.stored:
        sample = _spec(family, canonical)["valid"][1]
    with recorded_warnings() as caught:
        SETTERS[family](**{name: sample.value})
    found = of_category(caught, ms.ContextDeprecationWarning)
    if deprecated:
        assert len(found) == 1, found
        assert_tokens(found[0], [f"'{name}'", f"'{canonical}'", since])
    else:
        assert not found
    assert quiet_get(family, canonical) == sample.stored
    with recorded_warnings() as caught:
        got = GETTERS[family](name)
    assert got == sample.stored
    assert bool(of_category(caught, ms.ContextDeprecationWarning)) == deprecated


def _deprecated_keys():
    return [k for k in KEYS if ALL_OPTIONS[k]["deprecated_since"]]


def test_there_are_deprecated_keys_of_both_kinds():
    actions = {ALL_OPTIONS[k]["deprecation_action"] for k in _deprecated_keys()}
    assert actions == {"ignored", "applied"}


@pytest.mark.parametrize("key", _deprecated_keys(), ids=_ids(_deprecated_keys()))
@pytest.mark.parametrize("deprecated", [True, False], ids=["deprecated", "live"])
def test_deprecated_key_warns_only_in_profiles_where_it_is_deprecated(key, deprecated, tmp_path):
    opt = ALL_OPTIONS[key]
    profile = profile_where(opt, deprecated=deprecated)
    assert profile is not None
    ms.context.set_profile(profile)
    for family, kwargs in _spec(*key).get("setup", {}).items():
        SETTERS[family](**kwargs)
    samples = _spec(*key)["valid"]
    before = quiet_get(*key)
    sample = next(s for s in samples if not _same(resolve(s.stored, tmp_path), before))
    with recorded_warnings() as caught:
        _set(opt, resolve(sample.value, tmp_path))
    found = of_category(caught, ms.ContextDeprecationWarning)
    got = quiet_get(*key)
    if not deprecated:
        assert not found
        assert _same(got, resolve(sample.stored, tmp_path))
        return
    assert len(found) == 1, found
    assert_tokens(found[0], [f"'{opt['name']}'", "deprecated", opt["deprecated_since"]])
    if opt["deprecation_action"] == "ignored":
        assert "ignored" in found[0]
        assert _same(got, before)
    else:
        assert _same(got, resolve(sample.stored, tmp_path))


# ---------------------------------------------------------------------------
# Freezing (irreversible, so each key runs in its own process).


def _freezing_keys():
    return [k for k in KEYS if ALL_OPTIONS[k]["freezes"]]


def test_the_freezing_keys_are_those_of_the_issue():
    assert {name for _, name in _freezing_keys()} == {
        "device_id", "max_device_memory", "mempool_block_size", "variable_memory_max_size", "device_target",
    }


@pytest.mark.parametrize("key", _freezing_keys(), ids=_ids(_freezing_keys()))
def test_frozen_key_refuses_a_different_value(key, python_subprocess):
    family, name = key
    stored = []
    for s in _spec(*key)["valid"]:
        if s.stored not in [x.stored for x in stored]:
            stored.append(s)
    first, second = stored[0], stored[1]
    proc = python_subprocess(
        f"""
        warnings.simplefilter("ignore")
        set_, get = ms.set_{family}, ms.get_{family}
        out = {{}}
        set_(**{{{name!r}: {first.value!r}}})
        ms.context._mark_in_effect({name!r}, "REASON-42 happened")
        out["explain"] = dict(ms.context.explain({name!r}))
        set_(**{{{name!r}: {first.value!r}}})  # the same value: a no-op
        try:
            set_(mode=ms.GRAPH_MODE, **{{{name!r}: {second.value!r}}})
            out["error"] = None
        except Exception as e:
            out["error"] = [type(e).__name__, str(e)]
        out["value"] = get({name!r})
        out["mode"] = get("mode")
        try:
            ms.context.load(ms.context.snapshot() | {{"context": dict(ms.context.snapshot()["context"],
                                                                     **{{{name!r}: {second.stored!r}}})}})
            out["load_error"] = None
        except Exception as e:
            out["load_error"] = [type(e).__name__, str(e)]
        out["value_after_load"] = get({name!r})
        print("RESULT=" + json.dumps(out))
        """
    )
    out = proc.result
    assert out["explain"]["frozen"] is True
    assert out["explain"]["frozen_reason"] == "REASON-42 happened"
    assert out["error"] is not None and out["error"][0] == "RuntimeError", out
    assert_tokens(out["error"][1], [f"'{name}'", "REASON-42 happened"])
    assert out["value"] == first.stored
    assert out["mode"] == ms.PYNATIVE_MODE, "a refused call must change nothing"
    assert out["load_error"] is not None and out["load_error"][0] == "RuntimeError"
    assert out["value_after_load"] == first.stored


def test_mark_in_effect_does_not_freeze_other_keys(python_subprocess):
    proc = python_subprocess(
        """
        ms.context._mark_in_effect("mode", "graphs were compiled")
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.set_context(mode=ms.PYNATIVE_MODE)
        print("RESULT=" + json.dumps([ms.get_context("mode"), ms.context.explain("mode")["frozen"]]))
        """
    )
    assert proc.result == [ms.PYNATIVE_MODE, False]


def test_mark_in_effect_unknown_key_is_a_value_error():
    with pytest.raises(ValueError) as excinfo:
        ms.context._mark_in_effect("no_such_key", "x")
    assert "no_such_key" in message(excinfo)


# ---------------------------------------------------------------------------
# Known engine defects (type checks must precede the deprecation and device
# filters, as MindSpore's argument-type decorator does; spec §2.1, §9.2).


def _ignored_deprecated_keys():
    return [k for k in _deprecated_keys() if ALL_OPTIONS[k]["deprecation_action"] == "ignored"]


@pytest.mark.parametrize("key", _ignored_deprecated_keys(), ids=_ids(_ignored_deprecated_keys()))
def test_type_is_checked_before_the_deprecation_filter(key):
    opt = ALL_OPTIONS[key]
    ms.context.set_profile(profile_where(opt, deprecated=True))
    with recorded_warnings(), pytest.raises(TypeError):
        _set(opt, object())


@pytest.mark.parametrize("key", [k for k in KEYS if "CPU" not in ALL_OPTIONS[k]["devices"]],
                         ids=_ids([k for k in KEYS if "CPU" not in ALL_OPTIONS[k]["devices"]]))
def test_type_is_checked_before_the_device_filter(key):
    opt = ALL_OPTIONS[key]
    ms.context.set_profile(profile_where(opt, deprecated=False))
    ms.set_context(device_target="CPU")
    with recorded_warnings(), pytest.raises(TypeError):
        SETTERS[opt["family"]](**{opt["name"]: object()})


def test_warnings_can_be_turned_into_errors_without_storing():
    # A host that makes warnings errors gets the exception before anything is stored.
    before = state()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ms.DeviceNotApplicableWarning)
        with pytest.raises(ms.DeviceNotApplicableWarning):
            ms.set_context(device_target="CPU", mode=ms.GRAPH_MODE, memory_offload="ON")
    assert state() == before
