"""TimeMonitor: prints epoch and per-step time."""
import time

from ... import _C
from ._callback import Callback

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Prints "Train epoch time: T ms, per step time: t ms" after each epoch
    (and the same for evaluation). `data_size` is the step count when the
    dataset does not know its size (as MindSpore, the dataset's size wins).
    The time includes waiting for the epoch's queued work to finish."""

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        if data_size is not None and (not isinstance(data_size, int) or isinstance(data_size, bool) or data_size <= 0):
            raise ValueError(f"For 'TimeMonitor', the argument 'data_size' must be a positive int or None, "
                             f"but got {data_size}.")
        self.data_size = data_size
        self.data_time = data_time
        self.epoch_time = None

    def _begin(self):
        self.epoch_time = time.perf_counter()

    def _end(self, run_context, mode):
        if self.epoch_time is None:
            return
        _C.synchronize()
        cb_params = run_context.original_args()
        epoch_ms = (time.perf_counter() - self.epoch_time) * 1000
        batch_num = cb_params.get("batch_num")
        steps = batch_num if isinstance(batch_num, int) and batch_num > 0 else (self.data_size or 1)
        print(f"{mode} epoch time: {epoch_ms:5.3f} ms, per step time: {epoch_ms / steps:5.3f} ms", flush=True)

    def on_train_epoch_begin(self, run_context):
        self._begin()

    def on_train_epoch_end(self, run_context):
        self._end(run_context, "Train")

    def on_eval_epoch_begin(self, run_context):
        self._begin()

    def on_eval_epoch_end(self, run_context):
        self._end(run_context, "Eval")
