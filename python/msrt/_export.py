"""`ms.export`: a Cell or function compiled for given inputs and saved with its
weights in msrt's graph file format (read back by `ms.load` in
msrt/_graph_files.py). It sits above _jit and nn.cell in the import graph."""
import os

from . import _files, _jit
from ._graph_files import template_to_bytes
from ._tensor import Tensor
from .nn.cell import Cell

__all__ = ["export"]


def export(net, *inputs, file_name, file_format="MINDIR", **kwargs):
    """Compiles `net` (a Cell or function) for `inputs` and saves the graph with
    its weights to `file_name` (".mindir" is appended when missing). The file
    is msrt's graph format, read back by `ms.load`; MindSpore's protobuf
    MindIR, AIR and ONNX are not written."""
    if file_format != "MINDIR":
        raise ValueError(f"For 'export', msrt writes only file_format='MINDIR', but got {file_format!r}.")
    if not isinstance(file_name, str) or not file_name:
        raise TypeError(f"For 'export', the 'file_name' must be a non-empty str, but got {file_name!r}.")
    _files.fspath(file_name, "export", "file_name")
    if not inputs or not all(isinstance(t, Tensor) for t in inputs):
        raise TypeError("For 'export', the network's inputs must be given as Tensors.")
    if isinstance(net, Cell):
        net.scope  # assigns the scopes the graph's nodes are named after
        body, owner, name = net._run_top, net, net.cls_name
    elif callable(net):
        body, owner, name = net, None, getattr(net, "__name__", "function")
    else:
        raise TypeError(f"For 'export', the 'net' must be a Cell or a function, but got {type(net).__name__}.")
    entry = _jit.compile_for_export(body, inputs, name, owner)
    if entry.host:
        raise RuntimeError(f"'{name}' runs Python code on every call (host values), which an exported graph can "
                           f"not replay.")
    path = file_name if file_name.endswith(".mindir") else file_name + ".mindir"
    try:
        meta = template_to_bytes(entry.template, "export", inputs=[[list(t.shape), t._t.dtype_name] for t in inputs])
    except TypeError as e:
        raise TypeError(f"For 'export', '{name}' can not be exported: {e}.") from None
    data = entry.compiled.serialize(True, meta)
    _files.make_dirs(os.path.dirname(os.path.abspath(path)))
    _files.write_atomic(path, data)
    return path
