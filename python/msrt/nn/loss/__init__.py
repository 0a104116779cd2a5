"""Loss cells."""
from .loss import CrossEntropyLoss, L1Loss, LossBase, MSELoss, NLLLoss, SoftmaxCrossEntropyWithLogits

__all__ = ["CrossEntropyLoss", "L1Loss", "LossBase", "MSELoss", "NLLLoss", "SoftmaxCrossEntropyWithLogits"]
