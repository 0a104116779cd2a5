"""History: the loss and evaluation metrics of every epoch."""
import numpy as np

from ..._tensor import Tensor
from ._callback import Callback

__all__ = ["History"]


class History(Callback):
    """Records, at the end of each training epoch, the network output of its
    last step in `history["net_output"]` (the mean of a loss Tensor, as a
    float) and each evaluation metric of `Model.fit` under its name;
    `epoch` lists the epoch numbers recorded."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, run_context):
        self.epoch = []

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode") not in (None, "train"):
            return
        self.epoch.append(cb_params.get("cur_epoch_num", 1))
        output = cb_params.get("net_outputs")
        if isinstance(output, (tuple, list)) and output and isinstance(output[0], Tensor):
            output = output[0]
        if isinstance(output, Tensor):
            output = float(np.mean(output.asnumpy()))
        current = {"net_output": output}
        current.update(cb_params.get("metrics") or {})
        for key, value in current.items():
            self.history.setdefault(key, []).append(value)
