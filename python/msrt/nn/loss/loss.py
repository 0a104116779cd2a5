"""Loss cells (MindSpore 2.x signatures)."""
from ..._tensor import Tensor
from ...common import dtype as mstype
from ...ops import _op
from ..cell import Cell

__all__ = ["LossBase", "SoftmaxCrossEntropyWithLogits", "MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss"]

_REDUCTIONS = ("mean", "sum", "none")
_INDEX_DTYPES = None


def _is_index_dtype(dtype):
    global _INDEX_DTYPES
    if _INDEX_DTYPES is None:
        _INDEX_DTYPES = (mstype.int32, mstype.int64, mstype.int16, mstype.int8, mstype.uint8)
    return dtype in _INDEX_DTYPES


def _check_reduction(reduction, cls_name):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For '{cls_name}', the 'reduction' must be in ['mean', 'sum', 'none'], but got {reduction}.")
    return reduction


class LossBase(Cell):
    """Base of losses: `get_loss(x, weights=1.0)` applies weights and the reduction."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction, self.cls_name)
        self.average = reduction == "mean"
        self.reduce = reduction != "none"

    def get_axis(self, x):
        return list(range(len(x.shape)))

    def get_loss(self, x, weights=1.0):
        if not (isinstance(weights, (int, float)) and weights == 1.0):
            x = _op("mul", x, weights if isinstance(weights, Tensor) else Tensor(float(weights), x.dtype))
        if self.reduction == "mean":
            return _op("reduce_mean", x, axis=[], keep_dims=False)
        if self.reduction == "sum":
            return _op("reduce_sum", x, axis=[], keep_dims=False)
        return x

    def construct(self, logits, labels):
        raise NotImplementedError


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Cross entropy of softmax(logits) against labels: class indices of shape
    (N,) when `sparse`, else probabilities of shape (N, C). Per-sample losses
    are reduced by `reduction` ("none" by default, as MindSpore)."""

    def __init__(self, sparse=False, reduction="none"):
        super().__init__(reduction)
        if not isinstance(sparse, bool):
            raise TypeError(f"For 'SoftmaxCrossEntropyWithLogits', the argument 'sparse' must be bool, "
                            f"but got {type(sparse).__name__}.")
        self.sparse = sparse

    def construct(self, logits, labels):
        if self.sparse:
            x = _op("sparse_softmax_cross_entropy", logits, labels)
        else:
            x = _op("softmax_cross_entropy", logits, labels)
        return self.get_loss(x)


class MSELoss(LossBase):
    """Mean squared error, (x - y)^2 reduced."""

    def construct(self, logits, labels):
        if tuple(logits.shape) == tuple(labels.shape):
            return _op("mse_loss", logits, labels, reduction=self.reduction)
        diff = _op("sub", logits, labels)
        return self.get_loss(_op("square", diff))


class L1Loss(LossBase):
    """Mean absolute error, |x - y| reduced."""

    def construct(self, logits, labels):
        return self.get_loss(_op("abs", _op("sub", logits, labels)))


def _class_weights_and_mask(labels, weight, ignore_index, dtype_name, name, num_classes):
    """(safe labels, per-sample weight) with ignored samples weighted 0."""
    if weight is not None and weight.shape != (num_classes,):
        raise ValueError(f"For '{name}', the shape of 'weight' must be (C,) = ({num_classes},) for logits with "
                         f"{num_classes} classes, but got {weight.shape}.")
    ignore = Tensor(ignore_index, labels.dtype)
    keep = _op("not_equal", labels, ignore)
    safe = _op("select", keep, labels, _op("zeros_like", labels))
    w = _op("cast", keep, dtype=dtype_name)
    if weight is not None:
        w = _op("mul", w, _op("gather", weight, safe, axis=0))
    return safe, w


def _dtype_name(dtype):
    return {mstype.float16: "float16", mstype.float32: "float32", mstype.float64: "float64"}.get(dtype, "float32")


def _reduce_weighted(per_sample, w, reduction):
    if reduction == "none":
        return per_sample
    total = _op("reduce_sum", per_sample, axis=[], keep_dims=False)
    if reduction == "sum":
        return total
    return _op("div", total, _op("reduce_sum", w, axis=[], keep_dims=False))


class NLLLoss(LossBase):
    """Negative log likelihood of log-probabilities (N, C) at targets (N,),
    with optional class weights and an ignored target value."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"For 'NLLLoss', the argument 'weight' must be a Tensor or None, "
                            f"but got {type(weight).__name__}.")
        if not isinstance(ignore_index, int) or isinstance(ignore_index, bool):
            raise TypeError(f"For 'NLLLoss', the argument 'ignore_index' must be int, "
                            f"but got {type(ignore_index).__name__}.")
        self.weight = weight
        self.ignore_index = ignore_index

    def construct(self, logits, labels):
        safe, w = _class_weights_and_mask(labels, self.weight, self.ignore_index, _dtype_name(logits.dtype),
                                          "NLLLoss", logits.shape[-1])
        per = _op("mul", _op("nll_loss", logits, safe, reduction="none"), w)
        return _reduce_weighted(per, w, self.reduction)


class CrossEntropyLoss(LossBase):
    """Cross entropy of logits (N, C) against class indices (N,) or class
    probabilities (N, C), with class weights, ignore_index and label
    smoothing (MindSpore 2.x / PyTorch semantics)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"For 'CrossEntropyLoss', the argument 'weight' must be a Tensor or None, "
                            f"but got {type(weight).__name__}.")
        if not isinstance(ignore_index, int) or isinstance(ignore_index, bool):
            raise TypeError(f"For 'CrossEntropyLoss', the argument 'ignore_index' must be int, "
                            f"but got {type(ignore_index).__name__}.")
        if not isinstance(label_smoothing, (int, float)) or not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"For 'CrossEntropyLoss', the 'label_smoothing' must be in [0, 1], "
                             f"but got {label_smoothing}.")
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = float(label_smoothing)

    def construct(self, logits, labels):
        dtype = _dtype_name(logits.dtype)
        num_classes = logits.shape[-1]
        log_probs = _op("log_softmax", logits, axis=-1)
        eps = self.label_smoothing
        if _is_index_dtype(labels.dtype):
            safe, w = _class_weights_and_mask(labels, self.weight, self.ignore_index, dtype, "CrossEntropyLoss",
                                              num_classes)
            per = _op("mul", _op("nll_loss", log_probs, safe, reduction="none"), w)
            if eps > 0.0:
                weighted = log_probs if self.weight is None else _op("mul", log_probs, self.weight)
                smooth = _op("neg", _op("reduce_sum", weighted, axis=[-1], keep_dims=False))
                keep = _op("cast", _op("not_equal", labels, Tensor(self.ignore_index, labels.dtype)), dtype=dtype)
                smooth = _op("mul", smooth, _op("mul", keep, Tensor(eps / num_classes, logits.dtype)))
                per = _op("add", _op("mul", per, Tensor(1.0 - eps, logits.dtype)), smooth)
            return _reduce_weighted(per, w, self.reduction)
        # Class probabilities.
        target = labels
        if eps > 0.0:
            target = _op("add", _op("mul", labels, Tensor(1.0 - eps, logits.dtype)),
                         Tensor(eps / num_classes, logits.dtype))
        prod = _op("mul", log_probs, target)
        if self.weight is not None:
            prod = _op("mul", prod, self.weight)
        per = _op("neg", _op("reduce_sum", prod, axis=[-1], keep_dims=False))
        return self.get_loss(per)
