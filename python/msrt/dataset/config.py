"""Global settings of the data pipeline (`msrt.dataset.config`, as `mindspore.dataset.config`).

The seed decides every random choice a pipeline makes (samplers, `shuffle`).
Until `set_seed` is called each new iterator draws a fresh seed from the OS, as
MindSpore does while its seed is the default; after `set_seed(s)` every
iterator created from the same pipeline yields the same rows in the same order.

`set_prefetch_size` bounds the blocks an iterator's background thread computes
ahead of the consumer; `set_num_parallel_workers` is the worker count of a `map`
that does not give its own (see `get_num_parallel_workers`).
"""
import os
import random
import threading

import numpy as np

from ._validate import INT32_MAX, UINT32_MAX

# std::mt19937::default_seed, what MindSpore's get_seed() returns before set_seed.
DEFAULT_SEED = 5489

DEFAULT_PREFETCH_SIZE = 16  # MindSpore's default
DEFAULT_NUM_PARALLEL_WORKERS = 8  # MindSpore's default, what get_num_parallel_workers reports until set

_lock = threading.Lock()
_seed = DEFAULT_SEED
_seed_set = False
_prefetch_size = DEFAULT_PREFETCH_SIZE
_prefetch_enabled = True
_num_parallel_workers = None  # None: never set


def _check_positive_int32(value, name, range_message):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} isn't of type int.")
    if value <= 0 or value > INT32_MAX:
        raise ValueError(range_message)


def set_prefetch_size(size):
    """Sets how many blocks (of up to 512 rows, or of batches after `batch`) an iterator's
    background thread may hold ready ahead of the consumer. Default: 16.

    Raises TypeError if `size` is not an int, ValueError if it is not in [1, 2147483647].
    """
    global _prefetch_size
    _check_positive_int32(size, "size", "Prefetch size given is not within the required range.")
    with _lock:
        _prefetch_size = size


def get_prefetch_size():
    """The prefetch size (see `set_prefetch_size`)."""
    return _prefetch_size


def set_enable_prefetch(enable):
    """msrt's switch (not in MindSpore): with False, iterators run the pipeline in the calling
    thread, computing nothing ahead. Default: True. TypeError if `enable` is not a bool."""
    global _prefetch_enabled
    if not isinstance(enable, bool):
        raise TypeError(f"enable isn't of type bool, got {type(enable).__name__}.")
    _prefetch_enabled = enable


def get_enable_prefetch():
    """Whether iterators prefetch in a background thread (see `set_enable_prefetch`)."""
    return _prefetch_enabled


def set_num_parallel_workers(num):
    """Sets the worker count of every `map` created without its own `num_parallel_workers`.

    Raises TypeError if `num` is not an int, ValueError if it is not in [1, 2147483647].
    """
    global _num_parallel_workers
    _check_positive_int32(num, "num", "Number of parallel workers given is not within the required range.")
    with _lock:
        _num_parallel_workers = num


def get_num_parallel_workers():
    """The value `set_num_parallel_workers` set, else 8 (MindSpore's default).

    Until it is set, a `map` without `num_parallel_workers` runs in the iterator's own
    thread, where transforms with a vectorised path work on whole blocks: the default
    is reported for compatibility but not applied.
    """
    return DEFAULT_NUM_PARALLEL_WORKERS if _num_parallel_workers is None else _num_parallel_workers


def _map_workers():
    """Workers of a map without its own count: the configured one, or 1 while none is set."""
    return 1 if _num_parallel_workers is None else _num_parallel_workers


def set_seed(seed):
    """Sets the pipeline seed; like MindSpore, also seeds `random` and `numpy.random`.

    Raises TypeError if `seed` is not an int, ValueError if it is outside
    [0, 4294967295].
    """
    global _seed, _seed_set
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError("seed isn't of type int.")
    if seed < 0 or seed > UINT32_MAX:
        raise ValueError(f"seed given is not within the required range [0, UINT32_MAX({UINT32_MAX})].")
    with _lock:
        _seed = seed
        _seed_set = True
    random.seed(seed)
    np.random.seed(seed)


def get_seed():
    """The seed set by `set_seed`, or 5489 (MindSpore's default) if none was set."""
    return _seed


def _iterator_seed():
    """Seed of a new iterator: the configured one, or a fresh random one if none was set."""
    with _lock:
        if _seed_set:
            return _seed
    return int.from_bytes(os.urandom(4), "little")


def _reset():
    """Back to the state of a fresh process (for tests)."""
    global _seed, _seed_set, _prefetch_size, _prefetch_enabled, _num_parallel_workers
    with _lock:
        _seed = DEFAULT_SEED
        _seed_set = False
        _prefetch_size = DEFAULT_PREFETCH_SIZE
        _prefetch_enabled = True
        _num_parallel_workers = None
