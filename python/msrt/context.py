"""The execution context, as MindSpore's `mindspore.context` module offers it.

Every key is declared once in C++; this module only forwards calls, so it
keeps no defaults and repeats no checks.
"""
import contextlib

from . import _C

GRAPH_MODE = 0
PYNATIVE_MODE = 1
# jit_syntax_level values.
STRICT = 0
COMPATIBLE = 1
LAX = 2
# debug_level values.
RELEASE = 0
DEBUG = 1

set_context = _C.set_context
get_context = _C.get_context
set_auto_parallel_context = _C.set_auto_parallel_context
get_auto_parallel_context = _C.get_auto_parallel_context
reset_auto_parallel_context = _C.reset_auto_parallel_context
set_ps_context = _C.set_ps_context
get_ps_context = _C.get_ps_context
reset_ps_context = _C.reset_ps_context
set_offload_context = _C.set_offload_context
get_offload_context = _C.get_offload_context
# mindspore.parallel's strategy-search parameters are a table of their own.
set_algo_parameters = _C.set_algo_parameters
get_algo_parameters = _C.get_algo_parameters
reset_algo_parameters = _C.reset_algo_parameters

_FAMILIES = ("context", "auto_parallel_context", "ps_context", "offload_context", "algo_parameters")


class ParallelMode:
    """Parallel modes for `set_auto_parallel_context(parallel_mode=...)`."""

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


def _family_of(key):
    # Unknown keys go to the runtime context, whose error lists close names.
    return _C.family_of(key) or "context"


class Explanation(dict):
    """What a key is set to, what is in effect and why (a dict; prints as text)."""

    def __init__(self, fields, text):
        super().__init__(fields)
        self._text = text

    def __str__(self):
        return self._text


def explain(key):
    """Explains one key of any of the contexts."""
    return Explanation(*_C.explain(_family_of(key), key))


def summary(all=False):  # noqa: A002 - mirrors the keyword users pass
    """A table of the keys that differ from their defaults (or of every key)."""
    return _C.summary(all)


def options(family=None):
    """Every key with its type, default, devices and doc, for one or all families."""
    families = _FAMILIES if family is None else (family,)
    return [info for name in families for info in _C.options(name)]


def snapshot():
    """The whole context state as a JSON-serialisable dict."""
    return _C.snapshot()


def load(state):
    """Restores a `snapshot()`: every key or none."""
    _C.load(state)


def set_profile(name):
    """Selects a compatibility profile: 'r0.5', 'r1.0', 'r1.6' or 'r2.3' (default)."""
    _C.set_profile(name)


def get_profile():
    return _C.get_profile()


def effective(key):
    """A key's value after environment overrides (what the runtime acts on)."""
    return _C.effective(_family_of(key), key)


@contextlib.contextmanager
def override(**kwargs):
    """Sets keys for the current thread only, until the block ends.

        with ms.context.override(mode=ms.GRAPH_MODE):
            ...
    """
    groups = {}
    for key, value in kwargs.items():
        groups.setdefault(_family_of(key), {})[key] = value
    pushed = 0
    try:
        for family, values in groups.items():
            _C.push_override(family, values)
            pushed += 1
        yield
    finally:
        for _ in range(pushed):
            _C.pop_override()


def _declare_consumer(key, consumer):
    """Names a part of msrt that acts on `key` (shown by explain and the docs)."""
    _C.declare_consumer(_family_of(key), key, consumer)


def _mark_in_effect(key, reason):
    """Marks a key as used by the runtime (a different value is then refused)."""
    _C.mark_in_effect(_family_of(key), key, reason)


__all__ = [
    "GRAPH_MODE",
    "PYNATIVE_MODE",
    "STRICT",
    "COMPATIBLE",
    "LAX",
    "RELEASE",
    "DEBUG",
    "ParallelMode",
    "set_context",
    "get_context",
    "set_auto_parallel_context",
    "get_auto_parallel_context",
    "reset_auto_parallel_context",
    "set_ps_context",
    "get_ps_context",
    "reset_ps_context",
    "set_offload_context",
    "get_offload_context",
    "set_algo_parameters",
    "get_algo_parameters",
    "reset_algo_parameters",
    "explain",
    "summary",
    "options",
    "snapshot",
    "load",
    "set_profile",
    "get_profile",
    "effective",
    "override",
]
