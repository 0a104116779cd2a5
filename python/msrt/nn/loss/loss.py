"""Loss cells (MindSpore 2.x signatures). MSELoss, L1Loss, NLLLoss and
CrossEntropyLoss compute with the ms.ops function of the same name (one place
for the math), adding MindSpore's constructor checks;
SoftmaxCrossEntropyWithLogits reduces the per-sample loss ops by
LossBase.get_loss, as MindSpore's does."""
from ..._tensor import Tensor
from ...ops import _op
from ...ops import functional as F
from ..cell import Cell

__all__ = ["LossBase", "SoftmaxCrossEntropyWithLogits", "MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss"]

_REDUCTIONS = ("mean", "sum", "none")


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
        return F.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    """Mean absolute error, |x - y| reduced."""

    def construct(self, logits, labels):
        return F.l1_loss(logits, labels, self.reduction)


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
        return F.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


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
        return F.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction, self.label_smoothing)
