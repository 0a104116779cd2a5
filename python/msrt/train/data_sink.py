"""mindspore.data_sink: a function that runs `fn` over the next `sink_size` batches of a
dataset that loops over its epochs, returning the last output."""
from ..common.jit_config import JitConfig

__all__ = ["data_sink"]


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """A function of no arguments: each call feeds the next `sink_size` rows of `dataset`
    (starting a new epoch whenever one ends) to `fn`, one call of `fn` per row, and
    returns what the last call returned. With `jit_config`, `fn` is compiled
    (`ms.jit(fn, jit_config=..., input_signature=...)`); without, it runs as written.
    On msrt's CPU backend no data moves to a device queue: the rows are read on the
    host, as MindSpore does in non-sink mode."""
    from .. import _jit
    from ..dataset.datasets import Dataset

    if not callable(fn):
        raise TypeError(f"For 'data_sink', the argument 'fn' must be callable, but got {type(fn).__name__}.")
    if not isinstance(dataset, Dataset):
        raise TypeError(f"For 'data_sink', the argument 'dataset' must be a Dataset, but got "
                        f"{type(dataset).__name__}.")
    if not isinstance(sink_size, int) or isinstance(sink_size, bool) or sink_size <= 0:
        raise ValueError(f"For 'data_sink', the 'sink_size' must be a positive int, but got {sink_size!r}.")
    if jit_config is not None and not isinstance(jit_config, JitConfig):
        raise TypeError(f"For 'data_sink', the argument 'jit_config' must be a JitConfig or None, but got "
                        f"{type(jit_config).__name__}.")
    step = fn if jit_config is None else _jit.jit(fn, jit_config=jit_config, input_signature=input_signature)
    state = {"iterator": None}

    def next_row():
        if state["iterator"] is None:
            state["iterator"] = dataset.create_tuple_iterator(num_epochs=-1)
        try:
            return next(state["iterator"])
        except StopIteration:  # the epoch ended: the next one begins
            pass
        try:
            return next(state["iterator"])
        except StopIteration:
            raise RuntimeError("For 'data_sink', the dataset yields no rows.") from None

    def sink_process():
        out = None
        for _ in range(sink_size):
            out = step(*next_row())
        return out

    return sink_process
