"""Training and evaluation wrappers."""
from .cell_wrapper import ForwardValueAndGrad, ParameterUpdate, TrainOneStepCell, WithEvalCell, WithLossCell
from .grad_reducer import DistributedGradReducer
from .loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell

__all__ = ["DistributedGradReducer", "ForwardValueAndGrad", "ParameterUpdate", "TrainOneStepCell", "WithEvalCell",
           "WithLossCell", "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]
