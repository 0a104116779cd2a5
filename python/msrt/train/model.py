"""`msrt.train.Model`: training, evaluation and prediction loops."""
import numpy as np

from .. import context as _context
from .._tensor import Tensor
from .. import nn
from ..profiler import _span, _spanned
from .callback import RunContext, _CallbackManager, _InternalCallbackParam
from .metrics import Loss, get_metrics

__all__ = ["Model"]

_context._declare_consumer("enable_auto_mixed_precision", "train.Model (trains as amp_level O2)")


def _to_tensor(value):
    if isinstance(value, Tensor):
        return value
    return Tensor(np.ascontiguousarray(value))


def _dataset_size(dataset):
    size = getattr(dataset, "get_dataset_size", None)
    if size is not None:
        return size()
    try:
        return len(dataset)
    except TypeError:
        return None


def _rows(dataset):
    """Yields each row of an epoch as a tuple of Tensors."""
    make = getattr(dataset, "create_tuple_iterator", None)
    return _tensor_rows(make(num_epochs=1, output_numpy=True) if make is not None else iter(dataset))


def _epochs(dataset, num_epochs):
    """Yields, for each of `num_epochs` epochs, the rows of that epoch (as
    _rows). One iterator serves every epoch, as MindSpore's Model makes it:
    a shuffling dataset then gives each epoch a new order, where a fresh
    iterator per epoch would restart its shuffle from the same seed."""
    make = getattr(dataset, "create_tuple_iterator", None)
    if make is None:
        for _ in range(num_epochs):
            yield _tensor_rows(iter(dataset))
        return
    iterator = make(num_epochs=num_epochs, output_numpy=True)
    for _ in range(num_epochs):
        yield _tensor_rows(iterator)


def _tensor_rows(iterator):
    for row in iterator:
        if isinstance(row, dict):
            row = tuple(row.values())
        elif not isinstance(row, (tuple, list)):
            row = (row,)
        yield tuple(_to_tensor(v) for v in row)


_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")


def _check_type(arg, value, cls, name):
    if not isinstance(value, cls):
        raise TypeError(f"For 'Model', the type of '{arg}' should be '{name}', but got type "
                        f"'{type(value).__name__}'.")


class Model:
    """High-level training and evaluation (MindSpore's `Model`).

    With `optimizer` and `loss_fn`, training runs
    TrainOneStepCell(WithLossCell(network, loss_fn), optimizer); without
    `loss_fn` the network must return the loss. `metrics` (a set of names
    such as {"accuracy", "loss"} or a dict of Metrics) makes `eval` return
    {name: value}, evaluating WithEvalCell(network, loss_fn) unless an
    `eval_network` is given (with `eval_indexes` [loss, prediction, label]).
    """

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", boost_level="O0", **kwargs):
        _check_type("network", network, nn.Cell, "Cell")
        if loss_fn is not None:
            _check_type("loss_fn", loss_fn, nn.Cell, "Cell")
        if optimizer is not None:
            _check_type("optimizer", optimizer, nn.Optimizer, "Optimizer")
        if eval_network is not None:
            _check_type("eval_network", eval_network, nn.Cell, "Cell")
        for key in kwargs:
            if key not in _KWARGS:
                raise ValueError(f"The argument in 'kwargs' should be 'loss_scale_manager' or 'keep_batchnorm_fp32' "
                                 f"or 'boost_config_dict' or 'acc_level', but got '{key}'.")
        if not isinstance(amp_level, str):
            raise TypeError(f"The argument `level` must be a string in ['O0', 'O1', 'O2', 'O3', 'auto'], but got "
                            f"type {type(amp_level)}.")
        if amp_level not in ("O0", "O1", "O2", "O3", "auto"):
            raise ValueError(f"For 'Model', the argument 'amp_level' must be one of ['O0', 'O1', 'O2', 'O3', "
                             f"'auto'], but got {amp_level!r}.")
        if boost_level not in ("O0", "O1", "O2"):
            raise ValueError(f"For 'Model', the argument 'boost_level' must be one of ['O0', 'O1', 'O2'], "
                             f"but got {boost_level!r}.")
        if optimizer is None and amp_level != "O0":
            raise ValueError("Auto mixed precision will not work because 'optimizer' is None.Please make sure "
                             "'optimizer' is not None.")
        if isinstance(network, nn.GraphCell):
            for arg, value in (("loss_fn", loss_fn), ("optimizer", optimizer)):
                if value is not None:
                    raise ValueError(f"For 'Model', '{arg}' should be None when network is a GraphCell, "
                                     f"but got {type(value).__name__}.")
            if kwargs:
                raise ValueError("For 'Model', the '**kwargs' argument should be empty when network is a GraphCell.")
        if amp_level == "auto":
            amp_level = "O0"  # MindSpore's "auto" is O0 on CPU
        # Older profiles' enable_auto_mixed_precision=True trains as O2.
        if amp_level == "O0" and _context.get_context("enable_auto_mixed_precision"):
            amp_level = "O2"
        if "loss_scale_manager" in kwargs:
            from .loss_scale_manager import LossScaleManager

            manager = kwargs["loss_scale_manager"]
            if manager is not None and not isinstance(manager, LossScaleManager):
                raise TypeError(f"For 'Model', the type of 'loss_scale_manager' should be 'LossScaleManager', but "
                                f"got type '{type(manager).__name__}'.")
        self._amp_kwargs = {k: kwargs[k] for k in ("loss_scale_manager", "keep_batchnorm_fp32") if k in kwargs}
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._amp_level = amp_level
        self._boost_level = boost_level
        self._train_network = self._build_train_network()
        self._metric_fns = None
        self._eval_network = None
        self._eval_indexes = None
        self._build_eval_network(metrics, eval_network, eval_indexes)
        self._predict_network = network

    # --- building networks ---------------------------------------------------
    def _build_train_network(self):
        from .. import amp

        network = self._network
        if self._optimizer is not None:
            return amp.build_train_network(network, self._optimizer, self._loss_fn, level=self._amp_level,
                                           **self._amp_kwargs)
        if self._amp_level != "O0":
            network = amp.auto_mixed_precision(network, self._amp_level)
        if self._loss_fn is not None:
            return amp._add_loss_network(network, self._loss_fn, self._amp_level)
        return network

    def _build_eval_network(self, metrics, eval_network, eval_indexes):
        self._metric_fns = get_metrics(metrics)
        if not self._metric_fns:
            if eval_network is not None:
                self._eval_network = eval_network
            return
        if eval_network is not None:
            if eval_indexes is not None and not (isinstance(eval_indexes, list) and len(eval_indexes) == 3):
                raise ValueError(f"The argument 'eval_indexes' must be a list or None. If 'eval_indexes' is a list, "
                                 f"length of it must be three. But got {eval_indexes}.")
            self._eval_network = eval_network
            self._eval_indexes = eval_indexes
        else:
            if self._loss_fn is None:
                raise ValueError("If `metrics` is set, `eval_network` must not be None. Do not set `metrics` if you "
                                 "don't want an evaluation.\nIf evaluation is required, you need to specify "
                                 "`eval_network`, which will be used in the framework to evaluate the model.\nFor "
                                 "the simple scenarios with one data, one label and one logits, `eval_network` is "
                                 "optional, and then you can set `eval_network` or `loss_fn`. For the latter case, "
                                 "framework will automatically build an evaluation network with `network` and "
                                 "`loss_fn`.")
            self._eval_network = nn.WithEvalCell(self._network, self._loss_fn, add_cast_fp32=self._amp_level != "O0")
            self._eval_indexes = [0, 1, 2]

    @property
    def train_network(self):
        return self._train_network

    @property
    def predict_network(self):
        return self._predict_network

    @property
    def eval_network(self):
        return self._eval_network

    def build(self, train_dataset=None, valid_dataset=None, sink_size=-1, epoch=1):
        """Graph compilation ahead of time: nothing to do when running eagerly."""

    # --- training --------------------------------------------------------------
    @staticmethod
    def _check_epoch(epoch, what):
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch <= 0:
            raise ValueError(f"For 'Model.{what}', the argument 'epoch' must be a positive int, but got {epoch}.")

    def _cb_params(self, mode, dataset, callbacks, epoch, sink_mode):
        cb = _InternalCallbackParam()
        cb.train_network = self._train_network
        cb.network = self._network
        cb.loss_fn = self._loss_fn
        cb.optimizer = self._optimizer
        cb.parallel_mode = _context.get_auto_parallel_context("parallel_mode")
        cb.device_number = 1
        cb.epoch_num = epoch
        cb.batch_num = _dataset_size(dataset)
        cb.cur_epoch_num = 0
        cb.cur_step_num = 0
        cb.mode = mode
        cb.dataset_sink_mode = sink_mode
        cb.list_callback = callbacks
        cb.net_outputs = None
        return cb

    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Trains for `epoch` epochs over `train_dataset` (rows of (data, label)).

        dataset_sink_mode is accepted and runs as non-sink mode (as MindSpore
        does on CPU).
        """
        self._check_epoch(epoch, "train")
        if not isinstance(initial_epoch, int) or not 0 <= initial_epoch < epoch:
            raise ValueError(f"For 'Model.train', the argument 'initial_epoch' must be in [0, epoch), "
                             f"but got {initial_epoch}.")
        if self._optimizer is None:
            raise ValueError("For 'Model.train', the model needs an 'optimizer' to train.")
        callbacks = _CallbackManager(callbacks)
        cb_params = self._cb_params("train", train_dataset, callbacks, epoch, False)
        cb_params.train_dataset = train_dataset
        cb_params.cur_step_num = initial_epoch * (cb_params.batch_num or 0)
        self._train_process(epoch, train_dataset, callbacks, cb_params, initial_epoch)

    def _train_process(self, epoch, train_dataset, callbacks, cb_params, initial_epoch, valid=None):
        run_context = RunContext(cb_params)
        network = self._train_network
        network.set_train()
        cb_params.initial_epoch = initial_epoch
        with callbacks:
            callbacks.on_train_begin(run_context)
            # A callback may move the start (BackupAndRestore resuming from its backup).
            epochs = _epochs(train_dataset, epoch - cb_params.initial_epoch)
            for i in range(cb_params.initial_epoch, epoch):
                cb_params.cur_epoch_num = i + 1
                callbacks.on_train_epoch_begin(run_context)
                for row in _spanned(next(epochs)):
                    if self._loss_fn is not None and len(row) != 2:
                        raise ValueError(f"When 'loss_fn' is not None, 'train_dataset' should return two elements, "
                                         f"but got {len(row)}")
                    cb_params.cur_step_num += 1
                    cb_params.train_dataset_element = row
                    callbacks.on_train_step_begin(run_context)
                    with _span("step"):
                        cb_params.net_outputs = network(*row)
                    callbacks.on_train_step_end(run_context)
                    if run_context.get_stop_requested():
                        break
                if valid is not None and valid[0] is not None and (i + 1) % valid[1] == 0:
                    network.set_train(False)
                    cb_params.metrics, eval_loss = self._eval_in_fit(valid[0])
                    # As MindSpore: the metrics and "eval_loss", the mean loss output of the evaluation network.
                    cb_params.eval_results = dict(cb_params.metrics)
                    if eval_loss is not None:
                        cb_params.eval_results["eval_loss"] = eval_loss
                    network.set_train()
                callbacks.on_train_epoch_end(run_context)
                if run_context.get_stop_requested():
                    break
            callbacks.on_train_end(run_context)
        network.set_train(False)

    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Trains and evaluates on `valid_dataset` every `valid_frequency`
        epochs; the results reach callbacks as cb_params.metrics."""
        self._check_epoch(epoch, "fit")
        if not isinstance(valid_frequency, int) or valid_frequency <= 0:
            raise ValueError(f"For 'Model.fit', the argument 'valid_frequency' must be a positive int, "
                             f"but got {valid_frequency}.")
        if valid_dataset is not None and not self._metric_fns:
            raise ValueError("For 'Model.fit', the model argument 'metrics' can not be None or empty when "
                             "'valid_dataset' is given.")
        callbacks = _CallbackManager(callbacks)
        cb_params = self._cb_params("train", train_dataset, callbacks, epoch, False)
        cb_params.train_dataset = train_dataset
        cb_params.valid_dataset = valid_dataset
        cb_params.cur_step_num = initial_epoch * (cb_params.batch_num or 0)
        self._train_process(epoch, train_dataset, callbacks, cb_params, initial_epoch,
                            valid=(valid_dataset, valid_frequency))

    # --- evaluation and prediction -----------------------------------------------
    def _clear_metrics(self):
        for metric in self._metric_fns.values():
            metric.clear()

    def _update_metrics(self, outputs):
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        if not isinstance(outputs, (tuple, list)):
            raise ValueError(f"The argument 'outputs' should be tuple, but got {type(outputs).__name__}.")
        for metric in self._metric_fns.values():
            if self._eval_indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[self._eval_indexes[0]])
            else:
                metric.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])

    def _get_metrics(self):
        return {name: metric.eval() for name, metric in self._metric_fns.items()}

    def _eval_in_fit(self, valid_dataset):
        """The metrics over `valid_dataset`, and the mean of the evaluation
        network's loss output (None when eval_indexes does not name one)."""
        network = self._eval_network
        network.set_train(False)
        self._clear_metrics()
        eval_loss = Loss() if self._eval_indexes is not None else None
        for row in _rows(valid_dataset):
            outputs = network(*row)
            outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
            self._update_metrics(outputs)
            if eval_loss is not None:
                eval_loss.update(outputs[self._eval_indexes[0]])
        return self._get_metrics(), None if eval_loss is None else eval_loss.eval()

    def _eval_dataset(self, valid_dataset, callbacks, cb_params):
        network = self._eval_network
        network.set_train(False)
        self._clear_metrics()
        run_context = RunContext(cb_params)
        callbacks.on_eval_begin(run_context)
        callbacks.on_eval_epoch_begin(run_context)
        for row in _rows(valid_dataset):
            cb_params.cur_step_num += 1
            callbacks.on_eval_step_begin(run_context)
            outputs = network(*row)
            cb_params.net_outputs = outputs
            callbacks.on_eval_step_end(run_context)
            self._update_metrics(outputs)
            if run_context.get_stop_requested():
                break
        callbacks.on_eval_epoch_end(run_context)
        metrics = self._get_metrics()
        cb_params.metrics = metrics
        callbacks.on_eval_end(run_context)
        return metrics

    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        """Evaluates the metrics over `valid_dataset`; returns {name: value}."""
        if not self._metric_fns:
            raise ValueError("The model argument 'metrics' can not be None or empty, you should set the argument "
                             "'metrics' for model.")
        callbacks = _CallbackManager(callbacks)
        cb_params = self._cb_params("eval", valid_dataset, callbacks, 1, False)
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.cur_epoch_num = 1
        with callbacks:
            return self._eval_dataset(valid_dataset, callbacks, cb_params)

    def predict(self, *predict_data, backend=None, config=None):
        """The network's output for `predict_data`, in inference mode."""
        inputs = tuple(_to_tensor(x) if isinstance(x, np.ndarray) else x for x in predict_data)
        self._predict_network.set_train(False)
        return self._predict_network(*inputs)
