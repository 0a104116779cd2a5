"""What the summary ops (ops.ScalarSummary, ImageSummary, TensorSummary,
HistogramSummary) hand to the next `SummaryRecord.record` in train mode: the
last value of each (plugin, tag), as MindSpore keeps one per name. Eagerly an op
stores its value when called; in a compiled graph the value is an extra output
of the graph, stored after each run (msrt/_jit.py)."""
import threading

_lock = threading.Lock()
_values = {}  # (plugin, tag) -> Tensor

# the op that writes each plugin
PLUGINS = {"ScalarSummary": "scalar", "ImageSummary": "image", "TensorSummary": "tensor",
           "HistogramSummary": "histogram"}


def store(op_name, tag, tensor):
    with _lock:
        key = (PLUGINS[op_name], tag)
        _values.pop(key, None)  # keep the order of the latest calls
        _values[key] = tensor


def take():
    """[(plugin, tag, Tensor)] stored since the last take, oldest first; empties the store."""
    global _values
    with _lock:
        values, _values = _values, {}
    return [(plugin, tag, tensor) for (plugin, tag), tensor in values.items()]
