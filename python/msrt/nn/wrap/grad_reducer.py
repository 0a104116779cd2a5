"""`nn.DistributedGradReducer`: the gradients of data-parallel training,
all-reduced over a communication group."""
from ... import _C
from ...common import dtype as mstype
from ...ops import functional as F
from ...ops.operations.comm_ops import AllReduce, ReduceOp
from ..cell import Cell

__all__ = ["DistributedGradReducer"]


class DistributedGradReducer(Cell):
    """`reducer(grads)`: each gradient summed over `group` by AllReduce and,
    when `mean`, divided by `degree` (the group's size unless given).

    `mean=None` reads the auto-parallel context's `gradients_mean`. Every
    gradient is reduced in float32 and cast back to its own dtype. A parameter
    with `layerwise_parallel=True` keeps its local gradient. `fusion_type` is
    checked and kept; msrt runs one AllReduce per gradient. `group` defaults to
    the world group (any of its names: GlobalComm.WORLD_COMM_GROUP)."""

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1, group=_C.parallel.WORLD_GROUP):
        super().__init__(auto_prefix=False)
        from ...common.parameter import Parameter

        if isinstance(parameters, Parameter) or not isinstance(parameters, (list, tuple)) or \
                not all(isinstance(p, Parameter) for p in parameters):
            raise TypeError(f"For 'DistributedGradReducer', 'parameters' must be a list or tuple of Parameters, "
                            f"but got {type(parameters).__name__}.")
        if mean is None:
            from ...parallel._utils import _get_gradients_mean
            mean = _get_gradients_mean()
        if not isinstance(mean, bool):
            raise TypeError(f"For 'DistributedGradReducer', 'mean' must be a bool, but got {type(mean).__name__}.")
        if isinstance(fusion_type, bool) or not isinstance(fusion_type, int):
            raise TypeError(f"For 'DistributedGradReducer', 'fusion_type' must be an int, but got "
                            f"{type(fusion_type).__name__}.")
        if not isinstance(group, str):
            raise TypeError(f"For 'DistributedGradReducer', 'group' must be a str, but got {type(group).__name__}.")
        if degree is None:
            degree = _C._group_info(group)["size"]  # communication.get_group_size(group)
        elif isinstance(degree, bool) or not isinstance(degree, int) or degree <= 0:
            raise ValueError(f"For 'DistributedGradReducer', 'degree' must be an int greater than 0, but got "
                             f"{degree!r}.")
        self.mean = mean
        self.degree = degree
        self.fusion_type = fusion_type
        self.group = group
        self.allreduce_filter = tuple(not getattr(p, "layerwise_parallel", False) for p in parameters)
        self._allreduce = AllReduce(ReduceOp.SUM, group)

    def construct(self, grads):
        if len(grads) != len(self.allreduce_filter):
            raise ValueError(f"For 'DistributedGradReducer', the number of gradients must be the number of "
                             f"parameters ({len(self.allreduce_filter)}), but got {len(grads)}.")
        out = []
        for grad, reduce in zip(grads, self.allreduce_filter):
            if reduce:
                dtype = grad.dtype
                if dtype != mstype.float32:
                    grad = F.cast(grad, mstype.float32)
                grad = self._allreduce(grad)
                if self.mean:
                    grad = F.mul(grad, 1.0 / self.degree)
                if dtype != mstype.float32:
                    grad = F.cast(grad, dtype)
            out.append(grad)
        return tuple(out)
