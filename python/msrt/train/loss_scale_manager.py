"""Loss scale managers (MindSpore's `mindspore.amp.LossScaleManager`,
`FixedLossScaleManager`, `DynamicLossScaleManager`), given to
`Model(loss_scale_manager=...)` or `amp.build_train_network`. A manager
holds the settings; the training step gets them through `get_update_cell()`
(Note [Loss-scaled training step] in msrt/nn/wrap/loss_scale.py)."""
import math
import numbers

from .. import nn

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


class LossScaleManager:
    """Base class of the loss scale managers."""

    def get_loss_scale(self):
        """The current loss scale."""
        raise NotImplementedError(f"'{type(self).__name__}' must define 'get_loss_scale'.")

    def update_loss_scale(self, overflow):
        """Adjusts the scale after a step that overflowed or not."""
        raise NotImplementedError(f"'{type(self).__name__}' must define 'update_loss_scale'.")

    def get_update_cell(self):
        """The Cell TrainOneStepWithLossScaleCell calls to update the scale."""
        raise NotImplementedError(f"'{type(self).__name__}' must define 'get_update_cell'.")


def _check_number(value, name, where):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{where}', the argument '{name}' must be int or float, but got "
                        f"{type(value).__name__}.")
    if not math.isfinite(value):
        raise ValueError(f"For '{where}', the argument '{name}' must be finite, but got {value}.")


class FixedLossScaleManager(LossScaleManager):
    """A constant loss scale. With `drop_overflow_update` (the default) a step
    whose gradients overflow does not update the parameters; without it, the
    loss is scaled and the optimizer must undo the scale (its `loss_scale`
    argument set to the same value)."""

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        _check_number(loss_scale, "loss_scale", "FixedLossScaleManager")
        if loss_scale < 1:
            raise ValueError(f"The argument 'loss_scale' must be >= 1, but got {loss_scale}")
        if not isinstance(drop_overflow_update, bool):
            raise TypeError(f"For 'FixedLossScaleManager', the argument 'drop_overflow_update' must be bool, but got "
                            f"{type(drop_overflow_update).__name__}.")
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        return self._loss_scale

    def get_drop_overflow_update(self):
        """Whether a step whose gradients overflow is dropped."""
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        """The scale is fixed: nothing changes."""

    def get_update_cell(self):
        """A FixedLossScaleUpdateCell, or None when overflowing steps are not dropped."""
        if not self._drop_overflow_update:
            return None
        return nn.FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """A loss scale that starts at `init_loss_scale`, is divided by
    `scale_factor` (not below 1) after a step that overflows, and multiplied
    by it after `scale_window` steps in a row that do not. Steps that
    overflow are always dropped."""

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        _check_number(init_loss_scale, "init_loss_scale", "DynamicLossScaleManager")
        if init_loss_scale < 1.0:
            raise ValueError(f"The argument 'init_loss_scale' must be > 1, but got {init_loss_scale}")
        if isinstance(scale_window, bool) or not isinstance(scale_window, int):
            raise TypeError(f"For 'DynamicLossScaleManager', the argument 'scale_window' must be int, but got "
                            f"{type(scale_window).__name__}.")
        if scale_window <= 0:
            raise ValueError(f"For 'DynamicLossScaleManager', the argument 'scale_window' must be a positive int, "
                             f"but got {scale_window}.")
        _check_number(scale_factor, "scale_factor", "DynamicLossScaleManager")
        if scale_factor <= 0:
            raise ValueError(f"The argument 'scale_factor' must be > 0, but got {scale_factor}")
        self.loss_scale = init_loss_scale
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = 1000
        self.bad_step = 0

    def get_loss_scale(self):
        return self.loss_scale

    def update_loss_scale(self, overflow):
        """Adjusts the host-side scale as the update cell does on the device;
        raises RuntimeError after more than 1000 overflows in a row."""
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale Continuous overflow {self.bad_step} times")
        self.cur_iter += 1

    def get_drop_overflow_update(self):
        """Always True: a step that overflows is dropped."""
        return True

    def get_update_cell(self):
        return nn.DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
