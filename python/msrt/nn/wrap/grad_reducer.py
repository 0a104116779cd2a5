"""`nn.DistributedGradReducer`: the gradients of data-parallel training,
all-reduced over a communication group in fusion buckets.

Note [Gradient fusion buckets]
The reducer plans its buckets once, when it is built, from the parameters and
the auto-parallel context; every rank builds the same plan from the same
network and context, so every rank issues the same all-reduces in the same
order. The rules (docs/distributed.md, "Gradient fusion buckets"):

1. Gradients of `layerwise_parallel` parameters are not reduced.
2. comm_fusion's openstate=False: one AllReduce per gradient.
3. A fusion id per parameter: the parameters' own `comm_fusion` when they do
   not all carry the same one; else, with split indices set
   (all_reduce_fusion_config, or comm_fusion's allreduce 'index' mode) and
   `fusion_type == 1`, segment k of the indices (index i closes a segment:
   parameters 0..i[0], i[0]+1..i[1], ..., the rest); else `fusion_type` for
   all. Id 0: that gradient is all-reduced alone.
4. Gradients are visited in reverse parameter order (the order backward
   produces them) and a gradient joins the open bucket of its (fusion id,
   reduction dtype); when comm_fusion set a size (allreduce mode 'auto':
   64 MB, 'size': its config; 1 MB = 2**20 bytes), a bucket that would pass
   it is closed first and a new one opened (a gradient larger than the size
   is a bucket of its own).
5. Buckets are issued in the order their last gradient is produced by
   backward: by their lowest parameter index, highest first.

A bucket is one `all_reduce_fused` operator (Note [Collective ops] in
src/ops/comm.cc): its kernel packs the bucket's gradients into one buffer,
multiplied by 1 / `degree` as they are copied when `mean`, all-reduces the
buffer in place and copies the parts out. In GRAPH_MODE the reducer is part
of the compiled training step (or compiles as a Cell when called alone); in
PYNATIVE_MODE it runs eagerly: one operator per bucket (and the casts of
gradient_fp32_sync) costs less than a compiled call's dispatch, and each
bucket's all-reduce waits only for its own gradients, so it runs beside the
backward operators of earlier layers still queued."""
from ... import _C
from ... import context as _context
from ...common import dtype as mstype
from ..._tensor import _op
from ...ops import functional as F
from ..cell import Cell

__all__ = ["DistributedGradReducer"]

for _key in ("gradient_fp32_sync", "all_reduce_fusion_config", "comm_fusion"):
    _context._declare_consumer(_key, "nn.DistributedGradReducer (data-parallel gradient buckets)")

_MB = 1 << 20
_HALF = (mstype.float16, mstype.bfloat16)


def _size_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _reduce_dtype(dtype, fp32_sync):
    return mstype.float32 if fp32_sync and dtype in _HALF else dtype


def _fusion_ids(parameters, split_indices, fusion_type):
    """Rule 3 of Note [Gradient fusion buckets]: a fusion id per parameter."""
    own = [p.comm_fusion for p in parameters]
    if len(set(own)) > 1:
        return own
    if split_indices and fusion_type == 1:
        count = len(parameters)
        for i in split_indices:
            if not 0 <= i < count:
                raise ValueError(f"For 'DistributedGradReducer', every all-reduce fusion split index "
                                 f"(all_reduce_fusion_config) must be in [0, {count - 1}] for {count} "
                                 f"parameters, but got {i} in {list(split_indices)}.")
        ids, segment, k = [], 1, 0
        for i in range(count):
            ids.append(segment)
            if k < len(split_indices) and split_indices[k] <= i:
                segment += 1
                k += 1
        return ids
    return [fusion_type] * len(parameters)


def plan_buckets(parameters, reduce, *, fusion_type=1, split_indices=(), threshold_mb=-1, enabled=True,
                 fp32_sync=True):
    """The buckets of Note [Gradient fusion buckets]: a tuple of tuples of parameter indices, in issue
    order. `reduce[i]` is False for a gradient that is not all-reduced."""
    order = [i for i in reversed(range(len(parameters))) if reduce[i]]
    if not enabled:
        return tuple((i,) for i in order)
    ids = _fusion_ids(parameters, split_indices, fusion_type)
    limit = threshold_mb * _MB if threshold_mb >= 0 else None
    closed, open_buckets = [], {}
    for i in order:
        if ids[i] == 0:
            closed.append([i])
            continue
        dtype = _reduce_dtype(parameters[i].dtype, fp32_sync)
        key = (ids[i], dtype)
        nbytes = _size_of(parameters[i].shape) * mstype.type_size_in_bytes(dtype)
        bucket = open_buckets.get(key)
        if bucket is not None and limit is not None and bucket[1] + nbytes > limit:
            closed.append(bucket[0])
            bucket = None
        if bucket is None:
            bucket = open_buckets[key] = [[], 0]
        bucket[0].append(i)
        bucket[1] += nbytes
    closed.extend(b[0] for b in open_buckets.values())
    # Issue order: a bucket is complete when backward produced its last (lowest-index) gradient.
    closed.sort(key=lambda b: -min(b))
    return tuple(tuple(b) for b in closed)


class DistributedGradReducer(Cell):
    """`reducer(grads)`: the gradients summed over `group` by AllReduce in fusion buckets and, when
    `mean`, divided by `degree` (the group's size unless given).

    `mean=None` reads the auto-parallel context's `gradients_mean`. Float16 and bfloat16 gradients are
    reduced in float32 and cast back when the context's `gradient_fp32_sync` is True (the default), in
    their own dtype when it is False. A parameter with `layerwise_parallel=True` keeps its local
    gradient. The buckets (`buckets`: tuples of parameter indices, in issue order) follow
    Note [Gradient fusion buckets]: `fusion_type` is the fusion id of every gradient when the
    parameters share one `comm_fusion`. `group` defaults to the world group (any of its names:
    GlobalComm.WORLD_COMM_GROUP)."""

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1, group=_C.parallel.WORLD_GROUP):
        super().__init__(auto_prefix=False)
        from ...common.parameter import Parameter
        from ...parallel import _utils

        if isinstance(parameters, Parameter) or not isinstance(parameters, (list, tuple)) or \
                not all(isinstance(p, Parameter) for p in parameters):
            raise TypeError(f"For 'DistributedGradReducer', 'parameters' must be a list or tuple of Parameters, "
                            f"but got {type(parameters).__name__}.")
        if mean is None:
            mean = _utils._get_gradients_mean()
        if not isinstance(mean, bool):
            raise TypeError(f"For 'DistributedGradReducer', 'mean' must be a bool, but got {type(mean).__name__}.")
        if isinstance(fusion_type, bool) or not isinstance(fusion_type, int):
            raise TypeError(f"For 'DistributedGradReducer', 'fusion_type' must be an int, but got "
                            f"{type(fusion_type).__name__}.")
        if fusion_type < 0:
            raise ValueError(f"For 'DistributedGradReducer', 'fusion_type' must be an int greater than or equal "
                             f"to 0, but got {fusion_type}.")
        if not isinstance(group, str):
            raise TypeError(f"For 'DistributedGradReducer', 'group' must be a str, but got {type(group).__name__}.")
        if degree is not None and (isinstance(degree, bool) or not isinstance(degree, int) or degree <= 0):
            raise ValueError(f"For 'DistributedGradReducer', 'degree' must be an int greater than 0, but got "
                             f"{degree!r}.")
        fusion = _utils._get_allreduce_fusion()
        self.fp32_sync = _utils._get_gradient_fp32_sync()
        self.allreduce_filter = tuple(not getattr(p, "layerwise_parallel", False) for p in parameters)
        self.buckets = plan_buckets(parameters, self.allreduce_filter, fusion_type=fusion_type,
                                    split_indices=_utils._get_all_reduce_fusion_split_indices(),
                                    threshold_mb=fusion["threshold_mb"], enabled=fusion["enabled"],
                                    fp32_sync=self.fp32_sync)
        if degree is None:
            degree = _C.parallel.group_info(group)["size"]  # communication.get_group_size(group)
        self.mean = mean
        self.degree = degree
        self.fusion_type = fusion_type
        self.group = group

    def _reduce(self, grads):
        """One fused all-reduce over `grads` (one reduction dtype), scaled by 1 / degree when `mean`."""
        out = _op("all_reduce_fused", *grads, op="sum", group=self.group,
                  scale=1.0 / self.degree if self.mean else 1.0)
        return out if isinstance(out, tuple) else (out,)

    def construct(self, grads):
        if len(grads) != len(self.allreduce_filter):
            raise ValueError(f"For 'DistributedGradReducer', the number of gradients must be the number of "
                             f"parameters ({len(self.allreduce_filter)}), but got {len(grads)}.")
        out = list(grads)
        for bucket in self.buckets:
            # The plan assumed each gradient has its parameter's dtype; a bucket whose gradients reduce
            # in different dtypes is reduced per dtype (in order of first appearance).
            by_dtype = {}
            for i in bucket:
                by_dtype.setdefault(_reduce_dtype(grads[i].dtype, self.fp32_sync), []).append(i)
            for dtype, members in by_dtype.items():
                cast = [F.cast(grads[i], dtype) if grads[i].dtype != dtype else grads[i] for i in members]
                for i, reduced in zip(members, self._reduce(cast)):
                    out[i] = F.cast(reduced, grads[i].dtype) if grads[i].dtype != dtype else reduced
        return tuple(out)
