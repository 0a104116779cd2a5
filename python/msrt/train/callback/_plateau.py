"""EarlyStopping and ReduceLROnPlateau: act when a monitored value stops improving."""
import warnings

import numpy as np

from ..._tensor import Tensor
from ...common.parameter import Parameter
from ...ops import functional as F
from ..serialization import load_param_into_net
from ._callback import Callback
from ._loss_monitor import _loss_value

__all__ = ["EarlyStopping", "ReduceLROnPlateau"]

# Monitors that improve by getting smaller (mode 'auto').
_SMALLER_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity", "mean_surface_distance",
                   "root_mean_square_distance", "eval_loss")


def _check_type(cls, arg, value, types, name):
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise TypeError(f"For '{cls}', the argument '{arg}' must be {name}, but got {type(value).__name__}.")
    return value


def _check_non_negative_int(cls, arg, value):
    _check_type(cls, arg, value, (int,), "int")
    if value < 0:
        raise ValueError(f"For '{cls}', the argument '{arg}' must be a non-negative int, but got {value}.")
    return value


class _PlateauMonitor(Callback):
    """The monitored value ('loss': the step's loss; other names: Model.fit's
    evaluation results, the metrics and 'eval_loss') and whether it improved
    by more than min_delta."""

    def __init__(self, monitor, min_delta, patience, verbose, mode):
        super().__init__()
        cls = type(self).__name__
        self.monitor = _check_type(cls, "monitor", monitor, (str,), "str")
        self.min_delta = abs(_check_type(cls, "min_delta", min_delta, (int, float), "float"))
        self.patience = _check_non_negative_int(cls, "patience", patience)
        self.verbose = _check_type(cls, "verbose", verbose, (bool,), "bool")
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"For '{cls}', the argument 'mode' should be 'auto', 'min' or 'max', but got {mode!r}.")
        self.mode = mode
        self._smaller = mode == "min" or (mode == "auto" and monitor in _SMALLER_BETTER)
        self.wait = 0
        self.best = self._worst()

    def _worst(self):
        return np.inf if self._smaller else -np.inf

    def _improves(self, value, reference):
        if self._smaller:
            return value < reference - self.min_delta
        return value > reference + self.min_delta

    def _monitor_value(self, cb_params):
        """The monitored value as a float, or None (with a warning) when this epoch has none."""
        results = cb_params.get("eval_results") or {}
        if self.monitor == "loss":
            value = _loss_value(cb_params.get("net_outputs"))
        else:
            value = results.get(self.monitor)
        if value is None:
            warnings.warn(f"{type(self).__name__} is conditioned on '{self.monitor}', which is not available. "
                          f"Available choices are: {sorted({'loss', *results})}.", stacklevel=3)
            return None
        array = value.asnumpy() if isinstance(value, Tensor) else np.asarray(value)
        if array.size != 1:
            raise ValueError(f"{type(self).__name__} only supports scalar monitor now, but '{self.monitor}' has "
                             f"shape {array.shape}.")
        return float(array.reshape(()))


class EarlyStopping(_PlateauMonitor):
    """Stops training (run_context.request_stop()) once the monitored value
    has not improved by more than `min_delta` for `patience` epochs (an
    improvement that is not better than `baseline` does not reset the wait);
    `restore_best_weights` then loads the weights of the best epoch."""

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False, mode="auto", baseline=None,
                 restore_best_weights=False):
        super().__init__(monitor, min_delta, patience, verbose, mode)
        if baseline is not None:
            _check_type("EarlyStopping", "baseline", baseline, (int, float), "float")
        self.baseline = baseline
        self.restore_best_weights = _check_type("EarlyStopping", "restore_best_weights", restore_best_weights,
                                                (bool,), "bool")
        self.stopped_epoch = 0
        self._best_weights = None

    def on_train_begin(self, run_context):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = self._worst()
        self._best_weights = None

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        value = self._monitor_value(cb_params)
        if value is None:
            return
        self.wait += 1
        if self._improves(value, self.best):
            self.best = value
            if self.restore_best_weights:
                self._best_weights = {p.name: Parameter(Tensor(p.asnumpy().copy()), name=p.name)
                                      for p in cb_params.train_network.get_parameters()}
            if self.baseline is None or self._improves(value, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.cur_epoch_num
            run_context.request_stop()
            if self._best_weights is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.", flush=True)
                load_param_into_net(cb_params.train_network, self._best_weights)

    def on_train_end(self, run_context):
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch:05d}: early stopping", flush=True)


class ReduceLROnPlateau(_PlateauMonitor):
    """Multiplies the optimizer's (fixed, single) learning rate by `factor`
    (not below `min_lr`) once the monitored value has not improved by more
    than `min_delta` for `patience` epochs, then waits `cooldown` epochs."""

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0):
        super().__init__(monitor, min_delta, patience, verbose, mode)
        _check_type("ReduceLROnPlateau", "factor", factor, (int, float), "float")
        if not 0.0 < factor < 1.0:
            raise ValueError(f"For 'ReduceLROnPlateau', the argument 'factor' must be in range (0.0, 1.0), "
                             f"but got {factor}.")
        self.factor = factor
        self.cooldown = _check_non_negative_int("ReduceLROnPlateau", "cooldown", cooldown)
        self.min_lr = _check_type("ReduceLROnPlateau", "min_lr", min_lr, (int, float), "float")
        self.cooldown_counter = 0

    def on_train_begin(self, run_context):
        self.wait = 0
        self.cooldown_counter = 0
        self.best = self._worst()

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        lr = getattr(cb_params.get("optimizer"), "learning_rate", None)
        if not isinstance(lr, Parameter):
            raise ValueError("ReduceLROnPlateau does not support dynamic learning rate and group learning rate now.")
        value = self._monitor_value(cb_params)
        if value is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improves(value, self.best):
            self.best = value
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            current = float(lr.asnumpy())
            if self.wait >= self.patience:
                if current > self.min_lr:
                    new_lr = max(current * self.factor, self.min_lr)
                    F.assign(lr, Tensor(np.array(new_lr, lr.asnumpy().dtype)))
                    if self.verbose:
                        print(f"Epoch {cb_params.cur_epoch_num:05d}: ReduceLROnPlateau reducing learning rate to "
                              f"{new_lr}.", flush=True)
                self.cooldown_counter = self.cooldown
                self.wait = 0
