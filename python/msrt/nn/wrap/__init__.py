"""Training and evaluation wrappers."""
from .cell_wrapper import ForwardValueAndGrad, ParameterUpdate, TrainOneStepCell, WithEvalCell, WithLossCell
from .loss_scale import DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell

__all__ = ["ForwardValueAndGrad", "ParameterUpdate", "TrainOneStepCell", "WithEvalCell", "WithLossCell",
           "DynamicLossScaleUpdateCell", "FixedLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]
