"""Loss cells."""
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   LossBase, MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss, SoftmaxCrossEntropyWithLogits)

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss",
           "L1Loss", "LossBase", "MarginRankingLoss", "MSELoss", "NLLLoss", "SmoothL1Loss",
           "SoftmaxCrossEntropyWithLogits"]
