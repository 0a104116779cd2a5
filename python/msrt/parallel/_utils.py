"""The auto-parallel context as the training wrappers, cells and datasets read
it (MindSpore's `mindspore.parallel._utils` helpers of the same names)."""
import warnings

from .. import _C
from ..context import ParallelMode, get_auto_parallel_context

# The modes that need sharding strategies: msrt does not split operators yet.
_UNSUPPORTED = (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL, ParallelMode.HYBRID_PARALLEL)
# The modes whose compiler reads full_batch and a tuple dataset_strategy (MindSpore's rule).
_STRATEGY_MODES = (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)


def _get_parallel_mode():
    return get_auto_parallel_context("parallel_mode")


def _get_gradients_mean():
    return get_auto_parallel_context("gradients_mean")


def _get_device_num():
    return get_auto_parallel_context("device_num")


def _get_full_batch():
    return get_auto_parallel_context("full_batch")


def _get_gradient_fp32_sync():
    return get_auto_parallel_context("gradient_fp32_sync")


def _get_all_reduce_fusion_split_indices():
    """The all-reduce split indices of the world group (all_reduce_fusion_config, or
    comm_fusion's allreduce 'index' mode); [] when unset."""
    return list(get_auto_parallel_context("all_reduce_fusion_config"))


def _get_allreduce_fusion():
    """How comm_fusion left all-reduce fusion (Note [Communication fusion] in
    src/context/parallel_options.cc): {"enabled": bool (False after openstate=False),
    "threshold_mb": int (the bucket size its allreduce 'auto' or 'size' mode set; -1 when none
    was)}. Read from the context's state, which get_auto_parallel_context does not name."""
    state = _C.snapshot()["auto_parallel_context"]
    return {"enabled": state["_all_reduce_fusion_enabled"], "threshold_mb": state["_data_parallel_fusion_threshold"]}


def _check_trainable_parallel_mode(cell_name):
    """The parallel mode, refused when training cannot run in it yet."""
    mode = _get_parallel_mode()
    if mode in _UNSUPPORTED:
        raise RuntimeError(f"For '{cell_name}', parallel_mode '{mode}' is not supported yet: msrt trains in "
                           f"'{ParallelMode.STAND_ALONE}' and '{ParallelMode.DATA_PARALLEL}' only.")
    return mode


def _check_full_batch():
    """full_batch (dataset_strategy='full_batch') is for semi_auto_parallel and
    auto_parallel only: a RuntimeError in any other mode, as MindSpore raises
    when it compiles a network. In data_parallel a tuple dataset_strategy is
    refused as well: each rank feeds its own slice of the batch there, and only
    the sharding-strategy modes read the tuple."""
    mode = _get_parallel_mode()
    if mode in _STRATEGY_MODES:
        return
    if _get_full_batch():
        raise RuntimeError(f"full_batch could only be used under semi_auto_parallel or auto_parallel, but "
                           f"parallel_mode is '{mode}': set full_batch=False (dataset_strategy='data_parallel').")
    if mode == ParallelMode.DATA_PARALLEL and not isinstance(get_auto_parallel_context("dataset_strategy"), str):
        raise RuntimeError(f"dataset_strategy {get_auto_parallel_context('dataset_strategy')} is a sharding "
                           f"strategy, which only semi_auto_parallel and auto_parallel use; in data_parallel every "
                           f"rank feeds its own slice of the batch: set dataset_strategy='data_parallel'.")


def _get_parameter_broadcast():
    """Whether cells copy rank 0's parameters at their first call: the key's
    value in data_parallel (MindSpore's warning when neither it nor a seed
    makes the ranks start alike), False in the other modes."""
    if _get_parallel_mode() != ParallelMode.DATA_PARALLEL:
        return False
    broadcast = get_auto_parallel_context("parameter_broadcast")
    if not broadcast:
        from ..common.seed import get_seed

        if get_seed() is None:
            from .._warnings import MsrtWarning

            warnings.warn("data_parallel with neither parameter_broadcast nor a seed: ranks that initialise "
                          "parameters randomly start from different values; use set_auto_parallel_context("
                          "parameter_broadcast=True) or set_seed() to share them.", MsrtWarning, stacklevel=4)
    return broadcast


def _broadcast_parameters(params):
    """Every parameter in `params` set to rank 0's value (one Broadcast over the
    world group, each in its own dtype: exact for every dtype)."""
    if not params:
        return
    from ..ops.operations.comm_ops import Broadcast

    values = Broadcast(0)(tuple(params))
    for param, value in zip(params, values):
        param.set_data(value)


def _dataset_shards():
    """(num_shards, shard_id) of a source dataset created without them: the
    world's size and this process's rank in data_parallel after
    communication.init() (with more than one rank), else (None, None)."""
    from .. import _C

    if not _C.parallel.world_initialized() or _get_parallel_mode() != ParallelMode.DATA_PARALLEL:
        return None, None
    world = _C.parallel.world_info()
    if world["size"] <= 1:
        return None, None
    return world["size"], world["rank"]
