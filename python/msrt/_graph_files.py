"""Compiled graphs on disk: the records of the persistent compile cache
(enable_compile_cache / compile_cache_path) and `ms.load` (`ms.export` is in
msrt/_export.py).

Both store the optimised graph in msrt's graph file format (Note [Graph file
format] in src/ir/serialize.cc: CRC-32C checked, JSON parsed with a nesting
limit) with a JSON record of what Python needs to call it: the structure of
the results and the graph's key. Nothing read from these files can run code
(no pickle); files are written atomically (Note [Safe file writes]).

The record (schema "msrt-graph-record", version 1):
  {"schema", "version", "kind": "export" | "compile_cache",
   "key": str (compile cache), "dependency": str (compile cache),
   "inputs": [[shape, dtype name], ...] (export),
   "template": the result structure, each value tagged:
       {"t": "slot"} a result tensor, {"t": "none"}, {"t": "bool", "v": b},
       {"t": "int", "v": "decimal"}, {"t": "float", "v": "repr"},
       {"t": "str", "v": s}, {"t": "tuple" | "list", "items": [...]},
       {"t": "dict", "items": [[key, value], ...]}}

Compile cache (kept by C++: CompileCache in src/compiler/compiled_function.h,
which calls `source_files`, `template_json` and `template_from_json` through
msrt/_jit.py): the n-th graph a process compiles is kept in
`<path>/rank_<r>/graph_cache/compile_cache_<n>.msgraph`, and
`compile_dependency.hash` lists, per entry, a SHA-256 over the source files of
the network's classes (or the function's file), msrt's version and the
compile-affecting context keys; the entry's own record holds the same hash.
A later process with the same sources, keys and call loads the graph instead
of capturing and optimising it; anything else (changed sources or keys,
another call, a corrupt, truncated or unreadable file) gives a warning and a
full compile that rewrites the entry, and a cache folder that can not be
written gives a warning: training goes on uncached.
"""
import inspect
import json
import math
import os

from . import _C, _files, _structure
from . import context as _context
from ._tensor import Tensor, _wrap

for _key in ("enable_compile_cache", "compile_cache_path"):
    _context._declare_consumer(_key, "graph compile cache")

_SCHEMA = "msrt-graph-record"
_RECORD_VERSION = 1


class _Slot:
    """Stands for a graph result in a result structure."""


class RecordError(ValueError):
    """A graph file's record is not one this msrt reads."""


def _encode(value):
    if isinstance(value, (_Slot, Tensor)):
        return {"t": "slot"}
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": str(int(value))}
    if isinstance(value, float):
        return {"t": "float", "v": repr(float(value))}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    if isinstance(value, (tuple, list)):
        return {"t": type(value).__name__, "items": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"t": "dict", "items": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise TypeError(f"a result of type {type(value).__name__} can not be saved in a graph file (results may be "
                    f"Tensors, None, bool, int, float, str and tuples, lists and dicts of them)")


_FLOAT_WORDS = {"nan", "inf", "-inf"}


def _decode(node):
    if not isinstance(node, dict) or not isinstance(node.get("t"), str):
        raise RecordError(f"a template value must be an object with a tag 't', but got {str(node)[:80]}")
    tag = node["t"]
    if tag == "slot":
        return _Slot()
    if tag == "none":
        return None
    value = node.get("v")
    if tag == "bool" and isinstance(value, bool):
        return value
    if tag == "int" and isinstance(value, str) and len(value) <= 4300:
        try:
            return int(value, 10)
        except ValueError:
            pass
    if tag == "float" and isinstance(value, str):
        try:
            number = float(value)
            if math.isfinite(number) or value in _FLOAT_WORDS:
                return number
        except ValueError:
            pass
    if tag == "str" and isinstance(value, str):
        return value
    items = node.get("items")
    if tag in ("tuple", "list") and isinstance(items, list):
        out = [_decode(v) for v in items]
        return tuple(out) if tag == "tuple" else out
    if tag == "dict" and isinstance(items, list):
        out = {}
        for pair in items:
            if not isinstance(pair, list) or len(pair) != 2:
                raise RecordError("a dict item of the template must be a [key, value] pair")
            key = _decode(pair[0])
            try:
                out[key] = _decode(pair[1])
            except TypeError:
                raise RecordError("a dict key of the template is not hashable") from None
        return out
    raise RecordError(f"the template value {str(node)[:80]} is not valid")


def template_to_bytes(template, kind, **extra):
    """The JSON record: the result structure (tensors become slots) and `extra`."""
    record = dict(extra, schema=_SCHEMA, version=_RECORD_VERSION, kind=kind,
                  template=_encode(_structure.map_leaves(template, lambda _: _Slot())))
    return json.dumps(record, allow_nan=False).encode("utf-8")


def record_from_bytes(meta, kind, file_name):
    """The record of a graph file, checked; RecordError naming `file_name`."""
    def bad(why):
        return RecordError(f"'{file_name}' is not a valid msrt graph file: its record {why}.")

    _C._check_graph_record(meta, kind, file_name)  # schema, depth and every value checked in C++ (fuzzed)
    try:
        record = json.loads(meta.decode("utf-8"))
    except RecursionError:
        raise bad("nests too deeply") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise bad(f"is not JSON ({e})") from None
    if not isinstance(record, dict) or record.get("schema") != _SCHEMA:
        raise bad(f"has no '{_SCHEMA}' schema")
    if record.get("version") != _RECORD_VERSION:
        raise bad(f"has version {record.get('version')!r}; this msrt reads version {_RECORD_VERSION}")
    if record.get("kind") != kind:
        raise bad(f"is of kind {record.get('kind')!r}, not {kind!r}" +
                  (" (it may be a compile cache entry)" if kind == "export" else ""))
    try:
        record["template"] = _decode(record.get("template"))
    except RecursionError:
        raise bad("nests too deeply") from None
    except RecordError as e:
        raise bad(f"is invalid: {e}") from None
    return record


def rebuild(template, outs):
    return _structure.rebuild(template, iter(outs), lambda v: isinstance(v, _Slot))


# --- the compile cache (kept by src/compiler/compiled_function.cc) ------------------------------------
def source_files(body, owner):
    """The source files a compiled graph of `body` depends on: those of the
    owner's Cell classes and of the function, for the compile cache's
    dependency hash (Note [Compiled function keys])."""
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


def template_json(template):
    """The tagged JSON of a result structure (its tensors become slots), for a
    compile cache record; TypeError for a value a record can not hold."""
    return json.dumps(_encode(_structure.map_leaves(template, lambda _: _Slot())), allow_nan=False)


def template_from_json(text):
    """The result structure of a record's template (checked by C++ already)."""
    return _decode(json.loads(text))


# --- ms.export / ms.load --------------------------------------------------------------------------
class Graph:
    """A graph loaded by `ms.load`; run it through `nn.GraphCell`."""

    def __init__(self, compiled, record, file_name):
        self._compiled = compiled
        self._template = record["template"]
        self.inputs = [(tuple(shape), dtype) for shape, dtype in record["inputs"]]
        self.file_name = file_name

    def __call__(self, *inputs):
        if len(inputs) != len(self.inputs) or not all(isinstance(t, Tensor) for t in inputs):
            raise TypeError(f"The graph loaded from {self.file_name} takes {len(self.inputs)} Tensors "
                            f"{self.inputs}, but got {[type(t).__name__ for t in inputs]}.")
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
    _files.fspath(file_name, "load", "file_name")
    if not os.path.isfile(file_name):
        raise ValueError(f"For 'load', the file {file_name!r} does not exist.")
    data = _files.read(file_name)
    compiled, meta = _C.load_graph(data, file_name)  # checksum and structure checked in C++
    record = record_from_bytes(meta, "export", file_name)
    inputs = record.get("inputs")
    if not isinstance(inputs, list) or not all(
            isinstance(i, list) and len(i) == 2 and isinstance(i[0], list) and isinstance(i[1], str)
            and all(isinstance(d, int) and not isinstance(d, bool) for d in i[0]) for i in inputs):
        raise RecordError(f"'{file_name}' is not a valid msrt graph file: its record's 'inputs' are invalid.")
    return Graph(compiled, record, file_name)
