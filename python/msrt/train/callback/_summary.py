"""SummaryCollector: writes the loss, learning rate and evaluation metrics to a summary file."""
import warnings

import numpy as np

from ..._tensor import Tensor
from ..summary import SummaryRecord
from ._callback import Callback
from ._loss_monitor import _loss_value

__all__ = ["SummaryCollector"]

# MindSpore's keys of collect_specified_data; msrt collects the scalars of "collect_metric".
_KNOWN_KEYS = ("collect_metric", "collect_graph", "collect_train_lineage", "collect_eval_lineage",
               "collect_input_data", "collect_dataset_graph", "histogram_regular", "collect_landscape")


def _learning_rate(optimizer):
    """The optimizer's learning rate of the step just taken, without advancing it; None if
    it cannot be read as one number (per-group rates, a schedule cell)."""
    if optimizer is None or getattr(optimizer, "is_group_lr", False):
        return None
    lr = getattr(optimizer, "learning_rate", None)
    if getattr(optimizer, "dynamic_lr", False):
        lr_at = getattr(lr, "lr_at", None)
        if lr_at is None:
            return None
        return float(lr_at(max(getattr(optimizer, "_step", 1) - 1, 0)))
    if isinstance(lr, Tensor):
        return float(np.mean(lr.asnumpy()))
    if isinstance(lr, (int, float)):
        return float(lr)
    return None


class SummaryCollector(Callback):
    """Writes scalars to a summary file in `summary_dir` (see msrt.train.summary):
    "loss" (the mean network output) and "learning_rate" at the first step and
    every `collect_freq` steps, and each evaluation metric of `Model.fit` as
    "eval/<name>" at the end of the epoch that computed it. Read the file back
    with `msrt.train.summary.read_scalars`.

    msrt collects scalars only: setting any collect_specified_data key but
    "collect_metric" to True warns that it is not collected.
    """

    def __init__(self, summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
                 keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None, max_file_size=None,
                 export_options=None):
        super().__init__()
        if not isinstance(summary_dir, str):
            raise TypeError(f"For 'SummaryCollector', the argument 'summary_dir' must be a str, "
                            f"but got {type(summary_dir).__name__}.")
        if not summary_dir:
            raise ValueError("For 'SummaryCollector', the argument 'summary_dir' must not be empty.")
        if not isinstance(collect_freq, int) or isinstance(collect_freq, bool):
            raise TypeError(f"For 'SummaryCollector', the argument 'collect_freq' must be an int, "
                            f"but got {type(collect_freq).__name__}.")
        if collect_freq <= 0:
            raise ValueError(f"For 'SummaryCollector', the argument 'collect_freq' must be greater than 0, "
                             f"but got {collect_freq}.")
        if not isinstance(keep_default_action, bool):
            raise TypeError(f"For 'SummaryCollector', the argument 'keep_default_action' must be a bool, "
                            f"but got {type(keep_default_action).__name__}.")
        specified = {} if collect_specified_data is None else collect_specified_data
        if not isinstance(specified, dict):
            raise TypeError(f"For 'SummaryCollector', the argument 'collect_specified_data' must be a dict, "
                            f"but got {type(specified).__name__}.")
        for key, value in specified.items():
            if key not in _KNOWN_KEYS:
                raise ValueError(f"For 'SummaryCollector', the key {key!r} of 'collect_specified_data' is not "
                                 f"supported; supported keys are {list(_KNOWN_KEYS)}.")
            if key != "histogram_regular" and not isinstance(value, bool):
                raise TypeError(f"For 'SummaryCollector', the value of {key!r} in 'collect_specified_data' must "
                                f"be a bool, but got {type(value).__name__}.")
            if key not in ("collect_metric", "histogram_regular") and value:
                warnings.warn(f"SummaryCollector: msrt collects scalars only; {key!r} is not collected.",
                              stacklevel=2)
        self._collect_metric = specified.get("collect_metric", keep_default_action)
        self._summary_dir = summary_dir
        self._collect_freq = collect_freq
        self._max_file_size = max_file_size
        self._record = None

    @property
    def summary_dir(self):
        return self._summary_dir

    def _open(self):
        if self._record is None:
            self._record = SummaryRecord(self._summary_dir, max_file_size=self._max_file_size)
        return self._record

    def begin(self, run_context):
        self._open()

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode") != "train" or not self._collect_metric:
            return
        step = cb_params.cur_step_num
        if step != 1 and step % self._collect_freq:
            return
        record = self._open()
        loss = _loss_value(cb_params.get("net_outputs"))
        if loss is not None:
            record.add_value("scalar", "loss", loss)
        lr = _learning_rate(cb_params.get("optimizer"))
        if lr is not None:
            record.add_value("scalar", "learning_rate", lr)
        record.record(step)

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        metrics = cb_params.get("metrics")
        if cb_params.get("mode") != "train" or not metrics:
            return
        record = self._open()
        for name, value in metrics.items():
            if isinstance(value, (int, float, np.number, Tensor)) or (
                    isinstance(value, np.ndarray) and value.size == 1):
                record.add_value("scalar", f"eval/{name}", value)
        record.record(cb_params.cur_step_num)
        record.flush()

    def end(self, run_context):
        if self._record is not None:
            self._record.close()
            self._record = None

    def __exit__(self, *err):
        self.end(None)
