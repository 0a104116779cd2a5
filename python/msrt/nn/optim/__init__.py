"""Optimizers."""
from .adagrad import Adagrad
from .adam import Adam, AdamWeightDecay
from .lamb import Lamb
from .momentum import Momentum
from .optimizer import Optimizer
from .rmsprop import RMSProp
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamWeightDecay", "Lamb", "Momentum", "Optimizer", "RMSProp", "SGD"]
