"""`ops.operations.nn_ops`: the neural-network Primitives, where MindSpore keeps them."""
from ._primitives import (GELU, Adam, AdamWeightDecay, ApplyGradientDescent, ApplyMomentum, AvgPool, BatchNorm,
                          BiasAdd, Conv2D, Dense, Dropout, Flatten, GeLU, L2Loss, LogSoftmax, MaxPool, NLLLoss,
                          OneHot, ReLU, ReLU6, Sigmoid, SigmoidCrossEntropyWithLogits, SiLU, Softmax,
                          SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, Tanh, TopK)

__all__ = ["GELU", "Adam", "AdamWeightDecay", "ApplyGradientDescent", "ApplyMomentum", "AvgPool", "BatchNorm",
           "BiasAdd", "Conv2D", "Dense", "Dropout", "Flatten", "GeLU", "L2Loss", "LogSoftmax", "MaxPool", "NLLLoss",
           "OneHot", "ReLU", "ReLU6", "Sigmoid", "SigmoidCrossEntropyWithLogits", "SiLU", "Softmax",
           "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "Tanh", "TopK"]
