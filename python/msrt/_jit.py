"""Graph mode: Cells called in GRAPH_MODE and functions wrapped by `ms.jit`
are captured into a graph, optimised and run by the C++ graph executor.

A compile traces the Python body once with symbolic tensors (Note [Graph
capture] in src/compiler/capture.h). The front door is C++: each callable has
a _C.CompiledFunction that keys its calls (argument signature, training flag,
hash of every compile-affecting context key: Note [Compiled function keys] in
src/compiler/compiled_function.h), keeps the compiled graphs, reads and writes
the compile cache and decides the eager fallback; it calls back here to trace
the body on a miss and to run an entry. Python values among the arguments are
constants of the graph (another value compiles another graph).

Host values (`host_value`, `host_call`) let Python-side state that changes
per step — a learning-rate schedule computed on the host, a step counter —
run on every execution of the graph rather than once at capture. The values
of summary ops (ops.ScalarSummary...) are extra outputs of the graph, handed
to the summary store after every run (`summary`).

Note [Gradients of compiled calls]
A compiled call made while a gradient tape records (`ms.grad` of a jit
function or of a GRAPH_MODE Cell, or a compiled call inside an eager
function being differentiated) runs the forward graph, then records one
node on the tape whose inputs are the tracked tensor arguments and weights.
Its gradient runs a second compiled graph, captured once per set of tracked
inputs: the body's forward and the ops' gradient rules on symbolic tensors,
from (arguments, one sens per float output) to the gradients. The backward
graph recomputes the forward rather than keeping its intermediates; the
recompute leaves out what the forward already did (prints, writes to
state such as BatchNorm's running statistics: Capture::set_replay). A call
in which nothing is tracked runs the forward graph alone.

Note [Dynamic shapes] (the C++ side is in src/compiler/dynamic_shape.h)
`Cell.set_inputs` and `jit(input_signature=...)` may declare Tensors with
None dimensions. Such a call is keyed by the declared shape, so every size
runs one graph: the body is captured twice, its dynamic dimensions at each
of the probe sizes (_C.DYNAMIC_PROBE_SIZES), and the two graphs must agree
but for the dimensions that follow the sizes, which become -1. During the
second capture a dimension that Python reads (`x.shape`, `len(x)`, `x.size`)
and that differs from the first capture's read is a _DynamicDim: any use of
its value (arithmetic, comparison, int(), str()) shows that the Python code
depends on the size. Where the graphs differ or a size is used, the body is
compiled once per shape instead (correct for every size, with a warning
saying why); the callable then keys by concrete shapes for good
(`_graph_cache.per_shape` holds the reason). The executor infers the shapes
of each new input shape again and plans its memory for it.

Tensor-dependent Python control flow (`if x.sum() > 0:`) cannot be traced:
with jit_syntax_level=STRICT it is an error naming the line; with LAX or
COMPATIBLE the callable runs eagerly instead, with a warning saying why
(Note [Capture fallback]).
"""
import contextlib
import functools
import os
import threading
import traceback
import warnings

from . import _C
from . import _custom_grad, _graph_files, _structure, _summary_data
from . import context as _context
from ._tensor import _FLOAT_NAMES, Tensor, _shape_watch, _wrap
from .common.jit_config import JitConfig
from ._warnings import MsrtWarning

__all__ = ["jit", "ms_function", "host_value", "host_call", "capturing", "compile_report", "mutable", "jit_class"]

_GraphCaptureError = _C.GraphCaptureError
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
for _key, _user in (("jit_syntax_level", "graph capture (tensor-dependent control flow)"),
                    ("max_call_depth", "graph capture (nested calls)"),
                    ("precompile_only", "graph calls"),
                    ("debug_level", "graph capture (source locations)"),
                    ("mode", "nn.Cell calls (graph or eager)")):
    _context._declare_consumer(_key, _user)


class _State(threading.local):
    capture = None  # the _C.GraphCapture recording on this thread
    host = None     # host steps registered by the capture: [(kind, fn)]
    summaries = None  # summary ops met by the capture: [(op name, tag, symbolic tensor)]; None: dropped


_state = _State()


def capturing():
    """Whether a graph is being captured on this thread."""
    return _state.capture is not None


def host_value(fn, shape, dtype):
    """`fn()` — a Tensor computed on the host. Inside a graph capture, `fn`
    runs before every execution of the graph instead, and its result (of
    `shape` and `dtype`) enters the graph as an input."""
    cap = _state.capture
    if cap is None:
        return fn()
    base = cap.input(list(shape), dtype, f"host_value_{len(_state.host)}")
    _state.host.append(("value", fn))
    return _wrap(base)


def host_call(fn):
    """`fn()` now; inside a graph capture, before every execution of the graph
    (in order with `host_value`s)."""
    if _state.capture is None:
        fn()
    else:
        _state.host.append(("call", fn))


def summary(op_name, tag, value):
    """A summary op's value for the next SummaryRecord.record (msrt/_summary_data.py):
    stored now when eager; inside a graph capture, an extra output of the graph,
    stored after every run. A capture that replays the forward (a gradient graph)
    or exports it drops the value."""
    if _state.capture is None:
        # a copy, detached: a Parameter updated later must not change what is recorded
        _summary_data.store(op_name, tag, _wrap(_C.call("identity", [value._t._reshaped(value._t.shape)])[0]))
    elif _state.summaries is not None:
        _state.summaries.append((op_name, tag, value._t))


def _store_summaries(entry, outs):
    """The graph's own outputs of `outs`; the summary values after them are stored."""
    if not entry.summaries:
        return outs
    count = len(outs) - len(entry.summaries)
    for (op_name, tag), value in zip(entry.summaries, outs[count:]):
        _summary_data.store(op_name, tag, _wrap(value))
    return outs[:count]


# --- structures of arguments and results ------------------------------------------
def _is_result_slot(value):
    return isinstance(value, (Tensor, _graph_files._Slot))


def _rebuild(template, tensors):
    return _structure.rebuild(template, tensors, _is_result_slot)


def _symbolic(value, cap, names, path):
    """`value` with every Tensor replaced by a new graph input."""
    if isinstance(value, Tensor):
        names.append(path)
        return _wrap(cap.input(list(value._t.shape), value._t.dtype_name, path))
    if isinstance(value, tuple):
        return tuple(_symbolic(v, cap, names, f"{path}.{i}") for i, v in enumerate(value))
    if isinstance(value, list):
        return [_symbolic(v, cap, names, f"{path}.{i}") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _symbolic(v, cap, names, f"{path}.{k}") for k, v in value.items()}
    return value


def _is_msrt_frame(filename):
    # msrt's own files, and the code of the op forms it generates ("<msrt op form ...>")
    return filename.startswith("<msrt ") or os.path.abspath(filename).startswith(_PACKAGE_DIR)


def _user_frame_of(frames, innermost_otherwise=True):
    """(file, line, code) of the innermost of `frames` outside msrt (else the
    innermost, or unknown when not `innermost_otherwise`)."""
    found = None
    for frame in frames:
        if not _is_msrt_frame(frame.filename):
            found = frame
    if found is None and frames and innermost_otherwise:
        found = frames[-1]
    if found is None:
        return "<unknown>", 0, ""
    return found.filename, found.lineno, (found.line or "").strip()


def _user_frame(tb):
    """(file, line, code) of the innermost traceback frame outside msrt."""
    return _user_frame_of(traceback.extract_tb(tb), innermost_otherwise=False)


# --- compiled entries -------------------------------------------------------------------
class _Entry:
    __slots__ = ("compiled", "template", "weights", "host", "name", "body", "owner", "arguments",
                 "backwards", "summaries")

    def __init__(self, compiled, template, weights, host, name, body=None, owner=None, arguments=None,
                 summaries=()):
        self.compiled = compiled
        self.summaries = list(summaries)  # (op name, tag) of the graph's extra outputs, after its own
        self.template = template
        self.weights = weights
        self.host = host
        self.name = name
        self.body = body  # what was captured (None for a loaded graph: no gradient)
        self.owner = owner
        self.arguments = arguments  # (args, kwargs) with _ArgumentSlot for each tensor
        self.backwards = {}  # which inputs and weights are differentiated → _Backward

    def host_inputs(self):
        """Runs the host steps; returns the host values, in order."""
        values = []
        for kind, fn in self.host:
            if kind == "value":
                values.append(fn()._t)
            else:
                fn()
        return values

    def bound_weights(self):
        return [p._t if p is not None else None for p in self.weights] if self.weights else []

    def live_weights(self):
        """The tensors the weights are bound to in a run."""
        captured = self.compiled.captured_weights()
        bound = self.bound_weights()
        return [b if b is not None else c for b, c in zip(bound, captured)] if bound else captured

    def run(self, args, kwargs):
        inputs = [t._t for t in _structure.flatten((args, kwargs))]
        if _C._is_recording():
            differentiated = self._run_recorded(inputs)
            if differentiated is not None:
                return _rebuild(self.template, iter([_wrap(o) for o in differentiated]))
        inputs += self.host_inputs()
        outs = _store_summaries(self, self.compiled.run(inputs, self.bound_weights()))
        return _rebuild(self.template, iter([_wrap(o) for o in outs]))

    def _run_recorded(self, inputs):
        """Runs the graph for a caller whose gradient is being recorded (Note
        [Gradients of compiled calls]). None when nothing it reads is tracked."""
        weights = self.live_weights()
        input_mask = tuple(_C._is_tracked(t) for t in inputs)
        weight_mask = tuple(_C._is_tracked(w) for w in weights)
        if not (any(input_mask) or any(weight_mask)):
            return None
        if self.body is None:
            raise RuntimeError(f"'{self.name}' is a loaded graph, which holds no gradient: call it outside the "
                               f"function whose gradient is taken, or inline it by calling it inside a compiled "
                               f"network.")
        host = self.host_inputs()
        outs = _store_summaries(self, self.compiled.run(inputs + host, self.bound_weights()))
        fresh = [o._reshaped(o.shape) for o in outs]  # own identities on the tape
        tracked = [t for t, m in zip(inputs, input_mask) if m] + [w for w, m in zip(weights, weight_mask) if m]
        node = _BackwardCall(self, (input_mask, weight_mask), inputs, host, outs)
        _custom_grad.record_custom(tracked, fresh, node)
        return fresh


class _BackwardCall:
    """The tape node of one differentiated call of a compiled entry."""

    __slots__ = ("entry", "masks", "inputs", "host", "outs")

    def __init__(self, entry, masks, inputs, host, outs):
        self.entry, self.masks, self.inputs, self.host, self.outs = entry, masks, inputs, host, outs

    def backward(self, dys):
        entry = self.entry
        if _C._is_recording():  # a gradient being differentiated again: the graph's kernels are not recorded
            raise RuntimeError(f"Higher-order gradients (grad of grad) through the compiled call '{entry.name}' are "
                               f"not supported: call the function eagerly (PYNATIVE_MODE, without ms.jit) inside "
                               f"the gradient that is differentiated again.")
        # A graph compiled for dynamic shapes has one backward graph per input shapes.
        key = (self.masks, tuple(tuple(t.shape) for t in self.inputs)) if entry.compiled.dynamic else self.masks
        graph = entry.backwards.get(key)
        if graph is None:
            graph = entry.backwards[key] = _compile_backward(entry, self.masks, self.inputs, self.outs)
        sens = [d if d is not None else _C.call("zeros_like", [o])[0]
                for d, o in zip(dys, self.outs) if _is_float(o)]
        return graph.run(self.inputs + sens + self.host, _bind_live(graph, entry))


def _is_float(t):
    return t.dtype_name in _FLOAT_NAMES


def _bind_live(compiled, entry):
    """Weights of a backward graph bound as the forward entry binds them."""
    bound = _bind_weights(compiled, entry.owner)
    return [p._t if p is not None else None for p in bound] if bound else []


def _compile_backward(entry, masks, inputs, outs):
    """Captures the gradient of `entry`'s body: a graph of (inputs, one sens per
    float output, host values) → (gradients of the tracked inputs, then of the
    tracked weights)."""
    input_mask, weight_mask = masks
    tracked_weights = [w for w, m in zip(entry.live_weights(), weight_mask) if m]
    cap = _C.GraphCapture(f"{entry.name}_grad", _context.get_context("max_call_depth"))
    cap.set_replay(True)  # the forward's prints and state updates happened when it ran
    sym_inputs = [cap.input(list(t.shape), t.dtype_name, f"arg.{i}") for i, t in enumerate(inputs)]
    sym_sens = [cap.input(list(o.shape), o.dtype_name, f"sens.{i}") for i, o in enumerate(outs) if _is_float(o)]
    leaves = [s for s, m in zip(sym_inputs, input_mask) if m]
    flags = [(w, w.requires_grad) for w in tracked_weights]
    outer = (_state.capture, _state.host, _state.summaries)
    host = []
    _state.capture, _state.host, _state.summaries = cap, host, None
    try:
        with cap:
            tape = _C.GradTape()
            try:
                for leaf in leaves:
                    leaf.requires_grad = True
                for w, _ in flags:
                    w.requires_grad = True
                wrapped = iter([_wrap(t) for t in sym_inputs])
                args, kwargs = _rebuild_inputs(entry, wrapped)
                out = entry.body(*args, **kwargs)
                flat = [t._t for t in _structure.flatten(out)]
                grads = tape.gradient([o for o in flat if _is_float(o)], sym_sens, leaves + tracked_weights)
            finally:
                tape.end()
                for w, flag in flags:
                    w.requires_grad = flag
    finally:
        _state.capture, _state.host, _state.summaries = outer
    if len(host) != len(entry.host):
        raise RuntimeError(f"The gradient of '{entry.name}' registered {len(host)} host steps, but its forward "
                           f"registered {len(entry.host)}: the function must capture the same way each time.")
    # The forward's host values enter as graph inputs after the sens, in order.
    return cap.compile(grads)


class _ArgumentSlot:
    """Stands for a tensor argument in the argument structure an entry keeps."""


def _argument_template(args, kwargs):
    return _structure.map_leaves((args, kwargs), lambda _: _ArgumentSlot())


def _rebuild_inputs(entry, tensors):
    """(args, kwargs) with the forward's argument structure and `tensors` in its tensor slots."""
    return _structure.rebuild(entry.arguments, tensors, lambda v: isinstance(v, _ArgumentSlot))


def _param_table(owner):
    """Parameters by name, for rebinding weights whose data object was replaced."""
    if owner is None:
        return {}
    table = {}
    for _, p in owner.parameters_and_names():
        if p.name in table and table[p.name] is not p:
            table[p.name] = None  # ambiguous: keep what was captured
        else:
            table[p.name] = p
    return table


def _trace(body, args, kwargs, name, owner, dynamic=None, keep_summaries=True):
    """Captures `body(*args, **kwargs)` and compiles it: an _Entry, or (where,
    error) when the body needs a tensor's value (C++ decides what follows:
    Note [Capture fallback] in src/compiler/compiled_function.h). The values of
    summary ops become extra outputs of the graph, unless not `keep_summaries`.
    `dynamic`: the declared shapes of Tensors with dynamic dimensions, per
    positional argument (Note [Dynamic shapes])."""
    if dynamic is not None:
        return _trace_dynamic(body, args, kwargs, name, owner, dynamic)
    get = _context.get_context
    whole_stack = get("debug_level") == 1 or get("save_graphs") >= 3
    cap = _C.GraphCapture(name, get("max_call_depth"), whole_stack)
    names = []
    sym_args, sym_kwargs = _symbolic((args, kwargs), cap, names, "arg")
    outer = (_state.capture, _state.host, _state.summaries)
    host, summaries = [], ([] if keep_summaries else None)
    _state.capture, _state.host, _state.summaries = cap, host, summaries
    # A tape recording the caller's gradient keeps none of the symbolic ops.
    shadow = _C.GradTape() if _C._is_recording() else None
    try:
        with cap:
            out = body(*sym_args, **sym_kwargs)
    except _GraphCaptureError as e:
        file, line, code = _user_frame(e.__traceback__)
        return f"{file}:{line}" + (f": '{code}'" if code else ""), str(e)
    finally:
        if shadow is not None:
            shadow.end()
        _state.capture, _state.host, _state.summaries = outer
    flat = _structure.flatten(out)
    compiled = cap.compile([t._t for t in flat] + [value for _, _, value in summaries or ()])
    return _Entry(compiled, out, _bind_weights(compiled, owner), host, name, body, owner,
                  _argument_template(args, kwargs), [(op, tag) for op, tag, _ in summaries or ()])


# --- dynamic shapes (Note [Dynamic shapes]) -----------------------------------------
class NotPolymorphic(Exception):
    """The body of a call with dynamic dimensions depends on their sizes."""


def _not_polymorphic(name, reason):
    warnings.warn(f"'{name}' is compiled once per input shape although its inputs declare dynamic dimensions "
                  f"(None): {reason}.", MsrtWarning, stacklevel=3)
    return NotPolymorphic(reason)


class _ShapeReads:
    """The shapes Python reads of symbolic tensors during one capture. Given
    the first capture's reads, dimensions that differ from them come back as
    _DynamicDim, and their first use is kept in `used`."""

    def __init__(self, first=None):
        self.reads = []
        self.first = first
        self.used = None
        self.mismatch = False

    def __call__(self, shape):
        k = len(self.reads)
        self.reads.append(shape)
        if self.first is None:
            return shape
        if k >= len(self.first) or len(self.first[k]) != len(shape):
            self.mismatch = True
            return shape
        return tuple(_DynamicDim(d, self) if d != f else d for d, f in zip(shape, self.first[k]))

    def use(self):
        if self.used is None:
            file, line, code = _user_frame_of(traceback.extract_stack()[:-2])
            self.used = f"{file}:{line}" + (f" ('{code}')" if code else "")


class _DynamicDim(int):
    """A dimension that follows a dynamic input size, as Python reads it
    during the second capture; using its value is recorded."""

    def __new__(cls, value, reads):
        self = int.__new__(cls, value)
        self._reads = reads
        return self


def _recording(name):
    base = getattr(int, name)

    def method(self, *args):
        self._reads.use()
        return base(self, *args)

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__", "__rfloordiv__",
              "__truediv__", "__rtruediv__", "__mod__", "__rmod__", "__divmod__", "__rdivmod__", "__pow__",
              "__rpow__", "__neg__", "__pos__", "__abs__", "__invert__", "__lshift__", "__rlshift__", "__rshift__",
              "__rrshift__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__index__", "__int__", "__float__",
              "__round__", "__trunc__", "__floor__", "__ceil__", "__repr__", "__str__", "__format__"):
    setattr(_DynamicDim, _name, _recording(_name))


def dynamic_signature(signature):
    """Per item of a declared input signature: the shape (-1 for None) of a
    Tensor with dynamic dimensions, else None; None when there is none."""
    if signature is None:
        return None
    shapes = []
    for want in signature:
        shape = want.__dict__.get("dynamic_shape") if isinstance(want, Tensor) else None
        shapes.append(list(shape) if shape is not None and -1 in shape else None)
    return shapes if any(s is not None for s in shapes) else None


def check_signature(name, signature, args, declared="set_inputs"):
    """Checks positional `args` against a declared input signature (count,
    Tensor-ness, dtype, rank, fixed dimensions)."""
    if len(args) != len(signature):
        raise ValueError(f"For '{name}', it was called with {len(args)} inputs, but '{declared}' "
                         f"declared {len(signature)}.")
    for i, (arg, want) in enumerate(zip(args, signature)):
        if not isinstance(want, Tensor):
            continue
        if not isinstance(arg, Tensor):
            raise TypeError(f"For '{name}', the {i}th input must be a Tensor as '{declared}' declared, "
                            f"but got {type(arg).__name__}.")
        if arg.dtype != want.dtype:
            raise TypeError(f"For '{name}', the dtype of the {i}th input must be {want.dtype} as "
                            f"'{declared}' declared, but got {arg.dtype}.")
        shape = want.__dict__.get("dynamic_shape", want.shape)
        got = arg._t.shape
        if len(got) != len(shape):
            raise ValueError(f"For '{name}', the {i}th input must have {len(shape)} dimensions as "
                             f"'{declared}' declared (shape {list(shape)}), but got shape {list(got)}.")
        for axis, (have, expected) in enumerate(zip(got, shape)):
            if expected != -1 and have != expected:
                raise ValueError(f"For '{name}', dimension {axis} of the {i}th input must be "
                                 f"{expected} as '{declared}' declared (shape {list(shape)}), but got shape "
                                 f"{list(got)}.")


def _capture_at(body, args, kwargs, name, dynamic, size, first_reads):
    """One capture of `body` with its dynamic dimensions at `size`: (capture,
    result, flat result tensors, host steps, shape reads)."""
    get = _context.get_context
    whole_stack = get("debug_level") == 1 or get("save_graphs") >= 3
    cap = _C.GraphCapture(name, get("max_call_depth"), whole_stack)
    names = []
    sym_args = []
    for i, (arg, shape) in enumerate(zip(args, dynamic)):
        path = f"arg.0.{i}"
        if shape is not None and isinstance(arg, Tensor):
            names.append(path)
            sized = [size if d == -1 else d for d in shape]
            sym_args.append(_wrap(cap.input(sized, arg._t.dtype_name, path)))
        else:
            sym_args.append(_symbolic(arg, cap, names, path))
    sym_kwargs = _symbolic(kwargs, cap, names, "arg.1")
    reads = _ShapeReads(first_reads)
    outer = (_state.capture, _state.host, _state.summaries, _shape_watch.watcher)
    host, summaries = [], []
    _state.capture, _state.host, _state.summaries, _shape_watch.watcher = cap, host, summaries, reads
    shadow = _C.GradTape() if _C._is_recording() else None
    try:
        with cap:
            out = body(*sym_args, **sym_kwargs)
    finally:
        if shadow is not None:
            shadow.end()
        _state.capture, _state.host, _state.summaries, _shape_watch.watcher = outer
    flat = _structure.flatten(out)
    return cap, out, flat, host, reads, summaries


def _trace_dynamic(body, args, kwargs, name, owner, dynamic):
    """_trace for a call with dynamic dimensions: one graph for every size, or
    NotPolymorphic (having warned) when the body depends on the sizes."""
    captures = []
    first_reads = None
    for size in _C.DYNAMIC_PROBE_SIZES:
        try:
            captured = _capture_at(body, args, kwargs, name, dynamic, size, first_reads)
        except _GraphCaptureError as e:
            file, line, code = _user_frame(e.__traceback__)
            return f"{file}:{line}" + (f": '{code}'" if code else ""), str(e)
        except Exception as e:  # an error at a probe size: the size matters (or the call fails at any size)
            raise _not_polymorphic(name, f"capturing it with dimension size {size} failed ({type(e).__name__}: "
                                         f"{e})") from None
        first_reads = captured[4].reads
        captures.append(captured)
    (cap_a, out_a, flat_a, host_a, _, sums_a), (cap_b, out_b, flat_b, host_b, reads, sums_b) = captures
    # The results' structure and Python values (comparing a _DynamicDim records its use).
    if _structure.map_leaves(out_a, lambda _: None) != _structure.map_leaves(out_b, lambda _: None) or \
            len(host_a) != len(host_b) or [s[:2] for s in sums_a] != [s[:2] for s in sums_b]:
        reads.use()
    if reads.used is not None:
        raise _not_polymorphic(name, f"the Python code uses the size of a dynamic dimension at {reads.used}")
    if reads.mismatch:
        raise _not_polymorphic(name, "the Python code reads other shapes at another size")
    # As in _trace, the values of summary ops are extra outputs of the graph.
    graph_a = cap_a.finish([t._t for t in flat_a] + [value for _, _, value in sums_a])
    graph_b = cap_b.finish([t._t for t in flat_b] + [value for _, _, value in sums_b])
    try:
        compiled = _C.compile_dynamic(graph_a, graph_b)
    except ValueError as e:
        raise _not_polymorphic(name, str(e).rstrip(".")) from None
    return _Entry(compiled, out_a, _bind_weights(compiled, owner), host_a, name, body, owner,
                  _argument_template(args, kwargs), [(op, tag) for op, tag, _ in sums_a])


def compile_for_export(body, args, name, owner):
    """An _Entry for `body(*args)`; a body that needs a tensor's value is an error."""
    entry = _trace(body, args, {}, name, owner, keep_summaries=False)
    if isinstance(entry, tuple):
        _C.capture_fallback(name, entry[0], entry[1], False)
    return entry


def _bind_weights(compiled, owner):
    """The Parameters to bind per call, by weight name (None: keep the captured tensor)."""
    table = _param_table(owner)
    weights = [table.get(n) for n in compiled.weight_names()] if table else None
    if weights is not None and not any(w is not None for w in weights):
        weights = None
    return weights


class GraphOwner:
    """What compiles with its parameters as the graph's weights: nn.Cell
    derives from it (this module sits below nn.cell in the import graph)."""

    __slots__ = ()


class _FrontEnd:
    """What _C.CompiledFunction calls back into Python for: tracing the body, the
    source files it depends on, and what a compile cache entry needs of Python
    objects (its weights bound to Parameters, its result structure)."""

    tensor_type = Tensor
    owner_type = GraphOwner
    NotPolymorphic = NotPolymorphic
    trace = staticmethod(_trace)
    source_files = staticmethod(_graph_files.source_files)

    @staticmethod
    def adopt(compiled, template_json, file, body, args, kwargs, name, owner):
        """An _Entry for a graph loaded from the compile cache, or None (with a
        warning) when its weights are not this network's."""
        weights = _bind_weights(compiled, owner)
        names = compiled.weight_names()
        if not names or (weights is not None and all(w is not None for w in weights)):
            return _Entry(compiled, _graph_files.template_from_json(template_json), weights, [], name, body, owner,
                          _argument_template(args, kwargs))
        warnings.warn(f"Compile cache entry {file} needs weights this network does not have: compiling again.",
                      MsrtWarning, stacklevel=2)
        return None

    @staticmethod
    def cache_template(entry):
        """(the result template as JSON, None), or (None, why it can not be cached)."""
        unbound = entry.weights is None and entry.compiled.weight_names()
        if unbound or (entry.weights is not None and None in entry.weights):
            return None, (f"'{entry.name}' uses tensors that are not parameters of the network, which a cached "
                          f"graph can not bind: it is not cached.")
        if entry.summaries:
            return None, (f"'{entry.name}' has summary ops, whose values a cached graph does not hand to "
                          f"SummaryRecord: it is not cached.")
        if entry.host:
            return None, (f"'{entry.name}' runs Python code on every step (host values such as a host-computed "
                          f"learning rate), which a cached graph can not replay: it is not cached.")
        try:
            return _graph_files.template_json(entry.template), None
        except TypeError as e:
            return None, f"'{entry.name}' is not cached: {e}."


_FRONT_END = _FrontEnd()


def compiled_function(name, owner=None, owner_is_first_argument=False, key_training=False):
    """The C++ front door for one callable (src/compiler/compiled_function.h):
    `graphs(body, args, kwargs)` runs `body` through it. The graphs' weights are
    the parameters of `owner` (or of the first argument, when it is a
    GraphOwner); with `key_training` the owner's training flag is part of the key."""
    return _C.CompiledFunction(name, _FRONT_END, owner, owner_is_first_argument, key_training)


# --- Cells ----------------------------------------------------------------------------------
def _jit_config_scope(jit_config, where):
    """The settings of a network's ms.JitConfig (None: the context's) for its compiles and calls."""
    if jit_config is None:
        return contextlib.nullcontext()
    if not isinstance(jit_config, JitConfig):
        raise TypeError(f"For '{where}', the argument 'jit_config' must be a JitConfig, but got "
                        f"{type(jit_config).__name__}.")
    return jit_config.applied()


def call_cell(cell, args, kwargs):
    """A top-level call of `cell` in GRAPH_MODE (under its own JitConfig, if set)."""
    graphs = cell.__dict__.get("_graph_cache")
    if graphs is None:
        graphs = cell.__dict__["_graph_cache"] = compiled_function(f"{cell.cls_name}", cell, key_training=True)
    args, kwargs = graph_arguments(args, kwargs)
    dynamic = dynamic_signature(cell.__dict__.get("_input_signature"))
    with _jit_config_scope(cell.__dict__.get("_jit_config"), "Cell.set_jit_config"):
        return graphs(cell._run_top, args, kwargs, dynamic)


def call_nested_cell(cell, args, kwargs):
    """A Cell called while a graph is captured: its body is inlined under its scope."""
    cap = _state.capture
    cap.push_scope(cell.scope)
    try:
        return cell._run_body(args, kwargs)
    finally:
        cap.pop_scope()


def compile_report(cell_or_function):
    """What the last compiles of a Cell or jit function did: a list of dicts
    (graph id, op counts, pass timings, IR files written, planned memory)."""
    graphs = getattr(cell_or_function, "_graph_cache", None)
    if graphs is None and hasattr(cell_or_function, "__dict__"):
        graphs = cell_or_function.__dict__.get("_graph_cache")
    return graphs.report() if graphs is not None else []


# --- functions --------------------------------------------------------------------------
def jit(function=None, mode="PSJit", input_signature=None, hash_args=None, jit_config=None, compile_once=False):
    """Compiles `function` into a graph on its first call for each argument
    signature, in PYNATIVE_MODE as in GRAPH_MODE (MindSpore's `ms.jit`).
    Usable as `@jit` or `@jit(...)`. A method of a Cell compiles with the
    cell's parameters as the graph's weights. With `compile_once`, functions
    made again from the same code (closures) share their compiled graphs,
    which then keep the free variables they were first compiled with.
    `input_signature`: a Tensor or a tuple of them (and other values), one per
    positional argument, as `Cell.set_inputs` takes them: calls are checked
    against it, and None dimensions compile one graph for every size
    (Note [Dynamic shapes])."""
    if mode not in ("PSJit", "PIJit"):
        raise ValueError(f"For 'jit', the 'mode' must be 'PSJit' or 'PIJit', but got {mode!r}.")
    _jit_config_scope(jit_config, "jit")  # checks its type now
    if input_signature is not None:
        if isinstance(input_signature, Tensor):
            input_signature = (input_signature,)
        if not isinstance(input_signature, (tuple, list)):
            raise TypeError(f"For 'jit', the 'input_signature' must be a Tensor or a tuple of Tensors, but got "
                            f"{type(input_signature).__name__}.")
        input_signature = tuple(input_signature)
    dynamic = dynamic_signature(input_signature)

    def wrap(fn):
        if not callable(fn):
            raise TypeError(f"For 'jit', the decorated object must be callable, but got {type(fn).__name__}.")
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", "jit_function")).replace("<", "").replace(">", "")
        make = functools.partial(compiled_function, name, owner_is_first_argument=True)
        code = getattr(fn, "__code__", None)
        # compile_once: every function made from this code (a closure made again) shares its graphs.
        graphs = _C.CompiledFunction.compile_once(code, make) if compile_once and code is not None else make()

        @functools.wraps(fn)
        def compiled(*args, **kwargs):
            if _state.capture is not None:  # inside another capture: inline
                return fn(*args, **kwargs)
            if input_signature is not None:
                check_signature(name, input_signature, args, "input_signature")
            args, kwargs = graph_arguments(args, kwargs)
            with _jit_config_scope(jit_config, "jit"):
                return graphs(fn, args, kwargs, dynamic)

        compiled._graph_cache = graphs
        compiled.__wrapped_jit__ = fn
        compiled.__jit_dynamic__ = dynamic
        return compiled

    if function is not None:
        return wrap(function)
    return wrap


def ms_function(fn=None, obj=None, input_signature=None):
    """The name `jit` had before MindSpore 2.0; works the same."""
    warnings.warn("'ms_function' is deprecated: use 'ms.jit', which it calls.", FutureWarning, stacklevel=2)
    return jit(fn, input_signature=input_signature)


# --- mutable arguments and jit classes -------------------------------------------------
# Note [Mutable arguments]
# A Python scalar argument of a compiled call is a constant of the graph: each
# value compiles its own graph. `ms.mutable(value)` marks an int or a float
# (also inside a tuple, list or dict it marks) as a variable instead: at the
# compiled call it enters the graph as a 0-d Tensor input (int64 or float32),
# so every value runs the same graph. Eagerly it is the plain number (an int
# or float subclass). Tensors are graph inputs already; mutable returns them
# and their containers (marked) unchanged in value.
class _MutableInt(int):
    __ms_mutable__ = True


class _MutableFloat(float):
    __ms_mutable__ = True


class _MutableTuple(tuple):
    __ms_mutable__ = True
    __ms_dynamic_len__ = False


class _MutableList(list):
    __ms_mutable__ = True
    __ms_dynamic_len__ = False


class _MutableDict(dict):
    __ms_mutable__ = True


_MUTABLE_SCALARS = (_MutableInt, _MutableFloat)
_MUTABLE_CONTAINERS = (_MutableTuple, _MutableList, _MutableDict)


def _make_mutable(value, where):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, bool):
        raise TypeError(f"For 'mutable', the 'input_data' should be one of (int, float, Tensor, tuple, list, dict) "
                        f"or their nested structures, but got bool{where}.")
    if isinstance(value, int):
        return _MutableInt(value)
    if isinstance(value, float):
        return _MutableFloat(value)
    if isinstance(value, tuple):
        return _MutableTuple(_make_mutable(v, where) for v in value)
    if isinstance(value, list):
        return _MutableList(_make_mutable(v, where) for v in value)
    if isinstance(value, dict):
        return _MutableDict((k, _make_mutable(v, where)) for k, v in value.items())
    raise TypeError(f"For 'mutable', the 'input_data' should be one of (int, float, Tensor, tuple, list, dict) or "
                    f"their nested structures, but got {type(value).__name__}{where}.")


def mutable(input_data, dynamic_len=False):
    """Marks `input_data` (an int, a float, a Tensor, or a tuple, list or dict
    of them) as a variable of compiled calls: a new value runs the graph
    compiled for the old one (Note [Mutable arguments]). `dynamic_len=True`
    (tuples and lists only) is accepted; msrt still compiles one graph per
    length."""
    if not isinstance(dynamic_len, bool):
        raise TypeError(f"For 'mutable', the 'dynamic_len' must be bool, but got {type(dynamic_len).__name__}.")
    if dynamic_len and not isinstance(input_data, (tuple, list)):
        raise TypeError(f"For 'mutable', when 'dynamic_len' is True, the 'input_data' must be tuple or list, but "
                        f"got {type(input_data).__name__}.")
    result = _make_mutable(input_data, "")
    if dynamic_len:
        result.__ms_dynamic_len__ = True
    return result


def _variable(value):
    if isinstance(value, _MutableInt):
        return Tensor(int(value), _dtype_named("int64"))
    if isinstance(value, _MutableFloat):
        return Tensor(float(value), _dtype_named("float32"))
    if isinstance(value, _MutableDict):
        return _MutableDict((k, _variable(v)) for k, v in value.items())
    if isinstance(value, (_MutableTuple, _MutableList)):
        return type(value)(_variable(v) for v in value)
    return value


def _dtype_named(name):
    from .common import dtype as mstype

    return getattr(mstype, name)


def graph_arguments(args, kwargs):
    """The arguments a compiled call hands its graph: mutable numbers become
    0-d Tensors (Note [Mutable arguments]). The same objects when none is."""
    kinds = _MUTABLE_SCALARS + _MUTABLE_CONTAINERS
    if not any(isinstance(a, kinds) for a in args) and not any(isinstance(v, kinds) for v in kwargs.values()):
        return args, kwargs
    return tuple(_variable(a) for a in args), {k: _variable(v) for k, v in kwargs.items()}


def jit_class(cls):
    """Marks a user class whose instances a compiled Cell or function uses
    (MindSpore's `ms.jit_class`). Capture runs Python, so attribute reads and
    method calls of any object trace into the graph; the decorator checks
    what MindSpore checks and returns the class."""
    if not isinstance(cls, type):
        raise TypeError(f"Decorator jit_class can only be used for class type, but got {cls}.")
    if isinstance(cls, type) and issubclass(cls, GraphOwner):
        raise TypeError(f"Decorator jit_class is used for user-defined classes and cannot be used for nn.Cell: "
                        f"{cls}.")
    cls.__ms_class__ = True
    return cls
