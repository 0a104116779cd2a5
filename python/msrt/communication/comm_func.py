"""`mindspore.communication.comm_func`: the collectives as functions on Tensors.

Each runs the collective op of the same name (`ops.AllReduce`, ...) on the
communicator of `group`; `msrt.communication.init()` makes the world group.
Ranks named here (`src`, `dst`) are global ranks, as in MindSpore.
"""
from .. import _C
from .._tensor import Tensor
from ..common import dtype as mstype
from ..ops._api import _invoke
from ..ops.operations.comm_ops import ReduceOp

__all__ = ["all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast", "barrier",
           "send", "recv"]

_WORLD = _C.parallel.WORLD_GROUP


def _check(name, tensor, group):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"For '{name}', the input 'tensor' must be a Tensor, but got {type(tensor).__name__}.")
    _check_group(name, group)


def _check_group(name, group):
    if not isinstance(group, str):
        raise TypeError(f"For '{name}', the argument 'group' must be a str, but got {type(group).__name__}.")


def _group_rank(name, arg, rank, group):
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError(f"For '{name}', the argument '{arg}' must be an int, but got {type(rank).__name__}.")
    return _C.parallel.group_rank_of_world_rank(group, rank)


def all_reduce(tensor, op=ReduceOp.SUM, group=_WORLD):
    """`tensor` reduced across `group` (sum, max, min or prod); every rank gets the result."""
    _check("all_reduce", tensor, group)
    return _invoke("all_reduce", (tensor,), {"op": op, "group": group})


def all_gather_into_tensor(tensor, group=_WORLD):
    """The tensors of `group`'s ranks concatenated along axis 0, rank order."""
    _check("all_gather_into_tensor", tensor, group)
    return _invoke("all_gather", (tensor,), {"group": group})


def reduce_scatter_tensor(tensor, op=ReduceOp.SUM, group=_WORLD):
    """`tensor` reduced across `group`; rank r gets chunk r of axis 0."""
    _check("reduce_scatter_tensor", tensor, group)
    return _invoke("reduce_scatter", (tensor,), {"op": op, "group": group})


def broadcast(tensor, src=0, group=_WORLD):
    """The tensor of global rank `src`, on every rank of `group`."""
    _check("broadcast", tensor, group)
    root = _group_rank("broadcast", "src", src, group)
    return _invoke("broadcast", (tensor,), {"root_rank": root, "group": group})[0]


def barrier(group=_WORLD):
    """Returns when every rank of `group` has called it."""
    _check_group("barrier", group)
    _invoke("barrier", (), {"group": group})


def send(tensor, dst=0, group=_WORLD, tag=0):
    """Sends `tensor` to global rank `dst`, whose `recv` names this rank and `tag`."""
    _check("send", tensor, group)
    dest = _group_rank("send", "dst", dst, group)
    _invoke("send", (tensor,), {"sr_tag": tag, "dest_rank": dest, "group": group})


def recv(tensor, src=0, group=_WORLD, tag=0):
    """Receives from global rank `src` the tensor it sends with `tag`; `tensor`
    gives the shape and dtype. Returns the received Tensor."""
    _check("recv", tensor, group)
    source = _group_rank("recv", "src", src, group)
    return _invoke("receive", (), {"sr_tag": tag, "src_rank": source, "shape": list(tensor.shape),
                                   "dtype": mstype._core_name(tensor.dtype, "argument 'tensor'"), "group": group})
