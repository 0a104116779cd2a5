"""Layers: basic, activation, convolution, pooling, normalization, embedding, recurrent, attention, containers."""
from .activation import (GELU, LeakyReLU, LogSoftmax, Mish, PReLU, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Tanh,
                         get_activation)
from .basic import Dense, Dropout, Flatten, Identity, PixelShuffle, PixelUnshuffle, Upsample
from .container import CellDict, CellList, SequentialCell
from .conv import Conv1d, Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose
from .embedding import Embedding
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d,
                      AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d)
from .rnns import GRU, LSTM, RNN
from ._more_activations import (CELU, ELU, GLU, Hardtanh, HShrink, LogSigmoid, SeLU, Softmin, Softplus, SoftShrink,
                                Softsign, Tanhshrink, Threshold)
from .activation import HSigmoid, HSwish
from .basic import ClipByNorm, Dropout1d, Dropout2d, Dropout3d, Unflatten
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, Pad, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad2d)
from .transformer import (MultiheadAttention, Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)

__all__ = [
    "GELU", "LeakyReLU", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "Sigmoid", "SiLU", "Softmax", "Tanh",
    "get_activation",
    "Dense", "Dropout", "Flatten", "Identity", "PixelShuffle", "PixelUnshuffle", "Upsample",
    "CellDict", "CellList", "SequentialCell",
    "Conv1d", "Conv1dTranspose", "Conv2d", "Conv2dTranspose", "Conv3d", "Conv3dTranspose",
    "Embedding",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "GRU", "LSTM", "RNN",
    "MultiheadAttention", "TransformerEncoder", "TransformerEncoderLayer",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "ELU", "SeLU", "CELU", "Softplus", "Softsign", "LogSigmoid", "Hardtanh", "HShrink", "SoftShrink", "Tanhshrink",
    "Threshold", "GLU", "Softmin",
    "HSigmoid", "HSwish", "Dropout1d", "Dropout2d", "Dropout3d", "Unflatten", "ClipByNorm", "Pad",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
]
