"""Training callbacks."""
from ._callback import (  # noqa: F401 - the private two are imported from here by msrt.train
    Callback, CallbackParam, RunContext, _CallbackManager, _InternalCallbackParam)
from ._backup import BackupAndRestore
from ._checkpoint import CheckpointConfig, ModelCheckpoint
from ._history import History
from ._lambda import LambdaCallback
from ._loss_monitor import LossMonitor
from ._plateau import EarlyStopping, ReduceLROnPlateau
from ._progress import ProgressBar
from ._summary import SummaryCollector
from ._time_monitor import TimeMonitor

__all__ = ["Callback", "CallbackParam", "RunContext", "CheckpointConfig", "ModelCheckpoint", "LossMonitor",
           "ProgressBar", "TimeMonitor", "BackupAndRestore", "LambdaCallback", "EarlyStopping", "ReduceLROnPlateau",
           "History", "SummaryCollector"]
