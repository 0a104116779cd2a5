"""Tape nodes whose gradient Python computes: a Cell's custom `bprop`
(msrt/_grad.py) and a compiled call's backward graph (Note [Gradients of
compiled calls] in msrt/_jit.py). Both record through `record_custom`; this
module sits below both in the import graph.
(Note [Custom gradients from Python] in python/src/bind_tensor.cc.)"""
import itertools
import threading

from . import _C


class _State(threading.local):
    def __init__(self):
        self.custom_ids = None  # custom nodes recorded by the gradient recording in progress


_state = _State()
_custom_nodes = {}  # id → what the gradient handler needs
_ids = itertools.count(1)


def record_custom(inputs, outputs, node):
    """Records on this thread's tape one node with `inputs` and `outputs`
    (core tensors) whose gradient is `node.backward(dys)`: dys holds one core
    tensor (or None) per output, the result one (or None) per input. False
    when nothing is recorded (no tape, or no input tracked)."""
    key = next(_ids)
    _custom_nodes[key] = node
    if not _C._record_custom(inputs, outputs, key):
        del _custom_nodes[key]
        return False
    if _state.custom_ids is not None:
        _state.custom_ids.append(key)
    return True


def forget(keys):
    """Drops the nodes of a finished gradient computation."""
    for key in keys:
        _custom_nodes.pop(key, None)


def _custom_gradient(key, dys):
    """Called by the tape for a custom node: runs its backward."""
    node = _custom_nodes.get(key)
    if node is None:
        raise RuntimeError("A custom gradient node outlived the gradient computation that recorded it.")
    return node.backward(dys)


if hasattr(_C, "_set_custom_grad_handler"):  # absent from native modules built before custom bprop support
    _C._set_custom_grad_handler(_custom_gradient)
