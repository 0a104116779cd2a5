"""Callback base, RunContext and the parameters callbacks receive."""
import contextlib
import io
import os

__all__ = ["Callback", "RunContext", "CallbackParam"]


class Callback:
    """Base class of training and evaluation callbacks.

    Model calls on_train_begin / on_train_epoch_begin / on_train_step_begin /
    on_train_step_end / on_train_epoch_end / on_train_end during training and
    the on_eval_* methods during evaluation; by default they call the older
    begin / epoch_begin / step_begin / step_end / epoch_end / end methods.
    Each receives a RunContext whose original_args() are the callback
    parameters (cur_epoch_num, cur_step_num, batch_num, net_outputs, ...).
    """

    def __enter__(self):
        return self

    def __exit__(self, *err):
        pass

    def begin(self, run_context):
        pass

    def epoch_begin(self, run_context):
        pass

    def epoch_end(self, run_context):
        pass

    def step_begin(self, run_context):
        pass

    def step_end(self, run_context):
        pass

    def end(self, run_context):
        pass

    def on_train_begin(self, run_context):
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        self.step_end(run_context)

    def on_train_end(self, run_context):
        self.end(run_context)

    def on_eval_begin(self, run_context):
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context):
        self.step_end(run_context)

    def on_eval_end(self, run_context):
        self.end(run_context)


class CallbackParam(dict):
    """The callback parameters: a dict whose keys read as attributes."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"The callback parameters have no attribute '{key}'.") from None

    def __setattr__(self, key, value):
        self[key] = value


_InternalCallbackParam = CallbackParam


class RunContext:
    """What callbacks see of a run: `original_args()` (the callback
    parameters) and `request_stop()` to end training after this step."""

    def __init__(self, original_args):
        if not isinstance(original_args, dict):
            raise TypeError(f"The argument 'original_args' of RunContext should be dict type, "
                            f"but got {type(original_args).__name__}.")
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self):
        return self._original_args

    def request_stop(self):
        """Stops training at the end of the current step."""
        self._stop_requested = True

    def get_stop_requested(self):
        return self._stop_requested


# Set to 1 to let the callbacks of every rank of a distributed job print.
PRINT_ALL_RANKS_ENV = "MSRT_PRINT_ALL_RANKS"


def _prints_here():
    """Whether callbacks print in this process: on rank 0 of a distributed job
    (and in a single process), on every rank with MSRT_PRINT_ALL_RANKS=1."""
    if os.environ.get(PRINT_ALL_RANKS_ENV, "") not in ("", "0"):
        return True
    from ... import _C

    return _C.rank_id() == 0


class _Discard(io.TextIOBase):
    """A text stream that drops what is written to it."""

    def writable(self):
        return True

    def write(self, text):
        return len(text)


def _quiet_stdout():
    return contextlib.redirect_stdout(_Discard())


class _CallbackManager(Callback):
    """Calls a list of callbacks in order. On ranks other than 0 of a
    distributed job, what they print to sys.stdout is dropped (LossMonitor,
    TimeMonitor, ProgressBar, ... print once per job) unless
    MSRT_PRINT_ALL_RANKS=1; what they write to files is written on every rank."""

    def __init__(self, callbacks):
        self._quiet = not _prints_here()
        self._callbacks = []
        if callbacks is None:
            return
        if isinstance(callbacks, Callback):
            callbacks = [callbacks]
        if not isinstance(callbacks, (list, tuple)):
            raise TypeError(f"The 'callbacks' must be a Callback or a list of Callbacks, "
                            f"but got {type(callbacks).__name__}.")
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"The 'callbacks' must be Callback instances, but got {type(cb).__name__}.")
            self._callbacks.append(cb)

    def __bool__(self):
        return bool(self._callbacks)

    def __iter__(self):
        return iter(self._callbacks)

    def __enter__(self):
        for cb in self._callbacks:
            cb.__enter__()
        return self

    def __exit__(self, *err):
        for cb in reversed(self._callbacks):
            cb.__exit__(*err)


def _dispatch(method):
    def call(self, run_context):
        with _quiet_stdout() if self._quiet else contextlib.nullcontext():
            for cb in self._callbacks:
                getattr(cb, method)(run_context)

    call.__name__ = method
    return call


for _method in ("begin", "epoch_begin", "epoch_end", "step_begin", "step_end", "end",
                "on_train_begin", "on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin",
                "on_train_step_end", "on_train_end", "on_eval_begin", "on_eval_epoch_begin", "on_eval_epoch_end",
                "on_eval_step_begin", "on_eval_step_end", "on_eval_end"):
    setattr(_CallbackManager, _method, _dispatch(_method))
