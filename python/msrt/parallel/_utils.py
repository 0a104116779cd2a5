"""The auto-parallel context as the training wrappers read it (MindSpore's
`mindspore.parallel._utils` helpers of the same names)."""
from .. import _C
from ..context import ParallelMode, get_auto_parallel_context

# The modes that need sharding strategies: msrt does not split operators yet.
_UNSUPPORTED = (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL, ParallelMode.HYBRID_PARALLEL)


def _get_parallel_mode():
    return get_auto_parallel_context("parallel_mode")


def _get_gradients_mean():
    return get_auto_parallel_context("gradients_mean")


def _get_device_num():
    return get_auto_parallel_context("device_num")


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
