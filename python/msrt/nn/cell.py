"""`nn.Cell`: the base class of every layer, loss, optimizer and wrapper.

A Cell registers the Parameters and sub-Cells assigned to its attributes, names
parameters as MindSpore does ("conv1.weight"), tracks training mode and runs
`construct` when called. Registered objects also live in the instance
`__dict__`, so reading `self.weight` in `construct` is a plain attribute read.
"""
import re
import threading
from collections import OrderedDict

from .. import _jit
from .. import context as _context
from ..common.parameter import Parameter
from ..parallel import _utils as _parallel_utils

_context._declare_consumer("reserve_class_name_in_scope", "nn.Cell scope names")
_context._declare_consumer("parameter_broadcast", "nn.Cell first call in data_parallel (Broadcast from rank 0)")
_context._declare_consumer("full_batch", "nn.Cell calls in GRAPH_MODE and first calls in data_parallel (refused "
                                         "outside semi/auto parallel)")
_context._declare_consumer("dataset_strategy", "nn.Cell calls in GRAPH_MODE and first calls in data_parallel "
                                               "('full_batch' and a tuple refused there)")

try:  # MindSpore keeps ParameterTuple beside Parameter.
    from ..common.parameter import ParameterTuple
except ImportError:  # pragma: no cover - the tensor package may not define it
    ParameterTuple = tuple

__all__ = ["Cell", "GraphCell"]

_DEFAULT_PARAM_NAME = re.compile(r"^(Parameter(\$?\d+)?)?$")


class _CallState(threading.local):
    depth = 0  # > 0 while a top-level cell call runs on this thread


_state = _CallState()


class _HookHandle:
    """Returned by `register_forward_pre_hook`, `register_forward_hook` and
    `register_backward_hook`; `remove()` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks, cell):
        _HookHandle._next_id += 1
        self.handle_id = _HookHandle._next_id
        self._hooks = hooks
        self._cell = cell

    def remove(self):
        if self.handle_id in self._hooks:
            del self._hooks[self.handle_id]
            self._cell._update_slow_call()


class Cell(_jit.GraphOwner):
    """Base class for all neural network cells (MindSpore's `nn.Cell`).

    Subclasses define `construct(*inputs)`; calling the cell runs it. Assigning
    a `Parameter` or a `Cell` to an attribute registers it.
    """

    def __init__(self, auto_prefix=True, flags=None):
        d = self.__dict__
        d["_params"] = OrderedDict()
        d["_cells"] = OrderedDict()
        d["_params_list"] = OrderedDict()
        d["_auto_prefix"] = auto_prefix
        d["training"] = False
        d["requires_grad"] = False
        d["_phase"] = "predict"
        d["_scope"] = None
        d["_scope_key"] = None
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_slow_call"] = self._has_bprop
        d["_flags"] = {}
        if flags:
            self.add_flags(**flags)

    _has_bprop = False
    _amp_dtype = None  # set by to_float / amp.auto_mixed_precision
    _amp_output_dtype = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._has_bprop = any("bprop" in vars(klass) for klass in cls.__mro__ if klass is not Cell)

    # --- identity ----------------------------------------------------------
    @property
    def cls_name(self):
        """The class name, as MindSpore's `Cell.cls_name`."""
        return self.__class__.__name__

    @property
    def scope(self):
        """This cell's name scope, "Default/net-LeNet5/conv1-Conv2d" or, with
        reserve_class_name_in_scope=False, "Default/net/conv1"; the root of
        the last top-level call (or this cell) is "Default"."""
        if self._scope is None:
            self._assign_scopes()
        return self._scope

    def _assign_scopes(self):
        reserve = bool(_context.get_context("reserve_class_name_in_scope"))
        key = (id(self), reserve)
        seen = set()

        def walk(cell, scope):
            if id(cell) in seen:
                return
            seen.add(id(cell))
            cell.__dict__["_scope"] = scope
            cell.__dict__["_scope_key"] = key
            for name, child in cell._cells.items():
                if child is not None:
                    part = f"{name}-{child.cls_name}" if reserve else name
                    walk(child, f"{scope}/{part}")

        walk(self, "Default")

    # --- attribute registration -------------------------------------------
    def __getattr__(self, name):
        # Reached only when normal lookup fails (e.g. a subclass used the
        # attribute before Cell.__init__ ran).
        d = self.__dict__
        for table in ("_params", "_cells", "_params_list"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"The '{type(self).__name__}' object has no attribute '{name}'.")

    def __setattr__(self, name, value):
        d = self.__dict__
        if "_params" not in d:
            raise AttributeError(
                f"For '{type(self).__name__}', call 'super().__init__()' before assigning attribute '{name}'."
            )
        params, cells = d["_params"], d["_cells"]
        if isinstance(value, Parameter):
            self.insert_param_to_cell(name, value)
        elif isinstance(value, Cell):
            if name in params:
                raise TypeError(
                    f"For '{self.cls_name}', the attribute '{name}' is a Parameter and cannot be replaced by a Cell."
                )
            if self._auto_prefix:
                value.update_parameters_name(name + ".")
            self.insert_child_to_cell(name, value)
        elif _is_parameter_sequence(value):
            self._set_parameter_sequence(name, value)
        elif name in params:
            if value is None:
                params[name] = None
                d[name] = None
            elif _is_tensor(value) and params[name] is not None:
                params[name].set_data(value)
            else:
                raise TypeError(
                    f"For '{self.cls_name}', the type of parameter '{name}' must be Parameter, Tensor or None, "
                    f"but got {type(value).__name__}."
                )
        elif name in cells:
            if value is not None:
                raise TypeError(
                    f"For '{self.cls_name}', the type of cell '{name}' must be Cell or None, "
                    f"but got {type(value).__name__}."
                )
            cells[name] = None
            d[name] = None
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        d = self.__dict__
        for table in ("_params", "_cells", "_params_list"):
            if name in d.get(table, ()):
                del d[table][name]
                d.pop(name, None)
                return
        object.__delattr__(self, name)

    def _set_parameter_sequence(self, name, value):
        for index, param in enumerate(value):
            if _DEFAULT_PARAM_NAME.match(param.name or ""):
                param.name = f"{name}.{index}"
        self._params_list[name] = value
        self.__dict__[name] = value

    def insert_param_to_cell(self, param_name, param, check_name_contain_dot=True):
        """Adds `param` to this cell under `param_name` (MindSpore's API)."""
        if not isinstance(param_name, str) or not param_name:
            raise KeyError(f"For '{self.cls_name}', the argument 'param_name' must be a non-empty str.")
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"For '{self.cls_name}', the argument 'param_name' cannot contain '.', got '{param_name}'.")
        if param_name in self._cells:
            raise KeyError(f"For '{self.cls_name}', the parameter name '{param_name}' is already a cell's name.")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"For '{self.cls_name}', the type of 'param' must be Parameter or None, "
                f"but got {type(param).__name__}."
            )
        if param is not None and _DEFAULT_PARAM_NAME.match(param.name or ""):
            param.name = param_name
        self._params[param_name] = param
        self.__dict__[param_name] = param

    def insert_child_to_cell(self, child_name, child_cell):
        """Adds `child_cell` as a sub-cell named `child_name` (no prefix change)."""
        if not isinstance(child_name, str) or not child_name or "." in child_name:
            raise KeyError(
                f"For '{self.cls_name}', the child cell name must be a non-empty str without '.', "
                f"but got {child_name!r}."
            )
        if child_name in self._params:
            raise KeyError(f"For '{self.cls_name}', the child cell name '{child_name}' is already a parameter's name.")
        if child_cell is not None and not isinstance(child_cell, Cell):
            raise TypeError(
                f"For '{self.cls_name}', the type of child cell must be Cell or None, "
                f"but got {type(child_cell).__name__}."
            )
        self._cells[child_name] = child_cell
        self.__dict__[child_name] = child_cell

    def update_parameters_name(self, prefix="", recurse=True):
        """Renames every parameter to `prefix` + its path in this cell."""
        if not isinstance(prefix, str):
            raise TypeError(f"For 'update_parameters_name', the argument 'prefix' must be str, but got {prefix!r}.")
        for name, param in self.parameters_and_names(expand=recurse):
            param.name = prefix + name

    # --- traversal -----------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix=""):
        """Yields (path, cell) for this cell and every sub-cell, each once."""
        seen = cells if cells is not None else set()
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for name, cell in self._cells.items():
            if cell is not None:
                child_prefix = f"{name_prefix}.{name}" if name_prefix else name
                yield from cell.cells_and_names(seen, child_prefix)

    def cells(self):
        """The direct sub-cells."""
        return self._cells.values()

    def name_cells(self):
        """The direct sub-cells by name (an OrderedDict)."""
        return OrderedDict((name, cell) for name, cell in self._cells.items() if cell is not None)

    def parameters_and_names(self, name_prefix="", expand=True):
        """Yields (path, Parameter) for every parameter, each once."""
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        seen = set()
        for cell_name, cell in cells:
            for par_name, par in cell._params.items():
                if par is not None and id(par) not in seen:
                    seen.add(id(par))
                    yield (f"{cell_name}.{par_name}" if cell_name else par_name), par
            for list_name, plist in cell._params_list.items():
                for index, par in enumerate(plist):
                    if id(par) not in seen:
                        seen.add(id(par))
                        path = f"{list_name}.{index}"
                        yield (f"{cell_name}.{path}" if cell_name else path), par

    def get_parameters(self, expand=True):
        """Yields every Parameter of this cell (and sub-cells when `expand`)."""
        for _, param in self.parameters_and_names(expand=expand):
            yield param

    def trainable_params(self, recurse=True):
        """Parameters with requires_grad=True, as a list."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def set_comm_fusion(self, fusion_type, recurse=True):
        """Sets `comm_fusion` (the gradient all-reduce fusion id, an int >= 0) of this cell's trainable
        parameters (and its sub-cells' when `recurse`); returns self."""
        if isinstance(fusion_type, bool) or not isinstance(fusion_type, int):
            raise TypeError(f"For 'Cell.set_comm_fusion', the 'fusion_type' must be an int, but got "
                            f"{type(fusion_type).__name__}.")
        if fusion_type < 0:
            raise ValueError(f"For 'Cell.set_comm_fusion', the 'fusion_type' must be an int greater than or equal "
                             f"to 0, but got {fusion_type}.")
        params = self.trainable_params(recurse)
        for param in params:
            param.comm_fusion = fusion_type
        return self

    def untrainable_params(self, recurse=True):
        """Parameters with requires_grad=False, as a list."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse=True):
        """An OrderedDict from parameter name to Parameter."""
        return OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse))

    def parameters_broadcast_dict(self, recurse=True):
        """The parameters a data-parallel broadcast copies from rank 0 (those
        without layerwise_parallel), an OrderedDict by name; None when there
        are none."""
        out = OrderedDict((p.name, p) for p in self.get_parameters(expand=recurse) if not p.layerwise_parallel)
        return out or None

    def init_parameters_data(self, auto_parallel_mode=False):
        """Materialises lazily initialised parameters; returns {param: param}."""
        out = {}
        for param in self.get_parameters():
            init = getattr(param, "init_data", None)
            if init is not None:
                init()
            out[param] = param
        return out

    # --- modes and flags ---------------------------------------------------
    def set_train(self, mode=True):
        """Sets training mode on this cell and every sub-cell; returns self."""
        mode = bool(mode)
        for _, cell in self.cells_and_names():
            cell.__dict__["training"] = mode
            cell.__dict__["_phase"] = "train" if mode else "predict"
        return self

    @property
    def phase(self):
        return self._phase

    @phase.setter
    def phase(self, value):
        if not isinstance(value, str):
            raise TypeError(f"For 'Cell', the property 'phase' must be string type, but got type {type(value)}.")
        self.__dict__["_phase"] = value

    def set_jit_config(self, jit_config):
        """Compiles and runs this cell in GRAPH_MODE with `jit_config`'s settings
        (an `ms.JitConfig`) over the global context's."""
        _jit._jit_config_scope(jit_config, "Cell.set_jit_config")  # checks its type
        self.__dict__["_jit_config"] = jit_config
        return self

    @property
    def jit_config_dict(self):
        config = self.__dict__.get("_jit_config")
        return dict(config.jit_config_dict) if config is not None else {}

    def set_grad(self, requires_grad=True):
        """Marks the cell as one whose gradient is taken (kept for MindSpore
        scripts; the eager tape needs no preparation)."""
        self.__dict__["requires_grad"] = bool(requires_grad)
        return self

    def add_flags(self, **flags):
        self._flags.update(flags)
        for key, value in flags.items():
            object.__setattr__(self, key, value)
        return self

    def add_flags_recursive(self, **flags):
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self):
        return dict(self._flags)

    def to_float(self, dst_type):
        """Runs this cell and every sub-cell in `dst_type` (float16, bfloat16
        or float32): floating inputs and trainable parameters are cast to it
        at each call (the Parameters keep their dtype). Returns self."""
        from ..common import dtype as mstype

        if dst_type not in (mstype.float16, mstype.bfloat16, mstype.float32):
            raise ValueError(f"For '{self.cls_name}', the argument 'dst_type' must be float32, float16 or "
                             f"bfloat16, but got {dst_type}.")
        for _, cell in self.cells_and_names():
            cell._set_amp(dst_type)
        return self

    def _set_amp(self, dtype, output_dtype=None):
        """Computes this cell alone in `dtype` and, when given, casts its
        floating outputs to `output_dtype` (Note [Mixed precision] in amp.py)."""
        self.__dict__["_amp_dtype"] = dtype
        self.__dict__["_amp_output_dtype"] = output_dtype
        self._update_slow_call()

    def recompute(self, **kwargs):
        """Accepted for MindSpore scripts; eager execution keeps activations."""
        return self

    # --- hooks -------------------------------------------------------------
    def register_forward_pre_hook(self, hook_fn):
        """`hook_fn(cell, inputs)` runs before construct; a non-None result
        replaces the inputs."""
        _check_hook("register_forward_pre_hook", hook_fn)
        handle = _HookHandle(self._forward_pre_hooks, self)
        self._forward_pre_hooks[handle.handle_id] = hook_fn
        self._update_slow_call()
        return handle

    def register_forward_hook(self, hook_fn):
        """`hook_fn(cell, inputs, outputs)` runs after construct; a non-None
        result replaces the outputs."""
        _check_hook("register_forward_hook", hook_fn)
        handle = _HookHandle(self._forward_hooks, self)
        self._forward_hooks[handle.handle_id] = hook_fn
        self._update_slow_call()
        return handle

    def register_backward_hook(self, hook_fn):
        """`hook_fn(cell_id, grad_input, grad_output)` runs when the gradient
        of the cell's inputs is computed (PYNATIVE_MODE): grad_input holds the
        gradients of the cell's outputs, grad_output those of its tensor
        inputs; a non-None result (a tuple, one per input) replaces
        grad_output (Note [Gradient hooks] in msrt/_grad.py)."""
        _check_hook("register_backward_hook", hook_fn)
        hooks = self.__dict__.setdefault("_backward_hooks", OrderedDict())
        handle = _HookHandle(hooks, self)
        hooks[handle.handle_id] = hook_fn
        self._update_slow_call()
        return handle

    def _update_slow_call(self):
        self.__dict__["_slow_call"] = bool(
            self._forward_pre_hooks or self._forward_hooks or self.__dict__.get("_backward_hooks")
            or self._has_bprop or self._amp_dtype is not None
        )

    # --- input signatures ----------------------------------------------------
    def set_inputs(self, *inputs):
        """Declares the inputs the cell is called with: Tensors whose shape may
        hold None for a dimension of any size, e.g.
        `Tensor(shape=[None, 3], dtype=ms.float32)`, and other values. Calls
        are checked against it (count, dtype, rank and the fixed
        dimensions). In GRAPH_MODE, None dimensions compile one graph for
        every size (shown as -1 in save_graphs' IR): the executor infers the
        shapes and plans memory per input shape when the graph runs. Where
        the network's Python code depends on a size (reads `x.shape[0]` into
        a reshape, branches on it), msrt warns and compiles one graph per
        shape instead (Note [Dynamic shapes] in msrt/_jit.py)."""
        from .._tensor import Tensor

        if not inputs:
            raise ValueError(f"For '{self.cls_name}', 'set_inputs' needs at least one input.")
        for i, value in enumerate(inputs):
            if isinstance(value, Tensor) or value is None or isinstance(value, (bool, int, float, tuple, list)):
                continue
            raise TypeError(f"For 'set_inputs', the {i}th input must be a Tensor, a scalar, a tuple or a list, but "
                            f"got {type(value).__name__}.")
        self.__dict__["_input_signature"] = tuple(inputs)

    def get_inputs(self):
        """What `set_inputs` declared, or None."""
        signature = self.__dict__.get("_input_signature")
        return list(signature) if signature is not None else None

    def _check_signature(self, args):
        _jit.check_signature(self.cls_name, self.__dict__["_input_signature"], args)

    # --- calling -------------------------------------------------------------
    def construct(self, *inputs, **kwargs):
        raise NotImplementedError(f"For '{self.cls_name}', the method 'construct' is not defined.")

    def __call__(self, *args, **kwargs):
        state = _state
        if state.depth:
            if _jit._state.capture is not None:
                return _jit.call_nested_cell(self, args, kwargs)
            if self._slow_call:
                return self._run_slow(args, kwargs)
            return self.construct(*args, **kwargs)
        # A top-level call: the place for per-call checks.
        if "_input_signature" in self.__dict__:
            self._check_signature(args)
        if self._scope_key != (id(self), _context.get_context("reserve_class_name_in_scope")):
            self._assign_scopes()
        if _jit._state.capture is not None:  # called by a function being compiled
            return self._run_top(*args, **kwargs)
        if ("_parallel_ready" not in self.__dict__
                and _context.get_auto_parallel_context("parallel_mode") == _context.ParallelMode.DATA_PARALLEL):
            self._prepare_parallel()
        if _context.get_context("mode") == _context.GRAPH_MODE:
            _parallel_utils._check_full_batch()  # MindSpore checks when it compiles a cell
            return _jit.call_cell(self, args, kwargs)
        return self._run_top(*args, **kwargs)

    def _run_top(self, *args, **kwargs):
        """Runs the cell as the outermost one on this thread."""
        state = _state
        state.depth = 1
        try:
            if _jit._state.capture is not None:
                return _jit.call_nested_cell(self, args, kwargs)
            return self._run_body(args, kwargs)
        finally:
            state.depth = 0

    def _prepare_parallel(self):
        """The first top-level call of the cell in data_parallel (MindSpore's
        first call in PYNATIVE_MODE, its compile in GRAPH_MODE): full_batch is
        refused, and with parameter_broadcast every parameter of the cell that
        no earlier cell broadcast, except layerwise_parallel ones, takes rank
        0's value. Every rank must make this call: it is a collective."""
        if _parallel_utils._get_parallel_mode() != _context.ParallelMode.DATA_PARALLEL:
            return
        _parallel_utils._check_full_batch()
        if _parallel_utils._get_parameter_broadcast():
            params = [p for p in self.get_parameters()
                      if not p.layerwise_parallel and not getattr(p, "_broadcast_done", False)]
            _parallel_utils._broadcast_parameters(params)
            for param in params:
                param._broadcast_done = True
        self.__dict__["_parallel_ready"] = True

    def _run_body(self, args, kwargs):
        if self._slow_call:
            return self._run_slow(args, kwargs)
        return self.construct(*args, **kwargs)

    def _run_slow(self, args, kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        if self.__dict__.get("_backward_hooks"):
            from .. import _grad

            outputs = _grad.call_with_backward_hooks(self, args, lambda a: self._run_construct(a, kwargs))
        else:
            outputs = self._run_construct(args, kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, outputs)
            if result is not None:
                outputs = result
        return outputs

    def _run_construct(self, args, kwargs):
        if self._amp_dtype is not None:
            return self._run_amp(args, kwargs)
        if self._has_bprop:
            return _call_with_bprop(self, args, kwargs)
        return self.construct(*args, **kwargs)

    def _run_amp(self, args, kwargs):
        """construct with floating inputs and trainable parameters in the
        cell's amp dtype; parameters an op updates in place (BatchNorm's
        running statistics) are not trainable and keep theirs."""
        from ..ops import functional as F

        dtype = self._amp_dtype
        args = tuple(_cast_float(a, dtype, F) for a in args)
        d = self.__dict__
        swapped = []
        for name, param in self._params.items():
            if param is not None and param.requires_grad and _is_float(param) and param.dtype != dtype:
                d[name] = F.cast(param, dtype)
                swapped.append((name, param))
        try:
            if self._has_bprop:
                outputs = _call_with_bprop(self, args, kwargs)
            else:
                outputs = self.construct(*args, **kwargs)
        finally:
            for name, param in swapped:
                d[name] = param
        if self._amp_output_dtype is not None:
            outputs = _cast_float(outputs, self._amp_output_dtype, F)
        return outputs

    # --- printing ------------------------------------------------------------
    def extend_repr(self):
        """Extra text shown inside the cell's repr (override in subclasses)."""
        return ""

    def __repr__(self):
        extra = self.extend_repr()
        info = self.__class__.__name__ + "<"
        if self._cells:
            sub = "\n"
            if extra:
                sub += f"{extra}\n"
            for key, value in self._cells.items():
                sub += f"({key}): {value!r}\n"
            info += sub.replace("\n", "\n  ") + ">"
        else:
            info += extra + ">"
        return info

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)


def _check_hook(method, hook_fn):
    if not callable(hook_fn):
        raise TypeError(f"When using '{method}(hook_fn)', the type of 'hook_fn' must be python function, but got "
                        f"{type(hook_fn)}.")


def _call_with_bprop(cell, args, kwargs):
    """Runs a cell that defines `bprop` so gradients through it use that
    bprop (the autodiff API provides the mechanism)."""
    from .. import _grad

    hook = getattr(_grad, "_call_cell_with_bprop", None)
    if hook is None or kwargs:
        return cell.construct(*args, **kwargs)
    return hook(cell, *args)


def _is_float(t):
    from .._tensor import _FLOAT_NAMES

    return t._t.dtype_name in _FLOAT_NAMES


def _cast_float(value, dtype, functional):
    """`value` with its floating tensors (also inside tuples/lists) cast to `dtype`."""
    if isinstance(value, (tuple, list)):
        return type(value)(_cast_float(v, dtype, functional) for v in value)
    if _is_tensor(value) and _is_float(value) and value.dtype != dtype:
        return functional.cast(value, dtype)
    return value


def _is_tensor(value):
    from .._tensor import Tensor

    return isinstance(value, Tensor)


def _is_parameter_sequence(value):
    if isinstance(value, ParameterTuple) and ParameterTuple is not tuple:
        return True
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(v, Parameter) for v in value)
    )


class GraphCell(Cell):
    """Runs a graph loaded by `ms.load` (from `ms.export`), with the weights
    saved in it, in either mode."""

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__()
        from .._graph_files import Graph

        if not isinstance(graph, Graph):
            raise TypeError(f"For 'GraphCell', the 'graph' must be what ms.load returns, but got "
                            f"{type(graph).__name__}.")
        if params_init is not None:
            raise ValueError("For 'GraphCell', 'params_init' is not supported: the weights come from the file.")
        self.__dict__["graph"] = graph

    def construct(self, *inputs):
        return self.graph(*inputs)

    def __call__(self, *inputs):
        return self.graph(*inputs)
