"""msrt: a deep-learning runtime steered by a MindSpore-compatible context.

    import msrt as ms
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
"""
from . import _C
from ._warnings import ContextDeprecationWarning, DeviceNotApplicableWarning, MsrtWarning

_C._set_warning_classes(MsrtWarning, ContextDeprecationWarning, DeviceNotApplicableWarning)

from . import context  # noqa: E402
from .context import (  # noqa: E402
    GRAPH_MODE,
    PYNATIVE_MODE,
    ParallelMode,
    get_auto_parallel_context,
    get_context,
    get_ps_context,
    reset_auto_parallel_context,
    reset_ps_context,
    set_auto_parallel_context,
    set_context,
    set_ps_context,
)

__version__ = "0.1.0"

__all__ = [
    "GRAPH_MODE",
    "PYNATIVE_MODE",
    "ParallelMode",
    "context",
    "get_auto_parallel_context",
    "get_context",
    "get_ps_context",
    "reset_auto_parallel_context",
    "reset_ps_context",
    "set_auto_parallel_context",
    "set_context",
    "set_ps_context",
    "MsrtWarning",
    "ContextDeprecationWarning",
    "DeviceNotApplicableWarning",
]
