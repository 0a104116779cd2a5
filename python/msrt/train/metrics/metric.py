"""Metric base class and the metrics Model evaluates with."""
import numpy as np

from ..._tensor import Tensor

__all__ = ["Metric", "Accuracy", "Loss", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "MAE", "MSE", "get_metric_fn", "names", "get_metrics"]


class Metric:
    """Base class: `clear()`, `update(*inputs)`, `eval()`; calling a metric
    clears, updates and evaluates it."""

    def __init__(self):
        self._indexes = None

    def _convert_data(self, data):
        if isinstance(data, Tensor):
            return data.asnumpy()
        if isinstance(data, list):
            return np.array(data)
        if isinstance(data, np.ndarray):
            return data
        raise TypeError(f"For '{self.__class__.__name__}', the input must be a Tensor, list or numpy.ndarray, "
                        f"but got {type(data).__name__}.")

    @staticmethod
    def _check_onehot_data(data):
        if data.ndim > 1 and np.equal(data ** 2, data).all():
            shp = (data.shape[0],) + data.shape[2:]
            if np.equal(np.ones(shp), data.sum(axis=1)).all():
                return True
        return False

    @property
    def indexes(self):
        """Which outputs of the evaluation network `update` receives."""
        return self._indexes

    def set_indexes(self, indexes):
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise ValueError(f"For 'set_indexes', the argument 'indexes' must be a list of int, but got {indexes}.")
        self._indexes = indexes
        return self

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    def clear(self):
        raise NotImplementedError

    def update(self, *inputs):
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError


class Accuracy(Metric):
    """Fraction of samples whose predicted class (argmax of y_pred) is the
    label (indices or one-hot); 'multilabel' compares rounded vectors."""

    def __init__(self, eval_type="classification"):
        super().__init__()
        if eval_type not in ("classification", "multilabel"):
            raise ValueError(f"For 'Accuracy', the argument 'eval_type' must be in ['classification', 'multilabel'], "
                             f"but got {eval_type}.")
        self._type = eval_type
        self.clear()

    def clear(self):
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'Accuracy.update', it needs 2 inputs (predicted value, true value), "
                             f"but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification" and y_pred.ndim == y.ndim and self._check_onehot_data(y):
            y = y.argmax(axis=1)
        if self._type == "classification":
            if y_pred.ndim != y.ndim + 1 or y_pred.shape[0] != y.shape[0]:
                raise ValueError(f"For 'Accuracy.update', y_pred should be (N, C) for labels of shape (N,), "
                                 f"but got y_pred {y_pred.shape} and y {y.shape}.")
            if self._class_num == 0:
                self._class_num = y_pred.shape[1]
            elif y_pred.shape[1] != self._class_num:
                raise ValueError(f"For 'Accuracy.update', class number not match, last input predicted data "
                                 f"contain {self._class_num} classes, but current predicted data contain "
                                 f"{y_pred.shape[1]} classes, please check your predicted value(inputs[0]).")
            result = (np.equal(y_pred.argmax(axis=1), y) * 1).reshape(-1)
        else:
            if y_pred.shape != y.shape:
                raise ValueError(f"For 'Accuracy.update', y_pred and y must have the same shape for 'multilabel', "
                                 f"but got {y_pred.shape} and {y.shape}.")
            y_pred = y_pred.round()
            result = np.equal(y_pred, y).all(axis=tuple(range(1, y.ndim))).astype(np.int64) if y.ndim > 1 else \
                np.equal(y_pred, y).astype(np.int64)
        self._correct_num += int(result.sum())
        self._total_num += result.shape[0]

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("The 'Accuracy' can not be calculated, because the number of samples is 0, please "
                               "check whether your inputs(predicted value, true value) are empty, or has called update "
                               "method before calling eval method.")
        return self._correct_num / self._total_num


class Loss(Metric):
    """Mean of the (per-batch mean) losses it was updated with."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._sum_loss = 0.0
        self._total_num = 0

    def update(self, *inputs):
        if len(inputs) != 1:
            raise ValueError(f"For 'Loss.update', it needs 1 input (loss), but got {len(inputs)}")
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the dimension of your input (loss) must be 1, "
                             f"but got {loss.ndim}.")
        self._sum_loss += float(loss.mean(-1))
        self._total_num += 1

    def eval(self):
        if self._total_num == 0:
            raise RuntimeError("The 'Loss' can not be calculated, because the number of samples is 0, please check "
                               "whether has called update method before calling eval method.")
        return self._sum_loss / self._total_num


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose label is among the k highest predictions."""

    def __init__(self, k):
        super().__init__()
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"For 'TopKCategoricalAccuracy', the argument 'k' must be a positive int, but got {k}.")
        self.k = k
        self.clear()

    def clear(self):
        self._correct_num = 0
        self._samples_num = 0

    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'TopKCategoricalAccuracy.update', it needs 2 inputs (predicted value, true value), "
                             f"but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and self._check_onehot_data(y):
            y = y.argmax(axis=1)
        indices = np.argsort(-y_pred, axis=1, kind="stable")[:, :self.k]
        self._correct_num += int(np.any(indices == y.reshape(-1, 1), axis=1).sum())
        self._samples_num += y.shape[0]

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError("The 'TopKCategoricalAccuracy' can not be calculated, because the number of samples "
                               "is 0.")
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(5)


class _ErrorMetric(Metric):
    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._error_sum = 0.0
        self._samples_num = 0

    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For '{self.__class__.__name__}.update', it needs 2 inputs "
                             f"(predicted value, true value), "
                             f"but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0]).astype(np.float64)
        y = self._convert_data(inputs[1]).astype(np.float64).reshape(y_pred.shape)
        err = self._error(y_pred - y)
        self._error_sum += float(err.reshape(err.shape[0], -1).mean(axis=1).sum()) if err.ndim else float(err)
        self._samples_num += y.shape[0] if y.ndim else 1

    def eval(self):
        if self._samples_num == 0:
            raise RuntimeError(f"The '{self.__class__.__name__}' can not be calculated, because the number of "
                               "samples is 0.")
        return self._error_sum / self._samples_num


class MAE(_ErrorMetric):
    """Mean absolute error."""

    @staticmethod
    def _error(diff):
        return np.abs(diff)


class MSE(_ErrorMetric):
    """Mean squared error."""

    @staticmethod
    def _error(diff):
        return diff * diff


_METRICS = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "loss": Loss,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "mae": MAE,
    "mse": MSE,
}


def names():
    """Names `get_metric_fn` accepts."""
    return sorted(_METRICS)


def get_metric_fn(name, *args, **kwargs):
    """A new metric by name ("accuracy", "acc", "loss", ...)."""
    if name not in _METRICS:
        raise KeyError(f"For 'get_metric_fn', unknown metric '{name}'; expected one of {names()}.")
    return _METRICS[name](*args, **kwargs)


def get_metrics(metrics):
    """{name: Metric} from a set/list of names or a dict of Metrics."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        for name, metric in metrics.items():
            if not isinstance(name, str) or not isinstance(metric, Metric):
                raise TypeError(f"The data type of metric: {name} is not Metric class.")
        return metrics
    if isinstance(metrics, (set, list, tuple)):
        return {name: get_metric_fn(name) for name in metrics}
    if isinstance(metrics, str):
        return {metrics: get_metric_fn(metrics)}
    raise TypeError(f"The argument 'metrics' should be None, dict, set or list, but got {type(metrics).__name__}.")
