"""`mindspore.communication`: the cluster and its communication groups.

`comm_func` holds the functional collectives (all_reduce, all_gather_into_tensor, ...).
`init()` joins the cluster that the environment describes (msrun, mpirun, or
MS_ROLE / MS_SCHED_HOST / MS_SCHED_PORT / MS_WORKER_NUM set by hand; see
docs/distributed.md), creates the world group and makes the auto-parallel
context's `device_num` and `global_rank` the cluster's.
"""
from . import comm_func
from .management import (
    HCCL_WORLD_COMM_GROUP,
    MCCL_WORLD_COMM_GROUP,
    NCCL_WORLD_COMM_GROUP,
    GlobalComm,
    create_group,
    destroy_group,
    get_group_rank_from_world_rank,
    get_group_size,
    get_local_rank,
    get_local_rank_size,
    get_process_group_ranks,
    get_rank,
    get_world_rank_from_group_rank,
    init,
    release,
)

__all__ = [
    "comm_func",
    "GlobalComm",
    "init",
    "release",
    "get_rank",
    "get_group_size",
    "get_local_rank",
    "get_local_rank_size",
    "get_world_rank_from_group_rank",
    "get_group_rank_from_world_rank",
    "get_process_group_ranks",
    "create_group",
    "destroy_group",
    "HCCL_WORLD_COMM_GROUP",
    "NCCL_WORLD_COMM_GROUP",
    "MCCL_WORLD_COMM_GROUP",
]
