"""msrt: a deep-learning runtime steered by a MindSpore-compatible context.

    import msrt as ms
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
"""
import os as _os

# The native module lives in the build tree: <repo>/build by default, or the
# build directory named by MSRT_BUILD_DIR.
_build = _os.environ.get("MSRT_BUILD_DIR") or _os.path.join(_os.path.dirname(__file__), "..", "..", "build")
__path__.append(_os.path.join(_os.path.abspath(_build), "python", "msrt"))

from . import _C  # noqa: E402
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
