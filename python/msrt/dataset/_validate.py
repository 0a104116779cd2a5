"""Argument checks of the dataset API, worded as MindSpore's validators word them.

Every public constructor and dataset operation validates its arguments here, at
call time, so a mistake is reported on the line that made it.
"""
import os

INT32_MAX = 2147483647
INT64_MAX = 9223372036854775807
UINT32_MAX = 4294967295
FLOAT_MAX_INTEGER = 16777216
FLOAT_MIN_INTEGER = -16777216


def refuse_unsupported(owner, name, value, missing):
    """A MindSpore argument msrt does not honour, given a value: a ValueError saying what msrt lacks
    (`missing`), what it takes (None) and what was given, rather than running without it."""
    if value is not None:
        raise ValueError(f"For '{owner}', '{name}' needs {missing}, which msrt does not have; "
                         f"pass {name}=None, but got {value!r}.")


def type_check(arg, types, arg_name):
    """Raises TypeError unless `arg` is one of `types` (bool is not an int here)."""
    print_value = '""' if repr(arg) == repr("") else arg
    if int in types and bool not in types and isinstance(arg, bool):
        raise TypeError(
            f"Argument {arg_name} with value {print_value} is not of type {list(types)}, but got {type(arg)}."
        )
    if not isinstance(arg, types):
        raise TypeError(
            f"Argument {arg_name} with value {print_value} is not of type {list(types)}, but got {type(arg)}."
        )


def check_value(value, valid_range, arg_name="", left_open=False, right_open=False):
    """Raises ValueError unless `value` lies in `valid_range` ([lo, hi] unless open)."""
    lo, hi = valid_range
    below = value <= lo if left_open else value < lo
    above = value >= hi if right_open else value > hi
    if below or above:
        name = arg_name + " " if arg_name else ""
        left = "(" if left_open else "["
        right = ")" if right_open else "]"
        raise ValueError(f"Input {name}is not within the required interval of {left}{lo}, {hi}{right}.")


def check_pos_int32(value, arg_name):
    type_check(value, (int,), arg_name)
    check_value(value, (1, INT32_MAX), arg_name)


def check_bool(value, arg_name):
    type_check(value, (bool,), arg_name)


def check_valid_str(value, valid_strings, arg_name):
    type_check(value, (str,), arg_name)
    if value not in valid_strings:
        raise ValueError(f"Input {arg_name} is not within the valid set of {valid_strings}.")


def check_columns(columns, name):
    """A column argument: a non-empty str, or a non-empty list of distinct non-empty strs."""
    type_check(columns, (list, str), name)
    if isinstance(columns, str):
        if not columns:
            raise ValueError(f"{name} should not be an empty str.")
        return
    if not columns:
        raise ValueError(f"{name} should not be empty.")
    for i, column in enumerate(columns):
        type_check(column, (str,), f"{name}[{i}]")
        if not column:
            raise ValueError(f"{name}[{i}] should not be empty.")
    if len(set(columns)) != len(columns):
        raise ValueError(f"Every column name should not be same with others in {name}.")


def as_column_list(columns):
    return [columns] if isinstance(columns, str) else list(columns)


def check_num_parallel_workers(value):
    # MindSpore also caps the value at the CPU count; msrt runs the pipeline in
    # the calling thread, so a script written for a bigger machine still runs.
    type_check(value, (int,), "num_parallel_workers")
    if value < 1:
        raise ValueError(f"num_parallel_workers exceeds the boundary between 1 and {os.cpu_count()}!")


def check_num_samples(value):
    type_check(value, (int,), "num_samples")
    if value < 0 or value > INT64_MAX:
        raise ValueError(f"num_samples exceeds the boundary between 0 and {INT64_MAX}(INT64_MAX)!")


def check_dir(dataset_dir):
    if isinstance(dataset_dir, os.PathLike):
        dataset_dir = os.fspath(dataset_dir)
    type_check(dataset_dir, (str,), "dataset_dir")
    if not os.path.isdir(dataset_dir) or not os.access(dataset_dir, os.R_OK):
        raise ValueError(f"The folder {dataset_dir} does not exist or is not a directory or permission denied!")
    return dataset_dir


def check_sampler_shuffle_shard_options(shuffle, sampler, num_shards, shard_id, num_samples):
    if sampler is not None:
        if shuffle is not None:
            raise RuntimeError("sampler and shuffle cannot be specified at the same time.")
        if num_shards is not None or shard_id is not None:
            raise RuntimeError("sampler and sharding cannot be specified at the same time.")
        if num_samples is not None:
            raise RuntimeError("sampler and num_samples cannot be specified at the same time.")
    if num_shards is not None:
        check_pos_int32(num_shards, "num_shards")
        if shard_id is None:
            raise RuntimeError("num_shards is specified and currently requires shard_id as well.")
        check_value(shard_id, (0, num_shards - 1), "shard_id")
    if num_shards is None and shard_id is not None:
        raise RuntimeError("shard_id is specified but num_shards is not.")


def check_source_params(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id):
    """The checks every mappable source dataset applies, in MindSpore's order."""
    if num_samples is not None:
        check_num_samples(num_samples)
    if num_parallel_workers is not None:
        check_num_parallel_workers(num_parallel_workers)
    for name, value in (("num_shards", num_shards), ("shard_id", shard_id)):
        if value is not None:
            type_check(value, (int,), name)
    if shuffle is not None:
        check_bool(shuffle, "shuffle")
    check_sampler_shuffle_shard_options(shuffle, sampler, num_shards, shard_id, num_samples)
