"""msrt: a deep-learning runtime steered by a MindSpore-compatible context.

    import msrt as ms
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
"""
import os as _os

# oneDNN's OpenMP workers must not spin while idle: on a small machine they
# starve the Python thread and the eager dispatcher (a LeNet step went from
# ~1 ms to ~450 ms). It must be set before libgomp loads with _C. A bounded
# spin (GOMP_SPINCOUNT=30000, about 0.3 ms) is no safe default either: with
# other processes on a 2-core machine it made LeNet-5 training steps 3-6x
# slower in GRAPH_MODE and 2.5x in PYNATIVE_MODE than passive waits.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The native module lives in the build tree: <repo>/build by default, or the
# build directory named by MSRT_BUILD_DIR.
_build = _os.environ.get("MSRT_BUILD_DIR") or _os.path.join(_os.path.dirname(__file__), "..", "..", "build")
__path__.append(_os.path.join(_os.path.abspath(_build), "python", "msrt"))

from . import _C  # noqa: E402
from ._warnings import ContextDeprecationWarning, DeviceNotApplicableWarning, MsrtWarning  # noqa: E402

_C._set_warning_classes(MsrtWarning, ContextDeprecationWarning, DeviceNotApplicableWarning)
# Ctrl-C stops msrt's kernels and waits too, not only Python code.
_C._install_interrupt_handler()
# os.fork drains the operator queue before fork() itself runs: a sanitizer's
# fork interceptor locks its allocator ahead of pthread_atfork handlers, and
# the dispatcher must not be allocating then (Note [Fork] in src/runtime/fork.cc).
_os.register_at_fork(before=_C._drain_before_fork)

from . import context  # noqa: E402
from . import runtime  # noqa: E402
from .context import (  # noqa: E402
    COMPATIBLE,
    GRAPH_MODE,
    LAX,
    PYNATIVE_MODE,
    STRICT,
    ParallelMode,
    get_auto_parallel_context,
    get_context,
    get_ps_context,
    reset_auto_parallel_context,
    reset_ps_context,
    set_auto_parallel_context,
    set_context,
    set_ps_context,
    get_offload_context,
    set_offload_context,
    get_algo_parameters,
    reset_algo_parameters,
    set_algo_parameters,
)

# Tensors, dtypes, parameters, ops and autodiff (`ms.Tensor`, `ms.float32`, ...).
from . import common  # noqa: E402  (first: the tensor modules import its dtype module)
from .common import dtype  # noqa: E402
from .common.dtype import *  # noqa: E402,F401,F403
from ._tensor import Tensor  # noqa: E402
from_numpy = Tensor.from_numpy  # mindspore.from_numpy: shares the array's memory
from .common.parameter import Parameter, ParameterTuple  # noqa: E402
from .common.seed import get_seed, set_seed  # noqa: E402
from ._grad import grad, value_and_grad  # noqa: E402
from . import ops  # noqa: E402
from ._jit import jit, jit_class, ms_function, mutable  # noqa: E402
from .common.jit_config import JitConfig, get_jit_config  # noqa: E402
from ._vmap import vmap  # noqa: E402
from .common import api as _common_api, tensor as _common_tensor  # noqa: E402,F401 - ms.common.api, ms.common.tensor
from ._export import export  # noqa: E402
from ._graph_files import load  # noqa: E402

GraphCaptureError = _C.GraphCaptureError

_CHECKPOINT_FUNCTIONS = ("save_checkpoint", "load_checkpoint", "load_param_into_net", "parse_print")


def __getattr__(name):
    # Checkpoint functions live in msrt.train, imported on first use.
    if name in _CHECKPOINT_FUNCTIONS:
        from .train import serialization

        return getattr(serialization, name)
    raise AttributeError(f"module 'msrt' has no attribute '{name}'")


__version__ = "0.1.0"

__all__ = [
    "GRAPH_MODE",
    "PYNATIVE_MODE",
    "STRICT",
    "COMPATIBLE",
    "LAX",
    "ParallelMode",
    "context",
    "runtime",
    "get_auto_parallel_context",
    "get_context",
    "get_ps_context",
    "reset_auto_parallel_context",
    "reset_ps_context",
    "set_auto_parallel_context",
    "set_context",
    "set_ps_context",
    "set_offload_context",
    "get_offload_context",
    "set_algo_parameters",
    "get_algo_parameters",
    "reset_algo_parameters",
    "MsrtWarning",
    "ContextDeprecationWarning",
    "DeviceNotApplicableWarning",
    "Tensor",
    "from_numpy",
    "Parameter",
    "ParameterTuple",
    "set_seed",
    "get_seed",
    "grad",
    "value_and_grad",
    "jit",
    "jit_class",
    "ms_function",
    "mutable",
    "JitConfig",
    "get_jit_config",
    "vmap",
    "export",
    "load",
    "GraphCaptureError",
    "save_checkpoint",
    "load_checkpoint",
    "load_param_into_net",
    "parse_print",
    "ops",
    "amp",
    "Profiler",
    "common",
    "dtype",
]
__all__ += dtype.__all__  # noqa: F405 - the checkpoint functions come from __getattr__

# Cells, optimizers and the training loop (`ms.nn`, `ms.train.Model`, and `ms.Model` as MindSpore 2.x exports it).
from . import dataset, mindrecord, nn, profiler, train  # noqa: E402,F401 - ms.nn etc., outside __all__
from . import amp  # noqa: E402
from .profiler import Profiler  # noqa: E402
from .train import (  # noqa: E402,F401 - ms.Model etc., outside __all__ as in MindSpore
    BackupAndRestore, Callback, CheckpointConfig, DynamicLossScaleManager, EarlyStopping, FixedLossScaleManager,
    History, LambdaCallback, LossMonitor, LossScaleManager, Model, ModelCheckpoint, ReduceLROnPlateau, RunContext,
    SummaryCollector, SummaryRecord, TimeMonitor, data_sink)
