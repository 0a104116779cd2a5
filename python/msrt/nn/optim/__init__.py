"""Optimizers."""
from .adam import Adam, AdamWeightDecay
from .momentum import Momentum
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Adam", "AdamWeightDecay", "Momentum", "Optimizer", "SGD"]
