"""`ops.operations.nn_ops`: the neural-network Primitives, where MindSpore keeps them."""
from ._primitives import (GELU, Adam, AdamWeightDecay, AdaptiveAvgPool2D, ApplyGradientDescent, ApplyMomentum,
                          AvgPool, BatchNorm, BiasAdd, BinaryCrossEntropy, Conv2D, Dense, Dropout, Flatten, GeLU,
                          KLDivLoss, L2Loss, LayerNorm, LogSoftmax, MaxPool, Mish, NLLLoss, OneHot, PReLU, ReLU,
                          ReLU6, Sigmoid, SigmoidCrossEntropyWithLogits, SiLU, SmoothL1Loss, Softmax,
                          SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, Tanh)

__all__ = ["GELU", "Adam", "AdamWeightDecay", "AdaptiveAvgPool2D", "ApplyGradientDescent", "ApplyMomentum", "AvgPool",
           "BatchNorm", "BiasAdd", "BinaryCrossEntropy", "Conv2D", "Dense", "Dropout", "Flatten", "GeLU", "KLDivLoss",
           "L2Loss", "LayerNorm", "LogSoftmax", "MaxPool", "Mish", "NLLLoss", "OneHot", "PReLU", "ReLU", "ReLU6",
           "Sigmoid", "SigmoidCrossEntropyWithLogits", "SiLU", "SmoothL1Loss", "Softmax",
           "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Tanh"]
