"""Metric base class and the metrics Model evaluates with."""
import sys

import numpy as np

from ..._tensor import Tensor

__all__ = ["Metric", "Accuracy", "Loss", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "MAE", "MSE", "Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix",
           "get_metric_fn", "names", "get_metrics"]


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


def _check_average(name, average):
    if not isinstance(average, bool):
        raise TypeError(f"For '{name}.eval', the argument 'average' must be bool, but got {type(average).__name__}.")


class _ClassCounts(Metric):
    """Per-class counts of one-hot predictions (argmax of y_pred) against
    labels (indices or one-hot): true positives, predicted and actual
    positives. With eval_type 'multilabel' (0/1 matrices) the counts are per
    sample, as MindSpore's Precision and Recall count them."""

    def __init__(self, eval_type="classification"):
        super().__init__()
        if eval_type not in ("classification", "multilabel"):
            raise ValueError(f"For '{type(self).__name__}', the argument 'eval_type' must be in ['classification', "
                             f"'multilabel'], but got {eval_type}.")
        self._type = eval_type
        self.eps = sys.float_info.min
        self.clear()

    def clear(self):
        self._class_num = 0
        multilabel = self._type == "multilabel"
        self._true_positives = np.empty(0) if multilabel else 0
        self._positives = np.empty(0) if multilabel else 0
        self._actual_positives = np.empty(0) if multilabel else 0

    def update(self, *inputs):
        name = type(self).__name__
        if len(inputs) != 2:
            raise ValueError(f"For '{name}.update', it needs 2 inputs (predicted value, true value), "
                             f"but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification" and y_pred.ndim == y.ndim and self._check_onehot_data(y):
            y = y.argmax(axis=1)
        expected = y.ndim + 1 if self._type == "classification" else y.ndim
        if y_pred.ndim != expected or y_pred.ndim < 2 or y_pred.shape[0] != y.shape[0]:
            raise ValueError(f"For '{name}.update', y_pred should be (N, C) and y (N,) or (N, C) for "
                             f"'{self._type}', but got y_pred {y_pred.shape} and y {y.shape}.")
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For '{name}.update', class number not match, last input predicted data contain "
                             f"{self._class_num} classes, but current predicted data contain {y_pred.shape[1]} "
                             f"classes, please check your predicted value(inputs[0]).")
        if self._type == "classification":
            y = y.reshape(-1).astype(np.int64)
            if y.size and (y.min() < 0 or y.max() >= self._class_num):
                raise ValueError(f"For '{name}.update', the labels must be in [0, {self._class_num}), "
                                 f"but got labels in [{y.min()}, {y.max()}].")
            eye = np.eye(self._class_num)
            y, y_pred = eye[y], eye[y_pred.argmax(axis=1).reshape(-1)]
            axis = 0
        else:
            if y_pred.shape != y.shape or not (np.isin(y_pred, (0, 1)).all() and np.isin(y, (0, 1)).all()):
                raise ValueError(f"For '{name}.update', 'multilabel' needs y_pred and y of one shape holding 0 "
                                 f"and 1, but got shapes {y_pred.shape} and {y.shape}.")
            y, y_pred = y.reshape(y.shape[0], -1), y_pred.reshape(y.shape[0], -1)
            axis = 1
        true_positives = (y * y_pred).sum(axis=axis)
        positives, actual_positives = y_pred.sum(axis=axis), y.sum(axis=axis)
        if self._type == "multilabel":
            for attr, value in (("_true_positives", true_positives), ("_positives", positives),
                                ("_actual_positives", actual_positives)):
                setattr(self, attr, np.concatenate((getattr(self, attr), value)))
        else:
            self._true_positives = self._true_positives + true_positives
            self._positives = self._positives + positives
            self._actual_positives = self._actual_positives + actual_positives

    def _result(self, numerator, denominator, average):
        """numerator / denominator per class (or sample), or their mean."""
        name = type(self).__name__
        _check_average(name, average)
        if self._class_num == 0:
            raise RuntimeError(f"The '{name}' can not be calculated, because the number of samples is 0, please "
                               f"check whether your inputs(predicted value, true value) are empty, or has called "
                               f"update method before calling eval method.")
        result = numerator / (denominator + self.eps)
        return float(result.mean()) if average else result


class Precision(_ClassCounts):
    """Per class (or, averaged, over classes): true positives / predicted positives.
    'multilabel': per sample."""

    def eval(self, average=False):
        return self._result(self._true_positives, self._positives, average)


class Recall(_ClassCounts):
    """Per class (or, averaged, over classes): true positives / actual positives.
    'multilabel': per sample."""

    def eval(self, average=False):
        return self._result(self._true_positives, self._actual_positives, average)


class Fbeta(_ClassCounts):
    """Per class (or averaged): (1 + beta^2) tp / (beta^2 (tp + fn) + tp + fp)."""

    def __init__(self, beta):
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise TypeError(f"For '{type(self).__name__}', the argument 'beta' must be float, "
                            f"but got {type(beta).__name__}.")
        if not beta > 0:
            raise ValueError(f"For '{type(self).__name__}', the argument 'beta' must be greater than zero, "
                             f"but got {beta}.")
        self.beta = beta
        super().__init__()

    def eval(self, average=False):
        b2 = self.beta ** 2
        return self._result((1.0 + b2) * self._true_positives, b2 * self._actual_positives + self._positives,
                            average)


class F1(Fbeta):
    """Fbeta with beta = 1."""

    def __init__(self):
        super().__init__(1.0)


class ConfusionMatrix(Metric):
    """counts[i, j]: samples of label i predicted as j. y_pred holds scores
    (N, C, ...) (argmax over C) or, with y's shape, indices or probabilities
    cut at `threshold`. `normalize`: 'no_norm', 'target' (rows sum to 1),
    'prediction' (columns) or 'all'."""

    def __init__(self, num_classes, normalize="no_norm", threshold=0.5):
        super().__init__()
        if isinstance(num_classes, bool) or not isinstance(num_classes, int):
            raise TypeError(f"For 'ConfusionMatrix', the argument 'num_classes' must be int, "
                            f"but got {type(num_classes).__name__}.")
        if num_classes < 1:
            raise ValueError(f"For 'ConfusionMatrix', the argument 'num_classes' must be positive, "
                             f"but got {num_classes}.")
        if normalize not in ("target", "prediction", "all", "no_norm"):
            raise ValueError(f"For 'ConfusionMatrix', the argument 'normalize' must be in ['target', 'prediction', "
                             f"'all', 'no_norm'], but got {normalize}.")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise TypeError(f"For 'ConfusionMatrix', the argument 'threshold' must be float, "
                            f"but got {type(threshold).__name__}.")
        self.num_classes = num_classes
        self.normalize = normalize
        self.threshold = threshold
        self.clear()

    def clear(self):
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError(f"For 'ConfusionMatrix.update', it needs 2 inputs (predicted value, true value), "
                             f"but got {len(inputs)}.")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim + 1:
            y_pred = y_pred.argmax(axis=1)
        elif y_pred.ndim == y.ndim and np.issubdtype(y_pred.dtype, np.floating):
            y_pred = (y_pred >= self.threshold).astype(np.int64)
        if y_pred.shape != y.shape:
            raise ValueError(f"For 'ConfusionMatrix.update', y_pred and y must have one shape (or y_pred one more "
                             f"axis of classes), but got {inputs[0].shape} and {y.shape}.")
        y, y_pred = y.reshape(-1).astype(np.int64), y_pred.reshape(-1).astype(np.int64)
        for arg, v in (("y", y), ("y_pred", y_pred)):
            if v.size and (v.min() < 0 or v.max() >= self.num_classes):
                raise ValueError(f"For 'ConfusionMatrix.update', the classes in '{arg}' must be in "
                                 f"[0, {self.num_classes}), but got values in [{v.min()}, {v.max()}].")
        counts = np.bincount(self.num_classes * y + y_pred, minlength=self.num_classes ** 2)
        self.confusion_matrix += counts.reshape(self.num_classes, self.num_classes)
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        matrix = self.confusion_matrix
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.normalize == "target":
                return matrix / matrix.sum(axis=1, keepdims=True)
            if self.normalize == "prediction":
                return matrix / matrix.sum(axis=0, keepdims=True)
            if self.normalize == "all":
                return matrix / matrix.sum()
        return matrix


_METRICS = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "loss": Loss,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "mae": MAE,
    "mse": MSE,
    "precision": Precision,
    "recall": Recall,
    "F1": F1,
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
    """{name: Metric} from a set of names or a dict of Metrics (MindSpore takes no other kinds)."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        for name, metric in metrics.items():
            if not isinstance(name, str) or not isinstance(metric, Metric):
                raise TypeError(f"For 'Model', when the argument 'metrics' is a dict, its keys must be str and its "
                                f"values Metric, but got {name!r}: {type(metric).__name__}.")
        return metrics
    if isinstance(metrics, set):
        return {name: get_metric_fn(name) for name in metrics}
    raise TypeError(f"For 'Model', the argument 'metrics' must be None, a dict or a set, "
                    f"but got {type(metrics).__name__}.")
