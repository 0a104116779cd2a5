"""msrt.train: Model, callbacks, metrics and checkpoint files."""
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint
from . import callback, metrics, summary
from .callback import (BackupAndRestore, Callback, CheckpointConfig, EarlyStopping, History, LambdaCallback,
                       LossMonitor, ModelCheckpoint, ProgressBar, ReduceLROnPlateau, RunContext, SummaryCollector,
                       TimeMonitor)
from .metrics import (F1, MAE, MSE, Accuracy, ConfusionMatrix, Fbeta, Loss, Metric, Precision, Recall,
                      Top1CategoricalAccuracy, Top5CategoricalAccuracy, TopKCategoricalAccuracy, get_metric_fn, names)
from .model import Model
from .data_sink import data_sink
from .loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager
from .summary import SummaryRecord


__all__ = ["data_sink", "Model", "LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager",
           "Callback", "CheckpointConfig", "LossMonitor", "ModelCheckpoint", "ProgressBar", "RunContext",
           "TimeMonitor", "BackupAndRestore", "LambdaCallback", "EarlyStopping", "ReduceLROnPlateau", "MAE", "MSE",
           "Accuracy", "Loss", "Metric", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "TopKCategoricalAccuracy", "Precision", "Recall", "Fbeta", "F1",
           "ConfusionMatrix", "get_metric_fn", "names", "callback", "metrics", "History", "SummaryCollector",
           "SummaryRecord", "summary",
           "save_checkpoint", "load_checkpoint", "load_param_into_net"]
