"""LambdaCallback: a callback made of functions."""
from ._callback import Callback

__all__ = ["LambdaCallback"]

_HOOKS = ("on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin", "on_train_step_end",
          "on_train_begin", "on_train_end", "on_eval_epoch_begin", "on_eval_epoch_end", "on_eval_step_begin",
          "on_eval_step_end", "on_eval_begin", "on_eval_end")


class LambdaCallback(Callback):
    """Each argument given is a function of the RunContext called at that point."""

    def __init__(self, on_train_epoch_begin=None, on_train_epoch_end=None, on_train_step_begin=None,
                 on_train_step_end=None, on_train_begin=None, on_train_end=None, on_eval_epoch_begin=None,
                 on_eval_epoch_end=None, on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
                 on_eval_end=None):
        super().__init__()
        given = locals()
        for hook in _HOOKS:
            fn = given[hook]
            if fn is None:
                continue
            if not callable(fn):
                raise TypeError(f"For 'LambdaCallback', the argument '{hook}' must be callable or None, "
                                f"but got {type(fn).__name__}.")
            setattr(self, hook, fn)
