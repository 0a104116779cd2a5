"""Training and evaluation wrappers."""
from .cell_wrapper import ParameterUpdate, TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = ["ParameterUpdate", "TrainOneStepCell", "WithEvalCell", "WithLossCell"]
