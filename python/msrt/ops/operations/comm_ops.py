"""`ops.operations.comm_ops`: the collective communication Primitives (AllReduce,
AllGather, ReduceScatter, Broadcast, AlltoAll, Send, Receive), where MindSpore
keeps them, and `ReduceOp`. They run the communicator of their `group`
(`msrt.communication.init()` makes the world group)."""
from . import _primitives
from .._api import install_module


class ReduceOp:
    """The reductions of AllReduce and ReduceScatter."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


# The declared ones whose form names this module ("comm_ops.Name(...)(...)" in C++).
__all__ = install_module(globals(), "comm_ops", vars(_primitives)) + ["ReduceOp"]
