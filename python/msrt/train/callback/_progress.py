"""ProgressBar: one line per epoch that shows steps, ETA and the loss."""
import numpy as np

from ..progress import ProgressLine
from ._callback import Callback

__all__ = ["ProgressBar"]


class ProgressBar(Callback):
    """Shows training (and evaluation) progress: an updating line on a
    terminal, a line every 10% otherwise. The loss is read only when the
    line is redrawn. (An msrt addition; MindSpore has no equivalent.)"""

    def __init__(self, stream=None, every_percent=10, show_loss=True, tty=None):
        super().__init__()
        self.stream = stream
        self.every_percent = every_percent
        self.show_loss = show_loss
        self.tty = tty
        self._line = None
        self._loss = None

    def _open(self, cb_params, title):
        self._line = ProgressLine(cb_params.get("batch_num"), title=title, stream=self.stream,
                                  every_percent=self.every_percent, tty=self.tty)
        self._loss = None

    def _extra(self):
        return f"loss {self._loss:.4f}" if self._loss is not None else ""

    def on_train_epoch_begin(self, run_context):
        cb_params = run_context.original_args()
        self._open(cb_params, f"epoch {cb_params.cur_epoch_num}/{cb_params.epoch_num}")

    def on_train_step_end(self, run_context):
        if self._line is None:
            return
        cb_params = run_context.original_args()
        batch_num = cb_params.get("batch_num") or 0
        done = (cb_params.cur_step_num - 1) % batch_num + 1 if batch_num else cb_params.cur_step_num
        if self._line.needs_draw(done):
            if self.show_loss:
                from ._loss_monitor import _loss_value

                self._loss = _loss_value(cb_params.net_outputs)
            self._line.update(done, self._extra())
        else:
            self._line.done = done

    def on_train_epoch_end(self, run_context):
        if self._line is not None:
            self._line.close(self._extra())
            self._line = None

    def on_eval_begin(self, run_context):
        self._open(run_context.original_args(), "eval")

    def on_eval_step_end(self, run_context):
        if self._line is not None:
            self._line.update(run_context.original_args().cur_step_num)

    def on_eval_end(self, run_context):
        if self._line is not None:
            metrics = run_context.original_args().get("metrics") or {}
            text = ", ".join(f"{k} {v:.4f}" if isinstance(v, (float, np.floating)) else f"{k} {v}"
                             for k, v in metrics.items())
            self._line.close(text)
            self._line = None
