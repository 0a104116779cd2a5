"""Automatic differentiation: `ms.grad`, `ms.value_and_grad`, `ops.GradOperation`
and Cells with a custom `bprop`.

A gradient call runs the function under a C++ GradTape: every differentiable
op whose inputs are tracked is recorded, then the tape walks the record back
from the outputs. Inputs whose gradient is wanted become fresh leaves sharing
the caller's data (so the same tensor passed twice gets two gradients);
Parameters are tracked through their own `requires_grad`.

A Cell defining `bprop(self, *inputs, out, dout)` differentiates through that
method: its forward runs unrecorded and one node stands for it on the tape
(see Note [Custom gradients from Python] in python/src/bind_tensor.cc).
"""
import numbers
import threading

from . import _C, _custom_grad, _jit
from ._custom_grad import record_custom
from ._structure import flatten as _flatten
from ._structure import rebuild as _rebuild
from ._tensor import Tensor, _op, _wrap

_C.declare_consumer("context", "grad_for_scalar", "ms.grad / GradOperation")
_C.declare_consumer("context", "check_bprop", "ms.grad / GradOperation (custom bprop)")

__all__ = ["grad", "value_and_grad", "GradOperation"]


class _State(threading.local):
    def __init__(self):
        self.depth = 0  # gradient recordings in progress on this thread
        self.tapes = []  # their tapes, innermost last


_state = _State()


def _context(key):
    return _C.get_context(key)


# --- structures of outputs ------------------------------------------------------
def _fresh(t):
    """A new handle on `t`'s data with its own identity on the tape."""
    return _wrap(t._t._reshaped(t._t.shape))


def _is_scalar(value):
    return isinstance(value, numbers.Number) and not isinstance(value, (bool, complex))


# --- the core -----------------------------------------------------------------------
def _weights_list(weights):
    from .common.parameter import Parameter

    if weights is None:
        return None, False
    if isinstance(weights, Parameter):
        return [weights], True
    if isinstance(weights, (list, tuple)):
        for w in weights:
            if not isinstance(w, Parameter):
                raise TypeError(f"The 'weights' must be a Parameter, a ParameterTuple or a list of Parameters, "
                                f"but it holds a {type(w).__name__}.")
        return list(weights), False
    raise TypeError(f"The 'weights' must be a Parameter, a ParameterTuple or a list of Parameters, "
                    f"but got {type(weights).__name__}.")


def _run(fn, args, kwargs, positions, weights, sens, has_aux):
    """Runs `fn` on a tape. Returns (output, position gradients with None for
    positions that get none, weight gradients).

    Called inside a function whose gradient is being taken (grad of grad), it
    records on the outer tape and asks for its gradients with create_graph,
    so the outer gradient differentiates through them (Note [Higher-order
    gradients] in src/autodiff/autodiff.cc)."""
    from .common.parameter import Parameter

    outer_tape = _state.tapes[-1] if _state.depth and _state.tapes else None
    for i in positions:
        if not -len(args) <= i < len(args):
            raise ValueError(f"The 'grad_position' {i} is out of range: the function got {len(args)} inputs.")
    has_scalar = any(not isinstance(args[i], Tensor) for i in positions)
    grad_for_scalar = bool(_context("grad_for_scalar")) if has_scalar else False
    call_args = list(args)
    leaves = []
    for i in positions:
        a = call_args[i]
        if isinstance(a, Parameter) and a._t.requires_grad:
            leaf = a  # tracked already; keeps its name and identity
        elif isinstance(a, Tensor) and outer_tape is not None and _C._is_tracked(a._t):
            leaf = _op("identity", a)  # its own identity, still connected to the outer tape
        elif isinstance(a, Tensor):
            leaf = _fresh(a)
        elif grad_for_scalar and _is_scalar(a):
            leaf = Tensor(a)
        else:
            leaf = None
        if leaf is not None:
            call_args[i] = leaf
        leaves.append(leaf)
    saved_flags = []
    for w in weights:
        if not w._t.requires_grad:
            saved_flags.append(w)
            w._t.requires_grad = True
    for leaf in leaves:
        if leaf is not None and not leaf._t.requires_grad and not _C._is_tracked(leaf._t):
            leaf._t.requires_grad = True

    tape = outer_tape if outer_tape is not None else _C.GradTape()
    outer_ids = _custom_grad._state.custom_ids
    custom_ids = outer_ids if outer_tape is not None else []  # the outer gradient may still run them
    _state.depth += 1
    _state.tapes.append(tape)
    _custom_grad._state.custom_ids = custom_ids
    try:
        try:
            out = fn(*call_args, **kwargs)
        finally:
            _state.depth -= 1
            _state.tapes.pop()
            _custom_grad._state.custom_ids = outer_ids
        target = out
        if has_aux:
            if not isinstance(out, (tuple, list)) or len(out) < 2:
                raise ValueError("When 'has_aux' is True, the function must return a tuple of at least two values "
                                 f"(the value to differentiate and auxiliary data), but it returned "
                                 f"{type(out).__name__}.")
            target = out[0]
        outputs = _flatten(target, [])
        if not outputs:
            raise TypeError(f"The function whose gradient is taken must return a Tensor (or a tuple of them), "
                            f"but it returned {type(target).__name__}.")
        sens_bases = []
        if callable(sens):  # made from the outputs (a loss scale seeding the backward)
            sens = sens(outputs)
        if sens is not None:
            flat_sens = _flatten(sens, [])
            if len(flat_sens) != len(outputs):
                raise ValueError(f"The sens (the gradient of the outputs) must match the outputs: the function "
                                 f"returned {len(outputs)} tensors, but {len(flat_sens)} sens were given.")
            for o, s in zip(outputs, flat_sens):
                if s.shape != o.shape:
                    raise ValueError(f"The sens must have the shape of its output: the output has shape {o.shape}, "
                                     f"but the sens has shape {s.shape}.")
            sens_bases = [s._t for s in flat_sens]
        wrt = [leaf._t for leaf in leaves if leaf is not None] + [w._t for w in weights]
        if not wrt:
            grads = []
        elif outer_tape is not None:
            grads = tape.gradient([o._t for o in outputs], sens_bases, wrt, create_graph=True)
        else:
            grads = tape.gradient([o._t for o in outputs], sens_bases, wrt)
    finally:
        if outer_tape is None:
            tape.end()
            _custom_grad.forget(custom_ids)
        for w in saved_flags:
            w._t.requires_grad = False
    grads = [_wrap(g) for g in grads]
    it = iter(grads)
    position_grads = [next(it) if leaf is not None else None for leaf in leaves]
    weight_grads = list(it)
    return out, position_grads, weight_grads


def _positions(grad_position, nargs=None):
    if grad_position is None:
        return (), None
    if isinstance(grad_position, bool) or not isinstance(grad_position, (int, tuple, list)):
        raise TypeError(f"The 'grad_position' must be an int, a tuple of ints or None, "
                        f"but got {type(grad_position).__name__}.")
    if isinstance(grad_position, int):
        return (grad_position,), True
    for p in grad_position:
        if isinstance(p, bool) or not isinstance(p, int):
            raise TypeError(f"The 'grad_position' must hold ints, but got {grad_position!r}.")
    if not grad_position:
        raise ValueError("The 'grad_position' must not be an empty tuple.")
    return tuple(grad_position), False


def _format(position_grads, positions, single, weight_grads, weights, single_weight, return_ids):
    pos = [(p, g) for p, g in zip(positions, position_grads) if g is not None]
    if return_ids:
        pos_out = tuple(pos)
        w_out = tuple((w.name, g) for w, g in zip(weights or (), weight_grads))
    else:
        pos_out = tuple(g for _, g in pos)
        w_out = tuple(weight_grads)
    if single and len(pos_out) == 1:
        pos_out = pos_out[0]
    if single_weight and len(w_out) == 1:
        w_out = w_out[0]
    if single is None:
        return w_out
    if weights is None:
        return pos_out
    return pos_out, w_out


def _differentiable(fn):
    """`fn`, or for an object whose bprop the Cell machinery does not route, a
    forward that records its bprop."""
    if getattr(fn, "bprop", None) is not None and not getattr(type(fn), "_has_bprop", False):
        return lambda *args: _call_cell_with_bprop(fn, *args)
    return fn


# --- whole-graph gradients -------------------------------------------------------------------
# Note [Compiled gradient calls]
# A gradient function called at the top level (no tape recording, no graph
# being captured) compiles as one graph, forward and backward, when its
# function is an `ms.jit` function or when mode=GRAPH_MODE (MindSpore's
# tutorial loop: value_and_grad of a function calling Cells). The graph is
# cached per gradient function and argument signature as a jit function's
# graphs are, and falls back to eager execution as they do (jit_syntax_level).
# Elsewhere (inside an eager function being differentiated) compiled calls
# go through Note [Gradients of compiled calls] in msrt/_jit.py.
def _dynamic_signature(fn, count):
    """Note [Dynamic shapes] in msrt/_jit.py: the dynamic shapes `fn` declares
    for its positional arguments (a Cell's set_inputs, a jit function's
    input_signature), or None."""
    if isinstance(fn, _jit.GraphOwner):
        dynamic = _jit.dynamic_signature(fn.__dict__.get("_input_signature"))
    else:
        dynamic = getattr(fn, "__jit_dynamic__", None)
    return dynamic if dynamic is not None and len(dynamic) == count else None


def _compiles_whole(fn):
    if _C._is_recording() or _jit.capturing():
        return False
    return getattr(fn, "__wrapped_jit__", None) is not None or _context("mode") == 0  # GRAPH_MODE


def _compiled(fn, body, kind):
    """`body` (the eager gradient function of `fn`), compiled whole when `fn` is
    compiled (Note [Compiled gradient calls])."""
    user = getattr(fn, "__wrapped_jit__", fn)
    name = f"{kind}_{getattr(user, '__qualname__', type(user).__name__)}".replace("<", "").replace(">", "")
    body.__wrapped_jit__ = user  # the compile cache hashes the user's source, not this module's
    owner = fn if isinstance(fn, _jit.GraphOwner) else None
    graphs = _jit.compiled_function(name, owner, key_training=owner is not None)

    def call(*args, **kwargs):
        if not _compiles_whole(fn):
            return body(*args, **kwargs)
        args, kwargs = _jit.graph_arguments(args, kwargs)
        return graphs(body, args, kwargs, _dynamic_signature(fn, len(args)))

    call._graph_cache = graphs
    return call


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    """A function computing the gradient of `fn` with respect to the inputs at
    `grad_position` (an int, a tuple, or None) and/or `weights`.

    Returns one gradient for an int position, a tuple for a tuple, the weight
    gradients when `grad_position` is None, and (position grads, weight grads)
    when both are asked. With `has_aux`, `fn` returns (value, *aux); only the
    value is differentiated and the result is (gradients, aux).
    """
    if grad_position is None and weights is None:
        raise ValueError("`grad_position` and `weight` can not be None at the same time.")
    positions, single = _positions(grad_position)
    weight_list, single_weight = _weights_list(weights)
    target = _differentiable(fn)

    def grad_fn(*args, **kwargs):
        out, pg, wg = _run(target, args, kwargs, positions, weight_list or [], None, has_aux)
        result = _format(pg, positions, single, wg, weight_list, single_weight, return_ids)
        if has_aux:
            return result, tuple(out[1:])
        return result

    return _compiled(fn, grad_fn, "grad")


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False):
    """Like `grad`, but the function returns (fn's output, gradients)."""
    if grad_position is None and weights is None:
        raise ValueError("`grad_position` and `weight` can not be None at the same time.")
    positions, single = _positions(grad_position)
    weight_list, single_weight = _weights_list(weights)
    target = _differentiable(fn)

    def value_and_grad_fn(*args, **kwargs):
        out, pg, wg = _run(target, args, kwargs, positions, weight_list or [], None, has_aux)
        return out, _format(pg, positions, single, wg, weight_list, single_weight, return_ids)

    return _compiled(fn, value_and_grad_fn, "value_and_grad")


class GradOperation:
    """MindSpore's GradOperation(get_all=False, get_by_list=False, sens_param=False).

    `GradOperation(...)(net)` or `GradOperation(get_by_list=True)(net, weights)`
    returns a function of the net's inputs (plus the sens last, when
    `sens_param`) that returns the gradient of the first input, of all inputs
    (`get_all`), of the weights (`get_by_list`), or both as (inputs, weights).
    """

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        for name, value in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'GradOperation', the '{name}' must be a bool, but got {type(value).__name__}.")
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise TypeError("For 'GradOperation', 'weights' must be given when 'get_by_list' is True.")
        weight_list = None
        if self.get_by_list:
            weight_list, _ = _weights_list(weights)
        target = _differentiable(fn)

        def after_grad(*args, **kwargs):
            return self._run(target, weight_list, args, kwargs)[1]

        return _compiled(fn, after_grad, "grad_operation")

    def _with_value(self, fn, weights=None):
        """Like __call__, but the function returns (fn's output, gradients)
        from one recording (nn.ForwardValueAndGrad)."""
        if self.get_by_list and weights is None:
            raise TypeError("For 'GradOperation', 'weights' must be given when 'get_by_list' is True.")
        weight_list = _weights_list(weights)[0] if self.get_by_list else None
        target = _differentiable(fn)

        def value_and_grad_fn(*args, **kwargs):
            return self._run(target, weight_list, args, kwargs)

        return _compiled(fn, value_and_grad_fn, "forward_value_and_grad")

    def _run(self, target, weight_list, args, kwargs):
        sens = None
        if self.sens_param:
            if not args:
                raise TypeError("For 'GradOperation' with sens_param=True, the sens must be passed as the last "
                                "input.")
            args, sens = args[:-1], args[-1]
        if self.get_all:
            positions = tuple(range(len(args)))
        elif self.get_by_list:
            positions = ()
        else:
            if not args:
                raise TypeError("For 'GradOperation', the function must take at least one input.")
            positions = (0,)
        out, pg, wg = _run(target, args, kwargs, positions, weight_list or [], sens, False)
        inputs = tuple(g for g in pg if g is not None)
        if self.get_all and self.get_by_list:
            return out, (inputs, tuple(wg))
        if self.get_by_list:
            return out, tuple(wg)
        if self.get_all:
            return out, inputs
        return out, (inputs[0] if inputs else ())


# --- custom gradient nodes -------------------------------------------------------------
class _CellBprop:
    """The backward of a Cell with a custom `bprop`: runs `cell.bprop(*args, out, dout)`."""

    __slots__ = ("cell", "args", "out", "fresh", "input_positions")

    def __init__(self, cell, args, out, fresh, input_positions):
        self.cell, self.args, self.out, self.fresh, self.input_positions = cell, args, out, fresh, input_positions

    def backward(self, dys):
        cell, args = self.cell, self.args
        douts = [_wrap(d) if d is not None else _op("zeros_like", o) for d, o in zip(dys, self.fresh)]
        dout = _rebuild(self.out, iter(douts))
        grads = cell.bprop(*args, self.out, dout)
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        check = bool(_context("check_bprop"))
        if check and len(grads) != len(args):
            raise _bprop_error(TypeError, cell, f"the number of return values({len(grads)}) should be equal to the "
                                                f"number of input arguments({len(args)}).")
        result = []
        for i in self.input_positions:
            g = grads[i] if i < len(grads) else None
            a = args[i]
            if g is None:
                result.append(None)
                continue
            if not isinstance(g, Tensor):
                if check or not _is_scalar(g):
                    raise _bprop_error(TypeError, cell, f"the {i}th return value (the gradient of the {i}th "
                                                        f"argument) should be a Tensor, but got {type(g).__name__}.")
                g = _op("fill", shape=list(a.shape), value=float(g), dtype=a._t.dtype_name)
            if check and g.dtype != a.dtype:
                raise _bprop_error(TypeError, cell, f"the {i}th return value (the gradient of the {i}th argument) "
                                                    f"should have the same dtype as the {i}th argument ({a.dtype}), "
                                                    f"but got {g.dtype}.")
            if g.shape != a.shape:
                raise _bprop_error(ValueError, cell, f"the {i}th return value (the gradient of the {i}th argument) "
                                                     f"should have the same shape as the {i}th argument {a.shape}, "
                                                     f"but got {g.shape}.")
            result.append(g._t)
        return result


def _call_cell_with_bprop(cell, *args):
    """Runs `cell`'s forward; while a gradient is recorded, gradients through
    it come from `cell.bprop(*args, out, dout)` instead of its ops."""
    construct = getattr(cell, "construct", None)
    forward = construct if construct is not None else (lambda *a: type(cell).__call__(cell, *a))
    if not getattr(_C, "_is_recording", bool)():
        return forward(*args)
    inner = _C.GradTape()  # shadows the outer tape: the forward's ops are not kept
    saved_ids = _custom_grad._state.custom_ids
    _custom_grad._state.custom_ids = None
    try:
        out = forward(*args)
    finally:
        inner.end()
        _custom_grad._state.custom_ids = saved_ids
    outputs = _flatten(out, [])
    fresh = [_fresh(o) for o in outputs]
    fresh_out = _rebuild(out, iter(fresh))
    inputs = [(i, a) for i, a in enumerate(args) if isinstance(a, Tensor)]
    node = _CellBprop(cell, args, fresh_out, fresh, [i for i, _ in inputs])
    if not record_custom([a._t for _, a in inputs], [f._t for f in fresh], node):
        return out
    return fresh_out


def _bprop_error(kind, cell, message):
    name = type(cell).__name__
    return kind(f"For user defined method 'bprop' of net '{name}', {message}")


# --- gradient hooks ----------------------------------------------------------------------
# Note [Gradient hooks]
# ops.HookBackward and Cell.register_backward_hook are custom tape nodes whose
# forward is the identity. HookBackward's node hands the gradient arriving at
# its output to hook_fn(grad), whose result (if not None) flows on instead. A
# Cell with backward hooks gets two nodes: one on its outputs, which keeps the
# gradient of the outputs (MindSpore's grad_input), and one on its tensor
# inputs, which calls hook_fn(cell_id, grad_input, grad_output) with the
# gradients of the inputs (grad_output) and lets a non-None result replace
# them. Hooks run only while a gradient is computed eagerly; in a graph being
# compiled they are skipped with a warning, as MindSpore supports them in
# PYNATIVE_MODE only.
def _hook_grads(dys, like):
    return tuple(_wrap(d) if d is not None else _op("zeros_like", f) for d, f in zip(dys, like))


def _replacement(result, grads, where):
    """The gradients a hook returned, checked against the ones it was given."""
    if result is None:
        return grads
    new = result if isinstance(result, (tuple, list)) else (result,)
    if len(new) != len(grads):
        raise ValueError(f"{where}: the hook function must return None or {len(grads)} gradient(s), one per input, "
                         f"but it returned {len(new)}.")
    for i, (n, g) in enumerate(zip(new, grads)):
        if not isinstance(n, Tensor):
            raise TypeError(f"{where}: the gradient {i} the hook function returned must be a Tensor, but got "
                            f"{type(n).__name__}.")
        if n.shape != g.shape:
            raise ValueError(f"{where}: the gradient {i} the hook function returned must have shape {g.shape}, but "
                             f"got {n.shape}.")
    return tuple(new)


def _skipped_hook(what):
    from ._warnings import MsrtWarning
    import warnings

    warnings.warn(f"{what} is only supported in PYNATIVE_MODE: it is skipped in the graph being compiled.",
                  MsrtWarning, stacklevel=4)


def _gate(inputs, node_factory):
    """Records inputs → fresh copies of them as one custom node; returns the
    copies (the inputs themselves when nothing is recorded)."""
    fresh = [_fresh(t) for t in inputs]
    node = node_factory(fresh)
    if not record_custom([t._t for t in inputs], [f._t for f in fresh], node):
        return list(inputs)
    return fresh


class _HookBackwardNode:
    __slots__ = ("hook_fn", "fresh")

    def __init__(self, hook_fn, fresh):
        self.hook_fn, self.fresh = hook_fn, fresh

    def backward(self, dys):
        grads = _hook_grads(dys, self.fresh)
        arg = grads[0] if len(grads) == 1 else grads
        new = _replacement(self.hook_fn(arg), grads, "For 'HookBackward'")
        return [g._t for g in new]


def hook_backward(hook_fn, inputs):
    """ops.HookBackward's forward: the inputs, with hook_fn called on their gradient."""
    if _jit.capturing():
        _skipped_hook("'HookBackward'")
        return list(inputs)
    if not _C._is_recording():
        return list(inputs)
    return _gate(inputs, lambda fresh: _HookBackwardNode(hook_fn, fresh))


class _CellHookState:
    __slots__ = ("grad_input",)

    def __init__(self):
        self.grad_input = None


class _CellOutputGate:
    __slots__ = ("state", "fresh")

    def __init__(self, state, fresh):
        self.state, self.fresh = state, fresh

    def backward(self, dys):
        self.state.grad_input = _hook_grads(dys, self.fresh)
        return list(dys)


class _CellInputGate:
    __slots__ = ("cell", "state", "fresh")

    def __init__(self, cell, state, fresh):
        self.cell, self.state, self.fresh = cell, state, fresh

    def backward(self, dys):
        cell = self.cell
        grads = _hook_grads(dys, self.fresh)
        grad_input = self.state.grad_input if self.state.grad_input is not None else ()
        cell_id = f"{cell.cls_name}({id(cell)})"
        for hook in list(cell._backward_hooks.values()):
            grads = _replacement(hook(cell_id, grad_input, grads), grads,
                                 f"For the backward hook of '{cell.cls_name}'")
        return [g._t for g in grads]


def call_with_backward_hooks(cell, args, run):
    """run(args) for a Cell with backward hooks (Note [Gradient hooks])."""
    if _jit.capturing():
        _skipped_hook("'register_backward_hook'")
        return run(args)
    if not _C._is_recording():
        return run(args)
    state = _CellHookState()
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    gated = _gate([args[i] for i in positions], lambda fresh: _CellInputGate(cell, state, fresh))
    args = list(args)
    for i, g in zip(positions, gated):
        args[i] = g
    out = run(tuple(args))
    outputs = _flatten(out, [])
    if not outputs:
        return out
    fresh = _gate(outputs, lambda f: _CellOutputGate(state, f))
    return _rebuild(out, iter(fresh))
