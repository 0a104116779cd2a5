"""Training and evaluation wrappers."""
from .cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = ["TrainOneStepCell", "WithEvalCell", "WithLossCell"]
