"""`ms.JitConfig`: a network's own compile settings (MindSpore's `mindspore.JitConfig`).

A JitConfig given to `Cell.set_jit_config` or `ms.jit(jit_config=...)` applies
to that network's compiles and calls only, over the global context: its
`jit_level` and `infer_boost` as the context key `jit_config`, its
`jit_syntax_level` and `debug_level` as those keys (unset ones leave the
context's value). The values are checked by the context's own records.
"""
import contextlib
import warnings

from .. import context as _context
from .._warnings import DeviceNotApplicableWarning

_SYNTAX_LEVELS = {"": None, "STRICT": _context.STRICT, "COMPATIBLE": _context.COMPATIBLE, "LAX": _context.LAX}
_DEBUG_LEVELS = {"RELEASE": _context.RELEASE, "DEBUG": _context.DEBUG}
# What msrt runs: a compiled graph launched kernel by kernel; "sink" is Ascend's.
_EXC_MODES = ("auto", "sink", "no_sink")


def _choice(name, value, table):
    if not isinstance(value, str):
        raise TypeError(f"For 'JitConfig', the argument '{name}' must be str, but got {type(value).__name__}.")
    if value not in table:
        raise ValueError(f"For 'JitConfig', the argument '{name}' must be one of {list(table)}, but got {value!r}.")
    return table[value] if isinstance(table, dict) else value


class JitConfig:
    """Compile settings of one network:

        net.set_jit_config(ms.JitConfig(jit_level="O0"))

    jit_level "O0" runs only the passes a graph needs, "O1" every
    optimisation and graph-kernel fusion, "O2" is "O1" on CPU and GPU;
    "" keeps the context's. jit_syntax_level "STRICT" or "LAX" ("" keeps
    the context's); debug_level "RELEASE" or "DEBUG"; infer_boost "on"
    (Ascend's, with "O0" only) or "off"; exc_mode "auto" or "no_sink"
    ("sink" is Ascend's whole-graph sinking: msrt launches kernel by kernel).
    """

    def __init__(self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE",
                 infer_boost="off", **kwargs):
        if _choice("exc_mode", exc_mode, _EXC_MODES) == "sink":
            warnings.warn("For 'JitConfig', exc_mode 'sink' (whole graphs sunk to the device) is Ascend's; msrt "
                          "launches compiled graphs kernel by kernel, as 'no_sink'.", DeviceNotApplicableWarning,
                          stacklevel=2)
        overrides = {}
        if jit_level != "" or infer_boost != "off":
            sub = {"infer_boost": infer_boost}
            if jit_level != "":
                sub["jit_level"] = jit_level
            overrides["jit_config"] = sub
        syntax = _choice("jit_syntax_level", jit_syntax_level, _SYNTAX_LEVELS)
        if syntax is not None:
            overrides["jit_syntax_level"] = syntax
        overrides["debug_level"] = _choice("debug_level", debug_level, _DEBUG_LEVELS)
        try:  # checked by the context's records, nothing stored
            with _context.override(**overrides):
                pass
        except (TypeError, ValueError) as error:
            message = str(error).removeprefix("For 'context.set_context', ")
            raise type(error)(f"For 'JitConfig', {message}") from None
        self._overrides = overrides
        self.jit_config_dict = dict(kwargs, jit_level=jit_level, exc_mode=exc_mode,
                                    jit_syntax_level=jit_syntax_level, debug_level=debug_level,
                                    infer_boost=infer_boost)

    @contextlib.contextmanager
    def applied(self):
        """Its settings for the current thread until the block ends."""
        with _context.override(**self._overrides):
            yield

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self.jit_config_dict.items())
        return f"JitConfig({items})"


def get_jit_config():
    """The global jit_config of the context (`set_context(jit_config=...)`)."""
    return _context.get_context("jit_config")


__all__ = ["JitConfig", "get_jit_config"]
