"""The Python surface of the ops, bound from their C++ declarations.

Every op declares its MindSpore forms in C++ (`OpDef::api`, op_def.h): the
functions of `ms.ops`, the Tensor methods and the Primitive classes, each a
signature with MindSpore's names. At import this module turns each form into
a real Python function (source generated from the signature, so `inspect`,
keyword arguments and defaults behave as written) whose body only converts:
Tensors to their core handles, Python scalars to 0-d tensors of the other
operand's dtype, dtypes to their names, None for an optional input to
"absent". Every check of shapes, dtypes and
attribute values is the op's, in C++ (AttrType and the op's inference), so
the errors are the same from every form. A parameter bound `p->!` must keep
its default (NotImplementedError otherwise); one bound `p->~` is accepted and
not passed to the op (a Primitive records it with add_prim_attr).
"""
import numbers

import numpy as np

from .. import _C, _tensor
from .._tensor import Tensor, _scalar_base, _wrap
from ..common import dtype as mstype

__all__ = ["install_functions", "install_methods", "install_primitives", "forms"]

_new = object.__new__


def _convert_inputs(op, values):
    """Core handles for an op's inputs. A lone input must be a Tensor. With
    several, other array-likes become Tensors, and for elementwise ops (and
    ops that declare `promotes_scalars`) Python scalars become 0-d tensors of
    the first Tensor input's dtype, a bool one (select's condition) giving way
    to a later Tensor of another dtype (as MindSpore promotes scalars)."""
    bases = []
    for v in values:  # the common call: every input a Tensor
        if not isinstance(v, Tensor):
            break
        bases.append(v._t)
    else:
        return bases
    bases = []
    like = None
    if op in _PROMOTES_SCALARS:  # the first Tensor that is not a condition (bool), else the first
        for v in values:
            if isinstance(v, Tensor):
                name = v._t.dtype_name
                like = name if like is None else like
                if name != "bool_":
                    like = name
                    break
    for v in values:
        if isinstance(v, Tensor):
            bases.append(v._t)
        elif v is _ABSENT:
            bases.append(None)
        elif like is not None and isinstance(v, (numbers.Number, np.generic)):
            bases.append(_scalar_base(v, like))
        elif len(values) > 1 and isinstance(v, (numbers.Number, np.generic, np.ndarray, list, tuple)):
            bases.append(Tensor(v)._t)
        else:
            raise TypeError(f"For '{op}', every input must be a Tensor, but got {type(v).__name__}.")
    return bases


# An optional input given as None, which the core takes as None (Note
# [Optional inputs] in src/ops/op_def.h); None elsewhere is an error.
_ABSENT = object()


def _optional(op, form, name, value):
    """An optional input of `op` (parameter `name` of form `form`): None leaves
    it out; otherwise a Tensor, or a number where the op promotes scalars."""
    if value is None:
        return _ABSENT
    numbers_too = op in _PROMOTES_SCALARS
    if isinstance(value, Tensor) or (numbers_too and isinstance(value, (numbers.Number, np.generic))):
        return value
    expected = "a Tensor, a number or None" if numbers_too else "a Tensor or None"
    raise TypeError(f"For '{form}', '{name}' must be {expected}, but got {type(value).__name__}.")


def _invoke(op, inputs, attrs):
    n = len(inputs)
    if n == 1 and isinstance(inputs[0], Tensor):  # the common calls, as _convert_inputs makes them
        bases = (inputs[0]._t,)
    elif n == 2 and isinstance(inputs[0], Tensor) and isinstance(inputs[1], Tensor):
        bases = (inputs[0]._t, inputs[1]._t)
    else:
        bases = _convert_inputs(op, inputs)
    outs = _tensor._call(op, bases, attrs)  # the one way to the core (_tensor._op)
    if len(outs) == 1 and op not in _TUPLES:
        t = _new(Tensor)
        t._t = outs[0]
        return t
    return tuple([_wrap(o) for o in outs])


def _dtype_attr(value):
    return value if value is None else mstype._core_name(value, "argument 'dtype'")


def _ints_attr(value):
    """A shape or axes given as a Tensor, an array or a tuple becomes a list of
    Python ints (the op checks the rest)."""
    cls = value.__class__
    if cls is list or cls is tuple:
        for v in value:
            if v.__class__ is not int:
                break
        else:  # ints already: the common call
            return value if cls is list else list(value)
    if isinstance(value, Tensor):
        return [int(v) for v in value.asnumpy().reshape(-1)]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [v.item() if isinstance(v, np.generic) else v for v in value]
    return value.item() if isinstance(value, np.generic) else value


def _axes_attr(value):
    """None (every axis) as the op spells it: []."""
    return [] if value is None else _ints_attr(value)


def _number_attr(value):
    """NumPy scalars become Python numbers."""
    return value.item() if isinstance(value, np.generic) else value


def _plain_attr(value):
    """An attribute of no declared type: arrays become lists and NumPy scalars
    numbers (the op checks the rest)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [_number_attr(v) for v in value]
    return _number_attr(value)


def _scalar_attr(value):
    """NumPy scalars and one-element Tensors become Python numbers (of their kind)."""
    if isinstance(value, Tensor) and value.size == 1:
        return value.item()
    return _number_attr(value)


_VARARG_SEQS = (tuple, list, np.ndarray, Tensor)


def _varargs(values):
    """The positional arguments of a `*p` parameter: one sequence (a tuple, a
    list, an array or a Tensor) is the whole value, as in `x.reshape((2, 3))`."""
    if len(values) == 1 and isinstance(values[0], _VARARG_SEQS):
        return values[0]
    return values


def _varinputs(values):
    """The positional arguments of a `*p` parameter bound to a variadic input:
    one tuple or list of Tensors is the whole sequence, as in
    `ops.meshgrid((x, y))`."""
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        return values[0]
    return values


_ATTR_CONVERTERS = {"dtype": "_dtype_attr", "ints": "_ints_attr", "shape": "_ints_attr", "axes": "_axes_attr",
                    "axis": "_ints_attr", "pair": "_ints_attr", "padding": "_ints_attr", "triple": "_ints_attr",
                    "padding6": "_ints_attr", "int": "_number_attr",
                    "float": "_number_attr", "scalar": "_scalar_attr", "any": "_plain_attr"}


def _unsupported(op, name, value):
    raise NotImplementedError(f"For '{op}', the argument '{name}' is not supported by msrt, but got {value!r}.")


def _signature_text(params, defaults, first=None):
    """The parameter list of a generated def; each default goes into `defaults`
    (the def reads it as _d[i]) and its index into the parameter."""
    parts = [] if first is None else [first]
    star = False
    for p in params:
        if p["varargs"]:
            parts.append(f"*{p['name']}")
            star = True
            continue
        if p["keyword_only"] and not star:
            parts.append("*")
            star = True
        if p["required"]:
            parts.append(p["name"])
        else:
            p["_default_index"] = len(defaults)
            defaults.append(p["default"])
            parts.append(f"{p['name']}=_d[{p['_default_index']}]")
    return ", ".join(parts)


# Defaults converted once, when the forms are made: a parameter left at its
# default passes _k[i] instead of converting the default on every call.
_CONVERTED_DEFAULTS = []


def _attr_expr(types, p):
    """The expression passing parameter `p` to its attribute, converted."""
    name = p["name"]
    # _varargs inline (one frame less per call)
    value = (f"({name}[0] if len({name}) == 1 and isinstance({name}[0], _VARARG_SEQS) else {name})"
             if p["varargs"] else name)
    conv = _ATTR_CONVERTERS.get(types[p["target"]])
    if not conv:
        return value
    if p["varargs"] or "_default_index" not in p:
        return f"{conv}({value})"
    index = len(_CONVERTED_DEFAULTS)
    _CONVERTED_DEFAULTS.append(globals()[conv](p["default"]))
    return f"(_k[{index}] if {value} is _d[{p['_default_index']}] else {conv}({value}))"


def _same_value(a, b):
    """Whether two attribute values are the same, type included (False is not 0)."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def _omissible(op_attrs, types, p):
    """Whether parameter `p`, left at its default, may be left out of the call:
    its default, converted, is the op's own default for the attribute (which
    the op takes when the attribute is not given). Leaving it out spares its
    conversion to the core and the op's parsing of it (Note [Defaults left
    out])."""
    if p["varargs"] or "_default_index" not in p or p["target"] not in op_attrs:
        return False
    conv = _ATTR_CONVERTERS.get(types[p["target"]])
    default = globals()[conv](p["default"]) if conv else p["default"]
    return _same_value(default, op_attrs[p["target"]])


def _unsupported_check(p, label):
    """Lines refusing a value other than the default of unsupported parameter `p`."""
    name = p["name"]
    test = f"{name} is not None" if p["default"] is None else f"{name} != _d[{p['_default_index']}]"
    return [f"    if {test}:", f"        _unsupported({label!r}, {name!r}, {name})"]


def _input_name(declared):
    """An input's name as forms bind it: "weight?" and "xs..." are "weight" and "xs"."""
    return declared[:-3] if declared.endswith("...") else declared.rstrip("?")


def _view_param(form, params, self_attrs):
    """The shape parameter of a form that _C.view_shape can answer: a function
    or method of a view op of one input and one shape attribute, its
    parameters that input and that shape; None for any other."""
    op = form["op"]
    info = _C.op_info(op)
    if self_attrs or form["returns"] or not info["view"] or len(info["inputs"]) != 1 or len(info["attrs"]) != 1:
        return None
    if len(params) != 2 or [p["binds"] for p in params] != ["input", "attr"]:
        return None
    shape = params[1]
    return shape if _C.op_attr_types(op)[shape["target"]] == "shape" and shape["required"] else None


def _body(form, params, self_attrs=None):
    """Lines computing the call of `form`'s op from the parameters."""
    op = form["op"]
    types = _C.op_attr_types(op)
    op_attrs = _C.op_info(op)["attrs"]
    lines, given, attrs, optional_attrs = [], {}, [], []
    for p in params:
        name, binds = p["name"], p["binds"]
        if binds == "input":
            given[_input_name(p["target"])] = name
        elif binds == "inputs":
            given[_input_name(p["target"])] = f"*_varinputs({name})" if p["varargs"] else f"*{name}"
        elif binds == "optional_input":
            given[_input_name(p["target"])] = f"_optional({op!r}, {form['names'][0]!r}, {name!r}, {name})"
        elif binds == "attr":
            if not self_attrs and _omissible(op_attrs, types, p):  # a Primitive's own attributes stay
                optional_attrs.append(p)
            else:
                attrs.append(f"{p['target']!r}: {_attr_expr(types, p)}")
        elif binds == "recorded":  # accepted, not the op's (a Primitive records it as an attribute)
            continue
        else:  # unsupported: must keep its default
            lines += _unsupported_check(p, form["names"][0])
    # In the op's input order, whatever the form's order; an optional input
    # the form leaves out is absent (the signature parser checked the rest).
    inputs = [given.get(_input_name(i), "_ABSENT") for i in _C.op_info(op)["inputs"]]
    attr_text = "{" + ", ".join(attrs) + "}" if attrs else "_NOATTRS"  # the shared empty dict: never mutated
    if self_attrs:
        attr_text = "{**self._op_attrs, " + ", ".join(attrs) + "}" if attrs else "self._op_attrs"
    if optional_attrs:
        # Note [Defaults left out]: an attribute whose parameter is at its
        # default (the op's own) is not passed; the op fills it in.
        lines.append(f"    _a = {attr_text}")
        for p in optional_attrs:
            conv = _ATTR_CONVERTERS.get(types[p["target"]])
            value = f"{conv}({p['name']})" if conv else p["name"]
            lines += [f"    if {p['name']} is not _d[{p['_default_index']}]:",
                      f"        _a = {{**_a, {p['target']!r}: {value}}}"]  # a new dict: _a may be _NOATTRS
        attr_text = "_a"
    inputs_text = "(" + "".join(i + ", " for i in inputs) + ")"
    call = f"_invoke({op!r}, {inputs_text}, {attr_text})"
    view = _view_param(form, params, self_attrs)
    if view is not None:
        # Note [Host shortcuts] (src/runtime/eager.h): a view op's output
        # made by _C.view_shape when nothing observes the call.
        lines += [f"    if isinstance({inputs[0]}, _Tensor):",
                  f"        _o = _C.view_shape({op!r}, {inputs[0]}._t, {view['name']}, {bool(view['varargs'])})",
                  "        if _o is not None:",
                  "            _r = _new(_Tensor)",
                  "            _r._t = _o",
                  "            return _r"]
    returns = form["returns"]
    plain = [i for i in inputs if i.isidentifier() and i != "_ABSENT"]
    if not returns and plain and len(plain) == len(inputs) <= 2 and op not in _TUPLES:
        # The common call, Tensors in, without _invoke's frame (the same steps).
        test = " and ".join(f"isinstance({i}, _Tensor)" for i in plain)
        bases = "(" + "".join(f"{i}._t, " for i in plain) + ")"
        # call_any gives an op's one output itself (no list), several as a list.
        lines += [f"    if {test}:",
                  f"        _o = _tensor._call_any({op!r}, {bases}, {attr_text})",
                  "        if _o.__class__ is _Base:",
                  "            _r = _new(_Tensor)",
                  "            _r._t = _o",
                  "            return _r",
                  "        return tuple([_wrap(o) for o in _o])"]
    if not returns:
        lines.append(f"    return {call}")
    else:  # the objects given for the updated inputs (a Parameter stays itself)
        lines.append(f"    {call}")
        lines.append(f"    return {returns[0]}" if len(returns) == 1 else f"    return ({', '.join(returns)})")
    return lines


def _compile(source, name, defaults):
    namespace = {"_invoke": _invoke, "_tensor": _tensor, "_Tensor": Tensor, "_new": _new, "_wrap": _wrap,
                 "_Base": _C.TensorBase, "_NOATTRS": _tensor._NOATTRS,
                 "_ABSENT": _ABSENT, "_optional": _optional, "_dtype_attr": _dtype_attr,
                 "_ints_attr": _ints_attr,
                 "_number_attr": _number_attr, "_axes_attr": _axes_attr, "_scalar_attr": _scalar_attr,
                 "_varargs": _varargs, "_VARARG_SEQS": _VARARG_SEQS, "_varinputs": _varinputs,
                 "_plain_attr": _plain_attr,
                 "_unsupported": _unsupported, "_d": defaults, "_k": _CONVERTED_DEFAULTS, "_C": _C}
    code = compile(source, f"<msrt op form {name}>", "exec")
    exec(code, namespace)  # noqa: S102 - source generated above from the op declarations
    return namespace[name]


def _function(form, name):
    defaults = []
    sig = _signature_text(form["params"], defaults)
    source = "\n".join([f"def {name}({sig}):"] + _body(form, form["params"])) + "\n"
    fn = _compile(source, name, defaults)
    fn.__doc__ = f"{form['doc']}\n\n(op '{form['op']}')" if form["doc"] else f"(op '{form['op']}')"
    fn.__module__ = "msrt.ops"
    return fn


def _primitive(form, name, base):
    init_defaults, call_defaults = [], []
    init_sig = _signature_text(form["init"], init_defaults, "self")
    call_sig = _signature_text(form["params"], call_defaults, "self")
    op = form["op"]
    types = _C.op_attr_types(op)
    init_attrs = ", ".join(f"{p['target']!r}: {_attr_expr(types, p)}" for p in form["init"] if p["binds"] == "attr")
    init_lines = [f"def __init__({init_sig}):",
                  f"    _base.__init__(self, {name!r})",
                  f"    self._op_attrs = _C.check_attrs({op!r}, {{{init_attrs}}})"]
    for p in form["init"]:
        if p["binds"] == "unsupported":
            init_lines += _unsupported_check(p, name)
        init_lines.append(f"    self.add_prim_attr({p['name']!r}, {p['name']})")
        init_lines.append(f"    self.{p['name']} = {p['name']}")
    init = _compile("\n".join(init_lines) + "\n", "__init__", init_defaults)
    init.__globals__["_base"] = base
    call = _compile("\n".join([f"def __call__({call_sig}):"] + _body(form, form["params"], True)) + "\n",
                    "__call__", call_defaults)
    cls = type(name, (base,), {"__init__": init, "__call__": call, "__module__": "msrt.ops",
                               "__doc__": form["doc"] or f"The primitive of op '{op}'."})
    return cls


_FORMS = _C.op_api()
_PROMOTES_SCALARS = frozenset(f["op"] for f in _FORMS if f["promotes_scalars"])
_TUPLES = frozenset(f["op"] for f in _FORMS if f["tuple"])  # always a tuple, even of one


def forms(kind=None):
    """The declared forms (dicts from `_C.op_api()`), optionally of one kind."""
    return [f for f in _FORMS if kind is None or f["kind"] == kind]


def _install(namespace, kind, make):
    added = []
    for form in forms(kind):
        for name in form["names"]:
            if name in namespace:
                raise RuntimeError(f"msrt: '{name}' is declared by op '{form['op']}' and also written by hand")
            namespace[name] = make(form, name)
            added.append(name)
    return added


def install_functions(namespace):
    """Defines every declared ms.ops function in `namespace`; returns their names."""
    return _install(namespace, "function", _function)


def install_primitives(namespace, base):
    """Defines every declared Primitive class (subclasses of `base`) in `namespace`."""
    return _install(namespace, "primitive", lambda form, name: _primitive(form, name, base))


def install_module(namespace, module, primitives):
    """Adds to `namespace` the declared Primitives (found in `primitives`, the
    namespace they were installed in) whose form names `module` of
    ops.operations ("nn_ops.ReLU()(x)"); returns their names."""
    added = []
    for form in forms("primitive"):
        if form["module"] == module:
            for name in form["names"]:
                namespace[name] = primitives[name]
                added.append(name)
    return added


def install_methods(cls):
    """Adds every declared Tensor method to `cls`."""
    methods = {}
    names = _install(methods, "method", _function)
    for name in names:
        if name in cls.__dict__:
            raise RuntimeError(f"msrt: Tensor.{name} is declared by an op and also written by hand")
        fn = methods[name]
        fn.__qualname__ = f"Tensor.{name}"
        fn.__module__ = cls.__module__
        setattr(cls, name, fn)
    return names
