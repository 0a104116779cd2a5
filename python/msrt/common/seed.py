"""The global seed: `ms.set_seed(seed)` / `ms.get_seed()`.

One seed drives every source of randomness msrt has: the C++ generator
(dropout and other random ops), the initializers (each draw takes the next
stream of a generator keyed by (seed, draw count), independent of NumPy's
global state), the dataset pipeline when `msrt.dataset.config` exists, and
NumPy's global generator (MindSpore seeds it too, and scripts rely on that).
"""
import importlib
import importlib.util
import secrets
import threading

import numpy as np

from .. import _C

__all__ = ["set_seed", "get_seed"]

_lock = threading.Lock()
_global_seed = None
_draws = 0
_entropy = secrets.randbits(63)
_MAX_SEED = (1 << 32) - 1  # the initializers' seed while none is set


def set_seed(seed):
    """Sets the global seed (a non-negative int)."""
    global _global_seed, _draws
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"The argument 'seed' must be type of int, but got {type(seed)}.")
    if seed < 0:
        raise ValueError(f"The argument 'seed' must be a non-negative int, but got {seed}.")
    if seed > _MAX_SEED:
        # MindSpore's limit too (its dataset seed is a uint32); checked first so a failed call changes nothing.
        raise ValueError(f"The argument 'seed' must be at most {_MAX_SEED} (2**32 - 1), but got {seed}.")
    with _lock:
        _global_seed = seed
        _draws = 0
    native = getattr(_C, "set_seed", None)
    if native is not None:
        native(seed)
    np.random.seed(seed % (1 << 32))
    if importlib.util.find_spec("msrt.dataset") is not None:
        try:
            config = importlib.import_module("msrt.dataset.config")
        except ImportError:
            config = None
        if config is not None and hasattr(config, "set_seed"):
            config.set_seed(seed)


def get_seed():
    """The global seed, or None when none was set."""
    return _global_seed


def _reset():
    """Back to the state of a fresh process (for tests): no global seed."""
    global _global_seed, _draws
    with _lock:
        _global_seed = None
        _draws = 0


def _init_generator():
    """A NumPy Generator for the next initializer draw: deterministic after
    set_seed (the n-th draw gets the n-th stream), random otherwise."""
    global _draws
    with _lock:
        _draws += 1
        key = [_entropy if _global_seed is None else _global_seed, _draws]
    return np.random.default_rng(key)
