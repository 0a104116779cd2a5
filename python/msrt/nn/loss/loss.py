"""Loss cells (MindSpore 2.x signatures). MSELoss, L1Loss, NLLLoss and
CrossEntropyLoss compute with the ms.ops function of the same name (one place
for the math), adding MindSpore's constructor checks;
SoftmaxCrossEntropyWithLogits reduces the per-sample loss ops by
LossBase.get_loss, as MindSpore's does."""
from ..._tensor import Tensor
from ...ops import _op
from ...ops import functional as F
from ..cell import Cell

__all__ = ["LossBase", "SoftmaxCrossEntropyWithLogits", "MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss"]

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


def _check_optional_tensor(value, arg, cls_name):
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be a Tensor or None, "
                        f"but got {type(value).__name__}.")
    return value


def _check_float(value, arg, cls_name, positive=False):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be float, but got {type(value).__name__}.")
    if positive and not value > 0:
        raise ValueError(f"For '{cls_name}', the '{arg}' must be greater than 0, but got {value}.")
    return float(value)


class BCELoss(LossBase):
    """Binary cross entropy of probabilities against labels, optionally weighted per element."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = _check_optional_tensor(weight, "weight", "BCELoss")

    def construct(self, logits, labels):
        return F.binary_cross_entropy(logits, labels, self.weight, self.reduction)


class BCEWithLogitsLoss(LossBase):
    """Binary cross entropy of sigmoid(logits) against labels, with per-element weight and per-class
    pos_weight."""

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight = _check_optional_tensor(weight, "weight", "BCEWithLogitsLoss")
        self.pos_weight = _check_optional_tensor(pos_weight, "pos_weight", "BCEWithLogitsLoss")

    def construct(self, logits, labels):
        return F.binary_cross_entropy_with_logits(logits, labels, self.weight, self.pos_weight, self.reduction)


class SmoothL1Loss(LossBase):
    """0.5 (x - y)^2 / beta where |x - y| < beta, else |x - y| - 0.5 beta; elementwise by default."""

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        self.beta = _check_float(beta, "beta", "SmoothL1Loss", positive=True)

    def construct(self, logits, labels):
        return F.smooth_l1_loss(logits, labels, self.beta, self.reduction)


class HuberLoss(LossBase):
    """0.5 (x - y)^2 where |x - y| < delta, else delta (|x - y| - 0.5 delta)."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = _check_float(delta, "delta", "HuberLoss", positive=True)

    def construct(self, logits, labels):
        return F.huber_loss(logits, labels, self.reduction, self.delta)


class KLDivLoss(LossBase):
    """Kullback-Leibler divergence of log-probabilities logits from probabilities labels; reduction
    'mean', 'batchmean', 'sum' or 'none'."""

    def __init__(self, reduction="mean"):
        if reduction not in ("mean", "batchmean", "sum", "none"):
            raise ValueError(f"For 'KLDivLoss', the 'reduction' must be in ['mean', 'batchmean', 'sum', 'none'], "
                             f"but got {reduction}.")
        super().__init__("mean" if reduction == "batchmean" else reduction)
        self.reduction = reduction

    def construct(self, logits, labels):
        return F.kl_div(logits, labels, self.reduction)


class CosineEmbeddingLoss(LossBase):
    """1 - cos(x1, x2) for label 1, max(0, cos(x1, x2) - margin) for label -1."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = _check_float(margin, "margin", "CosineEmbeddingLoss")

    def construct(self, logits_x1, logits_x2, labels):
        return F.cosine_embedding_loss(logits_x1, logits_x2, labels, self.margin, self.reduction)


class MarginRankingLoss(LossBase):
    """max(0, -target * (input1 - input2) + margin)."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = _check_float(margin, "margin", "MarginRankingLoss")

    def construct(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)
