"""SummaryCollector: writes the loss, learning rate, evaluation metrics, input images and
parameter histograms to a summary file."""
import re
import warnings

import numpy as np

from ..._tensor import Tensor
from ..._warnings import MsrtWarning
from ..summary import SummaryRecord
from ._callback import Callback
from ._loss_monitor import _loss_value

__all__ = ["SummaryCollector"]

# MindSpore's keys of collect_specified_data; msrt collects "collect_metric", "collect_input_data" and
# "histogram_regular" and warns that it does not collect the others when they are asked for.
_KNOWN_KEYS = ("collect_metric", "collect_graph", "collect_train_lineage", "collect_eval_lineage",
               "collect_input_data", "collect_dataset_graph", "histogram_regular", "collect_landscape")
_COLLECTED_KEYS = ("collect_metric", "collect_input_data", "histogram_regular")
# what MindSpore collects by default (keep_default_action=True), as far as msrt collects it
_DEFAULTS = {"collect_metric": True, "collect_input_data": True, "histogram_regular": None}
_DEFAULT_HISTOGRAMS = 5  # parameters histogrammed when histogram_regular is None


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


def _optimizer_of(cb_params):
    """The optimizer of the training: cb_params.optimizer, else the first one found in the network."""
    from ...nn.optim.optimizer import Optimizer

    optimizer = cb_params.get("optimizer")
    if isinstance(optimizer, Optimizer):
        return optimizer
    network = cb_params.get("train_network")
    if network is None:
        return None
    for _, cell in network.cells_and_names():
        if isinstance(cell, Optimizer):
            return cell
        if isinstance(getattr(cell, "optimizer", None), Optimizer):
            return cell.optimizer
    return None


def _only_tensors(plugin):
    return plugin == "tensor"


def _no_tensors(plugin):
    return plugin != "tensor"


class SummaryCollector(Callback):
    """Writes to a summary file in `summary_dir` (see msrt.train.summary), at the first
    step and every `collect_freq` steps of training:

    - "collect_metric": the scalars "loss" (the mean of the network's first output) and
      "learning_rate"; and each evaluation metric of `Model.fit` as "eval/<name>" at the
      end of the epoch that computed it;
    - "collect_input_data": the image "input_data/auto", the first column of the step's
      data when it is an NCHW batch of 1 or 3 channels (otherwise a warning, once, and no
      more input data);
    - "histogram_regular": the histograms "<parameter name>/auto" of the optimizer's
      parameters whose names match this regular expression (re.match), or of its first
      five parameters when it is None.

    With keep_default_action=True all three are collected unless collect_specified_data
    turns them off; with False only those it names. Read the file back with
    `msrt.train.summary.read_scalars` / `read_values`. msrt collects nothing of
    "collect_graph", the lineage keys, "collect_dataset_graph" and "collect_landscape":
    asking for them warns.

    The values of summary ops (ops.ScalarSummary, ...) in the network are recorded at
    the same steps, but those of TensorSummary at the steps collect_tensor_freq picks
    (by default those of collect_freq, at most 20 over the training), as in MindSpore.
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
        for arg, value in (("collect_freq", collect_freq), ("collect_tensor_freq", collect_tensor_freq)):
            if value is None and arg == "collect_tensor_freq":
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"For 'SummaryCollector', the argument '{arg}' must be an int, "
                                f"but got {type(value).__name__}.")
            if value <= 0:
                raise ValueError(f"For 'SummaryCollector', the argument '{arg}' must be greater than 0, "
                                 f"but got {value}.")
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
            if key == "histogram_regular":
                if value is not None and not isinstance(value, str):
                    raise TypeError(f"For 'SummaryCollector', the value of 'histogram_regular' in "
                                    f"'collect_specified_data' must be a str or None, but got {type(value).__name__}.")
                if value is not None:
                    try:
                        re.compile(value)
                    except re.error as e:
                        raise ValueError(f"For 'SummaryCollector', the value of 'histogram_regular' is not a valid "
                                         f"regular expression: {e}.") from None
            elif key == "collect_landscape":
                if value is not None and not isinstance(value, dict):
                    raise TypeError(f"For 'SummaryCollector', the value of 'collect_landscape' in "
                                    f"'collect_specified_data' must be a dict or None, but got {type(value).__name__}.")
            elif not isinstance(value, bool):
                raise TypeError(f"For 'SummaryCollector', the value of {key!r} in 'collect_specified_data' must "
                                f"be a bool, but got {type(value).__name__}.")
            if key not in _COLLECTED_KEYS and value:
                warnings.warn(f"SummaryCollector: msrt does not collect {key!r}; it collects "
                              f"{list(_COLLECTED_KEYS)}.", MsrtWarning, stacklevel=2)
        collected = dict(_DEFAULTS) if keep_default_action else {}
        collected.update((k, v) for k, v in specified.items() if k in _COLLECTED_KEYS)
        self._collect_metric = collected.get("collect_metric", False)
        self._collect_input_data = collected.get("collect_input_data", False)
        self._collect_histogram = "histogram_regular" in collected
        self._histogram_regular = collected.get("histogram_regular")
        self._summary_dir = summary_dir
        self._collect_freq = collect_freq
        self._collect_tensor_freq = collect_tensor_freq
        self._first_step = True
        self._tensor_steps = None
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
        self._first_step = True
        self._tensor_steps = self._tensor_range(run_context.original_args())

    def _tensor_range(self, cb_params):
        """The steps at which TensorSummary values are recorded, as MindSpore picks them: every
        collect_tensor_freq steps, else those of collect_freq but at most 20 over the training.
        None when the number of steps is not known (they follow collect_freq)."""
        total = (cb_params.get("epoch_num") or 0) * (cb_params.get("batch_num") or 0)
        if not total:
            return None
        if self._collect_tensor_freq is not None:
            return range(0, total + 1, self._collect_tensor_freq)
        limit = 20
        if len(range(0, total + 1, self._collect_freq)) > limit:
            freq = total // (limit - 1)
            if freq > 1:
                return range(0, total + 1, freq)[:limit]
            return range(0, total + 1)[:limit + 1]
        return range(0, total + 1, self._collect_freq)

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode") != "train":
            return
        step = cb_params.cur_step_num
        at_freq = step % self._collect_freq == 0
        tensors = at_freq if self._tensor_steps is None else step in self._tensor_steps
        if self._first_step or (at_freq and tensors):
            plugin_filter = None
        elif tensors:  # only the TensorSummary values at this step
            plugin_filter = _only_tensors
        elif at_freq:
            plugin_filter = _no_tensors
        else:
            return
        self._first_step = False
        record = self._open()
        if plugin_filter is not _only_tensors:
            self._add_values(record, cb_params)
        record.record(step, plugin_filter=plugin_filter)

    def _add_values(self, record, cb_params):
        if self._collect_input_data:
            self._add_input_data(record, cb_params)
        if self._collect_metric:
            loss = _loss_value(cb_params.get("net_outputs"))
            if loss is not None:
                record.add_value("scalar", "loss", loss)
            lr = _learning_rate(cb_params.get("optimizer"))
            if lr is not None:
                record.add_value("scalar", "learning_rate", lr)
        if self._collect_histogram:
            self._add_histograms(record, cb_params)

    def _add_input_data(self, record, cb_params):
        data = cb_params.get("train_dataset_element")
        if isinstance(data, (list, tuple)) and data:
            data = data[0]
        try:
            record.add_value("image", "input_data/auto", data)
        except (TypeError, ValueError) as e:
            warnings.warn(f"SummaryCollector: the input data of the network is not an image, so it is not "
                          f"collected ({e})", MsrtWarning, stacklevel=2)
            self._collect_input_data = False

    def _add_histograms(self, record, cb_params):
        optimizer = _optimizer_of(cb_params)
        if optimizer is None:
            warnings.warn("SummaryCollector: no optimizer found in the training, so no parameter histogram is "
                          "collected.", MsrtWarning, stacklevel=2)
            self._collect_histogram = False
            return
        parameters = list(optimizer.parameters)
        if self._histogram_regular is None:
            chosen = parameters[:_DEFAULT_HISTOGRAMS]
        else:
            chosen = [p for p in parameters if re.match(self._histogram_regular, p.name)]
        for parameter in chosen:
            record.add_value("histogram", f"{parameter.name}/auto", parameter)

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
