"""The communication management functions of `mindspore.communication`.

Checks and state live in C++ (src/parallel/cluster.h, groups.h); this module
checks argument types, picks the backend from the device target and keeps
`GlobalComm` in step.
"""
import atexit
import sys

from .. import _C

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"

_BACKEND_OF_DEVICE = {"CPU": "mccl", "GPU": "nccl", "Ascend": "hccl"}


class GlobalComm:
    """The communication backend in use and the name of its world group.

    Before `init()`: MindSpore's defaults ("hccl", "hccl_world_group"); every
    world group name refers to the world once it exists.
    """

    BACKEND = "hccl"
    WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP
    INITED = False
    CHECK_ENVS = True


def _check_str(name, value, function):
    if not isinstance(value, str):
        raise TypeError(f"For '{function}', the argument '{name}' must be a str, but got {type(value).__name__}.")


def _check_int(name, value, function):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{function}', the argument '{name}' must be an int, but got {type(value).__name__}.")


def _version():
    from .. import __version__
    return __version__


_failed = False


def _note_failure(hook):
    # A script that dies of an exception does not release at exit: the
    # scheduler then sees the rank fail instead of finish.
    def excepthook(kind, value, traceback):
        global _failed
        _failed = True
        hook(kind, value, traceback)
    return excepthook


def _release_at_exit():
    if not _failed:
        release()


def init(backend_name=None):
    """Joins the cluster and creates the world communication group.

    A process started with MS_ROLE=MS_SCHED serves the job as its scheduler
    and exits when the job ends (status 0, or 1 when a worker failed).
    """
    if backend_name is not None:
        _check_str("backend_name", backend_name, "init")
    if GlobalComm.INITED:
        raise RuntimeError("msrt.communication.init() was already called; call release() first.")
    config = _C.parallel.cluster_config()
    if config["role"] == "MS_SCHED":
        sys.exit(_C.parallel.run_scheduler(_version()))
    if backend_name is None:
        from ..context import get_context
        backend_name = _BACKEND_OF_DEVICE.get(get_context("device_target"), "mccl")
    info = _C.parallel.init_world(backend_name.lower(), _version())
    GlobalComm.BACKEND = info["backend"]
    GlobalComm.WORLD_COMM_GROUP = info["world_name"]
    GlobalComm.INITED = True
    if not getattr(init, "_hooked", False):
        init._hooked = True
        sys.excepthook = _note_failure(sys.excepthook)
        atexit.register(_release_at_exit)


def release():
    """Releases the groups and leaves the cluster (nothing before init)."""
    _C.parallel.release_world()
    GlobalComm.INITED = False
    GlobalComm.BACKEND = "hccl"
    GlobalComm.WORLD_COMM_GROUP = HCCL_WORLD_COMM_GROUP


def _group(group, function):
    _check_str("group", group, function)
    return _C.parallel.group_info(group)


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank in `group`."""
    return _group(group, "get_rank")["rank"]


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of ranks in `group`."""
    return _group(group, "get_group_size")["size"]


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This process's rank among the members of `group` on its host."""
    return _group(group, "get_local_rank")["local_rank"]


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    """The number of members of `group` on this host."""
    return _group(group, "get_local_rank_size")["local_size"]


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP):
    """The world ranks of `group`'s members, in group rank order."""
    return list(_group(group, "get_process_group_ranks")["world_ranks"])


def _check_not_world(group, function):
    if group in (HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP):
        raise ValueError(f"For '{function}', the group must not be the world group, but got '{group}'.")


def get_world_rank_from_group_rank(group, group_rank_id):
    """The world rank of rank `group_rank_id` of `group`."""
    _check_str("group", group, "get_world_rank_from_group_rank")
    _check_int("group_rank_id", group_rank_id, "get_world_rank_from_group_rank")
    _check_not_world(group, "get_world_rank_from_group_rank")
    ranks = _C.parallel.group_info(group)["world_ranks"]
    if not 0 <= group_rank_id < len(ranks):
        raise ValueError(f"For 'get_world_rank_from_group_rank', group_rank_id must be in [0, {len(ranks)}) for "
                         f"group '{group}', but got {group_rank_id}.")
    return ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id, group):
    """The rank in `group` of world rank `world_rank_id`."""
    _check_int("world_rank_id", world_rank_id, "get_group_rank_from_world_rank")
    _check_str("group", group, "get_group_rank_from_world_rank")
    _check_not_world(group, "get_group_rank_from_world_rank")
    ranks = list(_C.parallel.group_info(group)["world_ranks"])
    if world_rank_id not in ranks:
        raise ValueError(f"For 'get_group_rank_from_world_rank', world rank {world_rank_id} is not a member of "
                         f"group '{group}' (ranks {ranks}).")
    return ranks.index(world_rank_id)


def create_group(group, rank_ids):
    """Creates the communication group `group` of the world ranks `rank_ids`.

    Every process in `rank_ids` makes the same call with the same list.
    """
    _check_str("group", group, "create_group")
    if not isinstance(rank_ids, list):
        raise TypeError(f"For 'create_group', the argument 'rank_ids' must be a list, but got "
                        f"{type(rank_ids).__name__}.")
    for rank in rank_ids:
        _check_int("rank_ids", rank, "create_group")
    if not rank_ids:
        raise ValueError("For 'create_group', the argument 'rank_ids' must not be empty.")
    if len(set(rank_ids)) != len(rank_ids):
        raise ValueError(f"For 'create_group', the argument 'rank_ids' must not hold duplicates, but got {rank_ids}.")
    _C.parallel.create_group(group, rank_ids)


def destroy_group(group):
    """Destroys the communication group `group` (not the world)."""
    _check_str("group", group, "destroy_group")
    _C.parallel.destroy_group(group)
