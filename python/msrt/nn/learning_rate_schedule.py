"""Learning-rate schedules: cells mapping the global step to a learning rate.

The built-in schedules compute in Python from an integer step, so an
optimizer reading them never waits on the device; called with a Tensor step
they read its value and return a float32 Tensor of the same shape.
"""
import math

import numpy as np

from .._tensor import Tensor
from .cell import Cell

__all__ = ["LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR",
           "PolynomialDecayLR", "WarmUpLR"]


def _check_float(value, arg, cls_name, positive=True):
    if not isinstance(value, float):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be type of float, "
                        f"but got '{arg}' type: {type(value).__name__}.")
    if positive and value <= 0.0:
        raise ValueError(f"For '{cls_name}', the '{arg}' must be a positive float, but got {value}.")
    if not positive and value < 0.0:
        raise ValueError(f"For '{cls_name}', the '{arg}' must be a non-negative float, but got {value}.")
    return value


def _check_positive_int(value, arg, cls_name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls_name}', the '{arg}' must be a positive int, but got {value}.")
    return value


def _check_bool(value, arg, cls_name):
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls_name}', the argument '{arg}' must be bool, but got {type(value).__name__}.")
    return value


class LearningRateSchedule(Cell):
    """Base class: `construct(global_step)` returns the learning rate."""

    def construct(self, global_step):
        raise NotImplementedError


class _HostSchedule(LearningRateSchedule):
    """A schedule computed on the host from the step number (`lr_at(step)`)."""

    def lr_at(self, step):
        raise NotImplementedError

    def construct(self, global_step):
        if isinstance(global_step, Tensor):
            steps = np.asarray(global_step.asnumpy(), dtype=np.float64)
            out = np.vectorize(self.lr_at, otypes=[np.float64])(steps) if steps.ndim else self.lr_at(float(steps))
            return Tensor(np.asarray(out, dtype=np.float32))
        return Tensor(np.float32(self.lr_at(float(global_step))))


class _StepDecay(_HostSchedule):
    """Schedules of the form f(learning_rate, decay_rate, p) with
    p = step / decay_steps, floored when is_stair."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        self.learning_rate = _check_float(learning_rate, "learning_rate", self.cls_name)
        self.decay_rate = _check_float(decay_rate, "decay_rate", self.cls_name)
        self.decay_steps = _check_positive_int(decay_steps, "decay_steps", self.cls_name)
        self.is_stair = _check_bool(is_stair, "is_stair", self.cls_name)

    def lr_at(self, step):
        p = step / self.decay_steps
        return self._decay(math.floor(p) if self.is_stair else p)


class ExponentialDecayLR(_StepDecay):
    """learning_rate * decay_rate ^ (step / decay_steps) (floored when is_stair)."""

    def _decay(self, p):
        return self.learning_rate * self.decay_rate ** p


class NaturalExpDecayLR(_StepDecay):
    """learning_rate * e^(-decay_rate * step / decay_steps) (floored when is_stair)."""

    def _decay(self, p):
        return self.learning_rate * math.exp(-self.decay_rate * p)


class InverseDecayLR(_StepDecay):
    """learning_rate / (1 + decay_rate * step / decay_steps) (floored when is_stair)."""

    def _decay(self, p):
        return self.learning_rate / (1.0 + self.decay_rate * p)


class CosineDecayLR(_HostSchedule):
    """min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * min(step, decay_steps) / decay_steps))."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        self.min_lr = _check_float(min_lr, "min_lr", self.cls_name, positive=False)
        self.max_lr = _check_float(max_lr, "max_lr", self.cls_name)
        self.decay_steps = _check_positive_int(decay_steps, "decay_steps", self.cls_name)
        if min_lr >= max_lr:
            raise ValueError(f"For 'CosineDecayLR', the 'max_lr' should be greater than the 'min_lr', "
                             f"but got 'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")

    def lr_at(self, step):
        p = min(step, self.decay_steps) / self.decay_steps
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + math.cos(math.pi * p))


class PolynomialDecayLR(_HostSchedule):
    """(learning_rate - end_learning_rate) * (1 - p)^power + end_learning_rate,
    p = min(step, decay_steps) / decay_steps (or step over the next multiple
    of decay_steps when update_decay_steps)."""

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        self.start_learning_rate = _check_float(learning_rate, "learning_rate", self.cls_name)
        self.end_learning_rate = _check_float(end_learning_rate, "end_learning_rate", self.cls_name, positive=False)
        self.decay_steps = _check_positive_int(decay_steps, "decay_steps", self.cls_name)
        self.power = _check_float(power, "power", self.cls_name)
        self.update_decay_steps = _check_bool(update_decay_steps, "update_decay_steps", self.cls_name)
        self.diff_learning_rate = learning_rate - end_learning_rate

    def lr_at(self, step):
        decay_steps = self.decay_steps
        if self.update_decay_steps:
            decay_steps = decay_steps * max(math.ceil(step / decay_steps), 1)
        else:
            step = min(step, decay_steps)
        p = step / decay_steps
        return self.diff_learning_rate * (1.0 - p) ** self.power + self.end_learning_rate


class WarmUpLR(_HostSchedule):
    """learning_rate * min(step, warmup_steps) / warmup_steps."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        self.learning_rate = _check_float(learning_rate, "learning_rate", self.cls_name, positive=False)
        self.warmup_steps = _check_positive_int(warmup_steps, "warmup_steps", self.cls_name)

    def lr_at(self, step):
        return self.learning_rate * min(step, self.warmup_steps) / self.warmup_steps
