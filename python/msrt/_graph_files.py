"""Compiled graphs on disk: the persistent compile cache
(enable_compile_cache / compile_cache_path) and `ms.export` / `ms.load`.

Both store the optimised graph in msrt's graph file format (Note [Graph file
format] in src/ir/serialize.cc) with a pickled record of what Python needs to
call it: the structure of the results and the graph's key.

Compile cache: the n-th graph a process compiles is kept in
`<path>/rank_<r>/graph_cache/compile_cache_<n>.msgraph`, and
`compile_dependency.hash` holds, per entry, a SHA-256 over the source files of
the network's classes (or the function's file), msrt's version and the
compile-affecting context keys. A later process with the same sources, keys
and call loads the graph instead of capturing and optimising it; anything
else (changed sources or keys, another call, a corrupt or truncated file)
gives a warning and a full compile that rewrites the entry.
"""
import hashlib
import inspect
import os
import pickle
import warnings

from . import _C, _structure
from . import context as _context
from ._tensor import Tensor
from ._warnings import MsrtWarning

for _key in ("enable_compile_cache", "compile_cache_path"):
    _context._declare_consumer(_key, "graph compile cache")

_FILE_SUFFIX = ".msgraph"
_DEPENDENCY_FILE = "compile_dependency.hash"


class _Slot:
    """Stands for a graph result in a pickled result structure."""

    def __reduce__(self):
        return (_Slot, ())


def template_to_bytes(template, **extra):
    """Pickles the result structure (tensors become slots) with `extra`."""
    return pickle.dumps(dict(extra, template=_structure.map_leaves(template, lambda _: _Slot())), protocol=4)


def rebuild(template, outs):
    return _structure.rebuild(template, iter(outs), lambda v: isinstance(v, _Slot))


# --- the compile cache ------------------------------------------------------------------------------
def _source_files(body, owner):
    files = set()
    objects = [type(c) for _, c in owner.cells_and_names()] if owner is not None else []
    objects.append(getattr(body, "__wrapped_jit__", body))
    for obj in objects:
        try:
            path = inspect.getsourcefile(obj)
        except TypeError:
            path = None
        if path and os.path.isfile(path):
            files.add(os.path.abspath(path))
    return sorted(files)


def dependency_hash(body, owner):
    from . import __version__

    digest = hashlib.sha256()
    digest.update(f"msrt {__version__}\n{_C.compile_key_hash()}\n".encode())
    for path in _source_files(body, owner):
        digest.update(path.encode() + b"\n")
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


class CompileCache:
    """The cache directory of this process (one per rank)."""

    _counter = 0  # graphs compiled through the cache in this process

    def __init__(self):
        base = _context.get_context("compile_cache_path") or os.getcwd()
        self.dir = os.path.join(os.path.abspath(base), f"rank_{_C.rank_id()}", "graph_cache")

    @staticmethod
    def active():
        return CompileCache() if _context.get_context("enable_compile_cache") else None

    def next_index(self):
        CompileCache._counter += 1
        return CompileCache._counter - 1

    def _hashes(self):
        hashes = {}
        try:
            with open(os.path.join(self.dir, _DEPENDENCY_FILE), encoding="utf-8") as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2 and parts[0].isdigit():
                        hashes[int(parts[0])] = parts[1]
        except OSError:
            pass
        return hashes

    def path(self, index):
        return os.path.join(self.dir, f"compile_cache_{index}{_FILE_SUFFIX}")

    def load(self, index, key, dependency):
        """(compiled, record) for entry `index`, or None (with a warning when
        an entry exists but can not be used)."""
        path = self.path(index)
        if not os.path.exists(path):
            return None
        recorded = self._hashes().get(index)
        if recorded != dependency:
            warnings.warn(f"Compile cache entry {path} is out of date (the network's source files, msrt or the "
                          f"compile-affecting context keys changed): compiling again.", MsrtWarning, stacklevel=5)
            return None
        try:
            with open(path, "rb") as f:
                data = f.read()
            compiled, meta = _C.load_graph(data, path)
            record = pickle.loads(meta)
        except Exception as e:  # a corrupt or truncated entry must never stop the program
            warnings.warn(f"Compile cache entry {path} can not be read ({e}): compiling again.", MsrtWarning,
                          stacklevel=5)
            return None
        if record.get("key") != key:
            warnings.warn(f"Compile cache entry {path} was compiled for another call ({record.get('key')}), not "
                          f"{key}: compiling again.", MsrtWarning, stacklevel=5)
            return None
        return compiled, record

    def store(self, index, key, dependency, entry):
        """Writes the entry; False (with a warning) when it can not be cached."""
        if entry.host:
            warnings.warn(f"'{entry.name}' runs Python code on every step (host values such as a host-computed "
                          f"learning rate), which a cached graph can not replay: it is not cached.", MsrtWarning,
                          stacklevel=5)
            return False
        os.makedirs(self.dir, exist_ok=True)
        data = entry.compiled.serialize(False, template_to_bytes(entry.template, key=key))
        path = self.path(index)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        hashes = self._hashes()
        hashes[index] = dependency
        with open(os.path.join(self.dir, _DEPENDENCY_FILE), "w", encoding="utf-8") as f:
            for i in sorted(hashes):
                f.write(f"{i} {hashes[i]}\n")
        return True


# --- ms.export / ms.load --------------------------------------------------------------------------
_EXPORT_FORMAT = "msrt-graph-1"


def export(net, *inputs, file_name, file_format="MINDIR", **kwargs):
    """Compiles `net` (a Cell or function) for `inputs` and saves the graph with
    its weights to `file_name` (".mindir" is appended when missing). The file
    is msrt's graph format, read back by `ms.load`; MindSpore's protobuf
    MindIR, AIR and ONNX are not written."""
    from . import _jit
    from .nn.cell import Cell

    if file_format != "MINDIR":
        raise ValueError(f"For 'export', msrt writes only file_format='MINDIR', but got {file_format!r}.")
    if not isinstance(file_name, str) or not file_name:
        raise TypeError(f"For 'export', the 'file_name' must be a non-empty str, but got {file_name!r}.")
    if not inputs or not all(isinstance(t, Tensor) for t in inputs):
        raise TypeError("For 'export', the network's inputs must be given as Tensors.")
    if isinstance(net, Cell):
        net.scope  # assigns the scopes the graph's nodes are named after
        body, owner, name = net._run_top, net, net.cls_name
    elif callable(net):
        body, owner, name = net, None, getattr(net, "__name__", "function")
    else:
        raise TypeError(f"For 'export', the 'net' must be a Cell or a function, but got {type(net).__name__}.")
    entry = _jit._compile(body, inputs, {}, name, owner, fallback=False)
    if entry.host:
        raise RuntimeError(f"'{name}' runs Python code on every call (host values), which an exported graph can "
                           f"not replay.")
    path = file_name if file_name.endswith(".mindir") else file_name + ".mindir"
    meta = template_to_bytes(entry.template, format=_EXPORT_FORMAT,
                             inputs=[(tuple(t.shape), t._t.dtype_name) for t in inputs])
    data = entry.compiled.serialize(True, meta)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


class Graph:
    """A graph loaded by `ms.load`; run it through `nn.GraphCell`."""

    def __init__(self, compiled, record, file_name):
        self._compiled = compiled
        self._template = record["template"]
        self.inputs = record["inputs"]
        self.file_name = file_name

    def __call__(self, *inputs):
        if len(inputs) != len(self.inputs) or not all(isinstance(t, Tensor) for t in inputs):
            raise TypeError(f"The graph loaded from {self.file_name} takes {len(self.inputs)} Tensors "
                            f"{self.inputs}, but got {[type(t).__name__ for t in inputs]}.")
        from ._tensor import _wrap

        args = [t._t for t in inputs]
        # While a graph is captured (a GraphCell inside a jit function or a GRAPH_MODE Cell) the loaded
        # program is inlined into it; while a gradient tape records, it runs op by op, so that gradients
        # flow through it. Otherwise it runs as the compiled graph.
        if any(t.symbolic for t in args) or _C._is_recording():
            outs = self._compiled.inline(args)
        else:
            outs = self._compiled.run(args)
        return rebuild(self._template, [_wrap(o) for o in outs])

    def ir(self):
        """The loaded graph as IR text."""
        return self._compiled.ir()


def load(file_name, **kwargs):
    """Reads a graph written by `ms.export`. Returns a Graph for `nn.GraphCell`."""
    if not isinstance(file_name, str):
        raise TypeError(f"For 'load', the 'file_name' must be a str, but got {type(file_name).__name__}.")
    if not os.path.isfile(file_name):
        raise ValueError(f"For 'load', the file {file_name!r} does not exist.")
    with open(file_name, "rb") as f:
        data = f.read()
    compiled, meta = _C.load_graph(data, file_name)
    try:
        record = pickle.loads(meta)
    except Exception as e:
        raise ValueError(f"'{file_name}' is not a valid msrt graph file: its record can not be read ({e}).") from None
    if not isinstance(record, dict) or record.get("format") != _EXPORT_FORMAT:
        raise ValueError(f"'{file_name}' is not a graph written by ms.export (it may be a compile cache entry).")
    return Graph(compiled, record, file_name)
