"""Global settings of the data pipeline (`msrt.dataset.config`, as `mindspore.dataset.config`).

The seed decides every random choice a pipeline makes (samplers, `shuffle`).
Until `set_seed` is called each new iterator draws a fresh seed from the OS, as
MindSpore does while its seed is the default; after `set_seed(s)` every
iterator created from the same pipeline yields the same rows in the same order.
"""
import os
import random
import threading

import numpy as np

from ._validate import UINT32_MAX

# std::mt19937::default_seed, what MindSpore's get_seed() returns before set_seed.
DEFAULT_SEED = 5489

_lock = threading.Lock()
_seed = DEFAULT_SEED
_seed_set = False


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
    global _seed, _seed_set
    with _lock:
        _seed = DEFAULT_SEED
        _seed_set = False
