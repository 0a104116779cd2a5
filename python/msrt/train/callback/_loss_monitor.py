"""LossMonitor: prints the loss every per_print_times steps."""
import numpy as np

from ..._tensor import Tensor
from ._callback import Callback

__all__ = ["LossMonitor"]


def _loss_value(outputs):
    """The mean loss of a step's outputs as a float (None if not a loss)."""
    if isinstance(outputs, (tuple, list)) and outputs and isinstance(outputs[0], Tensor):
        outputs = outputs[0]
    if isinstance(outputs, Tensor):
        return float(np.mean(outputs.asnumpy()))
    if isinstance(outputs, (int, float)):
        return float(outputs)
    return None


class LossMonitor(Callback):
    """Prints "epoch: E step: S, loss is L" every `per_print_times` steps
    (0 prints nothing) and raises ValueError when the printed loss is NaN or
    infinite. The loss is read only when printed, so steps in between keep
    running asynchronously."""

    def __init__(self, per_print_times=1):
        super().__init__()
        if not isinstance(per_print_times, int) or isinstance(per_print_times, bool):
            raise TypeError(f"For 'LossMonitor', the argument 'per_print_times' must be int, "
                            f"but got {type(per_print_times).__name__}.")
        if per_print_times < 0:
            raise ValueError(f"For 'LossMonitor', the argument 'per_print_times' must be non-negative, "
                             f"but got {per_print_times}.")
        self._per_print_times = per_print_times
        self._last_print_time = 0

    def on_train_begin(self, run_context):
        self._last_print_time = 0

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if self._per_print_times == 0:
            return
        while cb_params.cur_step_num <= self._last_print_time:  # a restarted run counts from the start again
            self._last_print_time -= max(self._per_print_times, 1)
        if cb_params.cur_step_num - self._last_print_time < self._per_print_times:
            return
        self._last_print_time = cb_params.cur_step_num
        loss = _loss_value(cb_params.net_outputs)
        batch_num = cb_params.get("batch_num") or 0
        step_in_epoch = (cb_params.cur_step_num - 1) % batch_num + 1 if batch_num > 0 else cb_params.cur_step_num
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            raise ValueError(f"In epoch: {cb_params.cur_epoch_num} step: {step_in_epoch}, loss is NAN or INF, "
                             "training process cannot continue, terminating training.")
        print(f"epoch: {cb_params.cur_epoch_num} step: {step_in_epoch}, loss is {loss}", flush=True)

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        metrics = cb_params.get("metrics")
        if metrics:
            print(f"Eval result: epoch {cb_params.cur_epoch_num}, metrics: {metrics}", flush=True)
