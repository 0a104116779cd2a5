"""TimeMonitor: prints epoch and per-step time."""
import time

from ... import _C
from ._callback import Callback

__all__ = ["TimeMonitor"]


class TimeMonitor(Callback):
    """Prints "Train epoch time: T ms, per step time: t ms" after each epoch
    (and the same for evaluation). `data_size` is the step count when the
    dataset does not know its size (as MindSpore, the dataset's size wins).
    The time includes waiting for the epoch's queued work to finish. With
    `data_time` it also prints the mean time per step spent waiting for the
    dataset (from a step's end, or the epoch's start, to the next step's
    start)."""

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        if data_size is not None:
            if not isinstance(data_size, int) or isinstance(data_size, bool):
                raise TypeError(f"For 'TimeMonitor', the argument 'data_size' must be int or None, "
                                f"but got {type(data_size).__name__}.")
            if data_size <= 0:
                raise ValueError(f"For 'TimeMonitor', the argument 'data_size' must be a positive int, "
                                 f"but got {data_size}.")
        if not isinstance(data_time, bool):
            raise TypeError(f"For 'TimeMonitor', the argument 'data_time' must be bool, "
                            f"but got {type(data_time).__name__}.")
        self.data_size = data_size
        self.data_time = data_time
        self.epoch_time = None
        self._data_seconds = 0.0
        self._step_mark = time.perf_counter()

    def _begin(self):
        self.epoch_time = time.perf_counter()
        self._data_seconds = 0.0
        self._step_mark = self.epoch_time

    def _step_begin(self):
        self._data_seconds += time.perf_counter() - self._step_mark

    def _step_end(self):
        self._step_mark = time.perf_counter()

    def _end(self, run_context, mode):
        if self.epoch_time is None:
            return
        _C.synchronize()
        cb_params = run_context.original_args()
        epoch_ms = (time.perf_counter() - self.epoch_time) * 1000
        batch_num = cb_params.get("batch_num")
        steps = batch_num if isinstance(batch_num, int) and batch_num > 0 else (self.data_size or 1)
        data = f", avg data time: {self._data_seconds * 1000 / steps:5.3f} ms" if self.data_time else ""
        print(f"{mode} epoch time: {epoch_ms:5.3f} ms, per step time: {epoch_ms / steps:5.3f} ms{data}", flush=True)

    def on_train_epoch_begin(self, run_context):
        self._begin()

    def on_train_epoch_end(self, run_context):
        self._end(run_context, "Train")

    def on_train_step_begin(self, run_context):
        self._step_begin()

    def on_train_step_end(self, run_context):
        self._step_end()

    def on_eval_step_begin(self, run_context):
        self._step_begin()

    def on_eval_step_end(self, run_context):
        self._step_end()

    def on_eval_epoch_begin(self, run_context):
        self._begin()

    def on_eval_epoch_end(self, run_context):
        self._end(run_context, "Eval")
