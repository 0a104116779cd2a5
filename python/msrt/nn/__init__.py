"""msrt.nn: cells, layers, losses, optimizers, wrappers and learning-rate
schedules with MindSpore 2.x's names and signatures."""
from . import dynamic_lr, learning_rate_schedule  # noqa: F401 - nn.dynamic_lr as in MindSpore
from . import metrics  # imports nothing until a metric is asked for
from .cell import Cell, GraphCell
from .dynamic_lr import (cosine_decay_lr, exponential_decay_lr, inverse_decay_lr, natural_exp_decay_lr,
                         piecewise_constant_lr, polynomial_decay_lr, warmup_lr)
from .layer import *  # noqa: F401,F403
from .layer import __all__ as _layer_all
from .learning_rate_schedule import (CosineDecayLR, ExponentialDecayLR, InverseDecayLR, LearningRateSchedule,
                                     NaturalExpDecayLR, PolynomialDecayLR, WarmUpLR)
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _loss_all
from .optim import SGD, Adam, AdamWeightDecay, Momentum, Optimizer
from .wrap import ParameterUpdate, TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = [
    "Cell", "GraphCell",
    "SGD", "Adam", "AdamWeightDecay", "Momentum", "Optimizer",
    "ParameterUpdate", "TrainOneStepCell", "WithEvalCell", "WithLossCell",
    "LearningRateSchedule", "CosineDecayLR", "ExponentialDecayLR", "InverseDecayLR", "NaturalExpDecayLR",
    "PolynomialDecayLR", "WarmUpLR",
    "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr", "cosine_decay_lr",
    "polynomial_decay_lr", "warmup_lr",
] + _layer_all + _loss_all


def __getattr__(name):
    # The metrics, as MindSpore 1.x has them in nn (nn.Accuracy...).
    if name in metrics._NAMES:
        return getattr(metrics, name)
    raise AttributeError(f"module 'msrt.nn' has no attribute '{name}'")
