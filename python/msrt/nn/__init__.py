"""msrt.nn: cells, layers, losses, optimizers, wrappers and learning-rate
schedules with MindSpore 2.x's names and signatures."""
import importlib

from . import dynamic_lr, learning_rate_schedule  # noqa: F401 - nn.dynamic_lr as in MindSpore
from .cell import Cell, GraphCell
from .dynamic_lr import (cosine_decay_lr, exponential_decay_lr, inverse_decay_lr, natural_exp_decay_lr,
                         piecewise_constant_lr, polynomial_decay_lr, warmup_lr)
from .layer import (GELU, AvgPool2d, BatchNorm1d, BatchNorm2d, CellList, Conv2d, Dense, Dropout, Flatten, Identity,
                    LeakyReLU, LogSoftmax, MaxPool2d, ReLU, ReLU6, SequentialCell, Sigmoid, SiLU, Softmax, Tanh,
                    get_activation)
from .learning_rate_schedule import (CosineDecayLR, ExponentialDecayLR, InverseDecayLR, LearningRateSchedule,
                                     NaturalExpDecayLR, PolynomialDecayLR, WarmUpLR)
from .loss import CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss, SoftmaxCrossEntropyWithLogits
from .optim import SGD, Adam, AdamWeightDecay, Momentum, Optimizer
from .wrap import ParameterUpdate, TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = [
    "Cell", "GraphCell",
    "GELU", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "CellList", "Conv2d", "Dense", "Dropout", "Flatten",
    "Identity", "LeakyReLU", "LogSoftmax", "MaxPool2d", "ReLU", "ReLU6", "SequentialCell", "Sigmoid", "SiLU",
    "Softmax", "Tanh", "get_activation",
    "CrossEntropyLoss", "L1Loss", "LossBase", "MSELoss", "NLLLoss", "SoftmaxCrossEntropyWithLogits",
    "SGD", "Adam", "AdamWeightDecay", "Momentum", "Optimizer",
    "ParameterUpdate", "TrainOneStepCell", "WithEvalCell", "WithLossCell",
    "LearningRateSchedule", "CosineDecayLR", "ExponentialDecayLR", "InverseDecayLR", "NaturalExpDecayLR",
    "PolynomialDecayLR", "WarmUpLR",
    "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr", "cosine_decay_lr",
    "polynomial_decay_lr", "warmup_lr",
]


_METRIC_NAMES = ("MAE", "MSE", "Accuracy", "Loss", "Metric", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
                 "TopKCategoricalAccuracy", "Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix")


def __getattr__(name):
    # nn.metrics and its metrics (nn.Accuracy...), as MindSpore 1.x has them, on first use.
    if name == "metrics" or name in _METRIC_NAMES:
        metrics = importlib.import_module(".metrics", __name__)
        return metrics if name == "metrics" else getattr(metrics, name)
    raise AttributeError(f"module 'msrt.nn' has no attribute '{name}'")
