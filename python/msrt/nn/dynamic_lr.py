"""Dynamic learning rates as lists (one value per step), as MindSpore's
`nn.dynamic_lr` functions compute them."""
import math

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
           "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]


def _positive_int(value, arg, fn):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For '{fn}', the argument '{arg}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{fn}', the '{arg}' must be a positive int, but got {value}.")


def _float(value, arg, fn, positive=True):
    if not isinstance(value, float):
        raise TypeError(f"For '{fn}', the argument '{arg}' must be type of float, but got {type(value).__name__}.")
    if (positive and value <= 0.0) or value < 0.0:
        raise ValueError(f"For '{fn}', the '{arg}' must be a {'positive' if positive else 'non-negative'} float, "
                         f"but got {value}.")


def _check_inputs(fn, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair):
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    _positive_int(decay_epoch, "decay_epoch", fn)
    _float(learning_rate, "learning_rate", fn)
    _float(decay_rate, "decay_rate", fn)
    if not isinstance(is_stair, bool):
        raise TypeError(f"For '{fn}', the argument 'is_stair' must be bool, but got {type(is_stair).__name__}.")


def piecewise_constant_lr(milestone, learning_rates):
    """learning_rates[t] for steps in [milestone[t-1], milestone[t])."""
    fn = "piecewise_constant_lr"
    if not isinstance(milestone, (list, tuple)) or not isinstance(learning_rates, (list, tuple)):
        raise TypeError(f"For '{fn}', 'milestone' and 'learning_rates' must be lists or tuples.")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"For '{fn}', the size of 'milestone' must be same with the size of 'learning_rates', "
                         f"but got 'milestone' size: {len(milestone)}, 'learning_rates' size: {len(learning_rates)}.")
    lr = []
    last = 0
    for i, item in enumerate(milestone):
        _positive_int(item, f"milestone[{i}]", fn)
        if not isinstance(learning_rates[i], float):
            raise TypeError(f"For '{fn}', the argument 'learning_rates[{i}]' must be float, "
                            f"but got {type(learning_rates[i]).__name__}.")
        if item < last:
            raise ValueError(f"For '{fn}', the value of milestone[{i}] must be greater than milestone[{i - 1}], "
                             f"but got milestone[{i}]: {item}, milestone[{i - 1}]: {last}.")
        lr += [learning_rates[i]] * (item - last)
        last = item
    return lr


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    _check_inputs("exponential_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    lr = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        p = math.floor(epoch / decay_epoch) if is_stair else epoch / decay_epoch
        lr.append(learning_rate * decay_rate ** p)
    return lr


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    _check_inputs("natural_exp_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    lr = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        p = math.floor(epoch / decay_epoch) * decay_epoch if is_stair else epoch
        lr.append(learning_rate * math.e ** (-decay_rate * p))
    return lr


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    _check_inputs("inverse_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair)
    lr = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        p = math.floor(epoch / decay_epoch) if is_stair else epoch / decay_epoch
        lr.append(learning_rate / (1 + decay_rate * p))
    return lr


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    fn = "cosine_decay_lr"
    _float(min_lr, "min_lr", fn, positive=False)
    _float(max_lr, "max_lr", fn)
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    _positive_int(decay_epoch, "decay_epoch", fn)
    if min_lr >= max_lr:
        raise ValueError(f"For '{fn}', the 'max_lr' should be greater than the 'min_lr', "
                         f"but got 'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")
    delta = 0.5 * (max_lr - min_lr)
    lr = []
    for i in range(total_step):
        epoch = min(math.floor(i / step_per_epoch), decay_epoch)
        lr.append(min_lr + delta * (1 + math.cos(math.pi * epoch / decay_epoch)))
    return lr


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch, power,
                        update_decay_epoch=False):
    fn = "polynomial_decay_lr"
    _float(learning_rate, "learning_rate", fn)
    _float(end_learning_rate, "end_learning_rate", fn, positive=False)
    _float(power, "power", fn)
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    _positive_int(decay_epoch, "decay_epoch", fn)
    if not isinstance(update_decay_epoch, bool):
        raise TypeError(f"For '{fn}', the argument 'update_decay_epoch' must be bool.")
    delta = learning_rate - end_learning_rate
    lr = []
    for i in range(total_step):
        epoch = math.floor(i / step_per_epoch)
        if update_decay_epoch:
            tmp_decay, tmp_epoch = decay_epoch * max(math.ceil(epoch / decay_epoch), 1), epoch
        else:
            tmp_decay, tmp_epoch = decay_epoch, min(epoch, decay_epoch)
        lr.append(delta * (1 - tmp_epoch / tmp_decay) ** power + end_learning_rate)
    return lr


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    fn = "warmup_lr"
    _float(learning_rate, "learning_rate", fn, positive=False)
    _positive_int(warmup_epoch, "warmup_epoch", fn)
    _positive_int(total_step, "total_step", fn)
    _positive_int(step_per_epoch, "step_per_epoch", fn)
    lr = []
    for i in range(total_step):
        epoch = min(math.floor(i / step_per_epoch), warmup_epoch)
        lr.append(learning_rate * epoch / warmup_epoch)
    return lr
