"""msrt.train: Model, callbacks, metrics and checkpoint files."""
try:  # checkpoint files (the tensor engineer's module)
    from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
except ImportError:  # pragma: no cover - until serialization lands
    pass
from . import callback, metrics
from .callback import (Callback, CheckpointConfig, LossMonitor, ModelCheckpoint, ProgressBar, RunContext,
                       TimeMonitor)
from .metrics import MAE, MSE, Accuracy, Loss, Metric, Top1CategoricalAccuracy, Top5CategoricalAccuracy, \
    TopKCategoricalAccuracy, get_metric_fn, names
from .model import Model


__all__ = ["Model", "Callback", "CheckpointConfig", "LossMonitor", "ModelCheckpoint", "ProgressBar", "RunContext",
           "TimeMonitor", "MAE", "MSE", "Accuracy", "Loss", "Metric", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "TopKCategoricalAccuracy", "get_metric_fn", "names", "callback", "metrics",
           "save_checkpoint", "load_checkpoint", "load_param_into_net"]
