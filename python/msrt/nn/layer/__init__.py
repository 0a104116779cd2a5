"""Layers: basic, activation, convolution, pooling, normalization, containers."""
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Tanh, get_activation
from .basic import Dense, Dropout, Flatten, Identity
from .container import CellList, SequentialCell
from .conv import Conv2d
from .normalization import BatchNorm1d, BatchNorm2d
from .pooling import AvgPool2d, MaxPool2d

__all__ = [
    "GELU", "LeakyReLU", "LogSoftmax", "ReLU", "ReLU6", "Sigmoid", "SiLU", "Softmax", "Tanh", "get_activation",
    "Dense", "Dropout", "Flatten", "Identity", "CellList", "SequentialCell", "Conv2d", "BatchNorm1d", "BatchNorm2d",
    "AvgPool2d", "MaxPool2d",
]
