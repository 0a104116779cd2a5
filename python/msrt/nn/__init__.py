"""msrt.nn: cells, layers, losses, optimizers, wrappers and learning-rate
schedules with MindSpore 2.x's names and signatures."""
from . import dynamic_lr, learning_rate_schedule  # noqa: F401 - nn.dynamic_lr as in MindSpore
from . import metrics  # imports nothing until a metric is asked for
from .cell import Cell, GraphCell
from .dynamic_lr import (cosine_decay_lr, exponential_decay_lr, inverse_decay_lr, natural_exp_decay_lr,
                         piecewise_constant_lr, polynomial_decay_lr, warmup_lr)
from .layer import (GELU, GRU, LSTM, RNN, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                    AvgPool1d, AvgPool2d, AvgPool3d, BatchNorm1d, BatchNorm2d, BatchNorm3d, CellDict, CellList, Conv1d,
                    Conv1dTranspose, Conv2d, Conv2dTranspose, Conv3d, Conv3dTranspose, Dense, Dropout, Embedding,
                    Flatten, GroupNorm, Identity, LayerNorm, LeakyReLU, LogSoftmax, MaxPool1d, MaxPool2d, MaxPool3d,
                    Mish, MultiheadAttention, PixelShuffle, PixelUnshuffle, PReLU, ReLU, ReLU6, SequentialCell,
                    Sigmoid, SiLU, Softmax, Tanh, TransformerEncoder, TransformerEncoderLayer, Upsample,
                    get_activation)
from .layer import Transformer, TransformerDecoder, TransformerDecoderLayer
from .layer import (CELU, ELU, GLU, Hardtanh, HShrink, LogSigmoid, SeLU, Softmin, Softplus, SoftShrink, Softsign,
                    Tanhshrink, Threshold)
from .layer import ClipByNorm, HSigmoid, HSwish, Dropout1d, Dropout2d, Dropout3d, Unflatten
from .layer import (ConstantPad1d, ConstantPad2d, ConstantPad3d, Pad, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                    ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad2d)
from .learning_rate_schedule import (CosineDecayLR, ExponentialDecayLR, InverseDecayLR, LearningRateSchedule,
                                     NaturalExpDecayLR, PolynomialDecayLR, WarmUpLR)
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   LossBase, MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss, SoftmaxCrossEntropyWithLogits)
from .optim import SGD, Adagrad, Adam, AdamWeightDecay, Lamb, Momentum, Optimizer, RMSProp
from .wrap import (DistributedGradReducer, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, ForwardValueAndGrad,
                   ParameterUpdate, TrainOneStepCell, TrainOneStepWithLossScaleCell, WithEvalCell, WithLossCell)

__all__ = [
    "Cell", "GraphCell",
    "GELU", "GRU", "LSTM", "RNN", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "CellDict", "CellList",
    "Conv1d", "Conv1dTranspose", "Conv2d", "Conv2dTranspose", "Conv3d", "Conv3dTranspose", "Dense", "Dropout",
    "Embedding", "Flatten", "GroupNorm", "Identity", "LayerNorm", "LeakyReLU", "LogSoftmax", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "Mish", "MultiheadAttention", "PixelShuffle", "PixelUnshuffle", "PReLU", "ReLU",
    "ReLU6", "SequentialCell", "Sigmoid", "SiLU", "Softmax", "Tanh", "TransformerEncoder", "TransformerEncoderLayer",
    "Upsample", "get_activation",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "ELU", "SeLU", "CELU", "Softplus", "Softsign", "LogSigmoid", "Hardtanh", "HShrink", "SoftShrink", "Tanhshrink",
    "Threshold", "GLU", "Softmin",
    "HSigmoid", "HSwish", "Dropout1d", "Dropout2d", "Dropout3d", "Unflatten", "ClipByNorm", "Pad",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "LossBase", "MarginRankingLoss", "MSELoss", "NLLLoss", "SmoothL1Loss", "SoftmaxCrossEntropyWithLogits",
    "SGD", "Adagrad", "Adam", "AdamWeightDecay", "Lamb", "Momentum", "Optimizer", "RMSProp",
    "ParameterUpdate", "DistributedGradReducer", "TrainOneStepCell", "WithEvalCell", "WithLossCell",
    "ForwardValueAndGrad",
    "TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell",
    "LearningRateSchedule", "CosineDecayLR", "ExponentialDecayLR", "InverseDecayLR", "NaturalExpDecayLR",
    "PolynomialDecayLR", "WarmUpLR",
    "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr", "cosine_decay_lr",
    "polynomial_decay_lr", "warmup_lr",
]


def __getattr__(name):
    # The metrics, as MindSpore 1.x has them in nn (nn.Accuracy...).
    if name in metrics._NAMES:
        return getattr(metrics, name)
    raise AttributeError(f"module 'msrt.nn' has no attribute '{name}'")
