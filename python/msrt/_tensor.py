"""`ms.Tensor`: a typed, shaped array whose data and ops live in the C++ core.

A Tensor holds one handle on a C++ tensor (`_C.TensorBase`, in `_t`); every
computation goes through `_op` → `_C.call`, so eager execution, autodiff
recording and error messages are the core's. The hot path (`x + y`) is kept
short: no introspection per call, outputs wrapped without re-validation,
Python scalars turned into cached 0-d tensors of the other operand's dtype.
"""
import math
import numbers
import threading

import numpy as np

from . import _C
from .common import dtype as mstype

__all__ = ["Tensor"]

_call = _C.call
_call1 = _C.call1  # for ops of one output: that output, no list
_call_any = _C.call_any  # one output itself, several as a list (the generated op functions)
_c_scalar = _C.scalar
_TensorBase = _C.TensorBase
_new = object.__new__
_NOATTRS = {}  # shared empty attribute dict; never mutated
_DTYPES = mstype._BY_CORE_NAME
_FLOAT_NAMES = frozenset(("float16", "bfloat16", "float32", "float64"))
_UINT_NAMES = frozenset(("uint8", "uint16", "uint32", "uint64"))
_INT_NAMES = frozenset(("int8", "int16", "int32", "int64")) | _UINT_NAMES
_COMPLEX_NAMES = frozenset(("complex64", "complex128"))


class _ShapeWatch(threading.local):
    # While a graph with dynamic dimensions is captured: called with each shape
    # Python reads of a symbolic tensor (Note [Dynamic shapes] in msrt/_jit.py).
    watcher = None


_shape_watch = _ShapeWatch()


def _wrap(base):
    """A Tensor around a TensorBase (no copy, no checks)."""
    t = _new(Tensor)
    t._t = base
    return t


def _op(name, *tensors, **attrs):
    """Calls catalogue op `name` on Tensors with attributes; returns a Tensor
    for one output or a tuple of Tensors for several. The one place Python
    reaches the core (`_C.call_any`)."""
    n = len(tensors)
    try:  # the common calls, every input a Tensor, without a comprehension's frame
        if n == 1:
            bases = (tensors[0]._t,)
        elif n == 2:
            bases = (tensors[0]._t, tensors[1]._t)
        elif n == 3:
            bases = (tensors[0]._t, tensors[1]._t, tensors[2]._t)
        else:
            bases = [t._t for t in tensors]
    except AttributeError:
        try:
            bases = [None if t is None else t._t for t in tensors]  # None: an optional input left out
        except AttributeError:
            bad = next(t for t in tensors if t is not None and not isinstance(t, Tensor))
            raise TypeError(f"For '{name}', every input must be a Tensor, but got {type(bad).__name__}.") from None
    out = _call_any(name, bases, attrs)  # one output itself, several as a list
    if out.__class__ is _TensorBase:
        t = _new(Tensor)
        t._t = out
        return t
    return tuple([_wrap(o) for o in out])


# --- Python scalars as tensors ----------------------------------------------
# Scalars in binary ops become 0-d tensors of the other operand's dtype
# (float scalars with integer or bool tensors become float32, int scalars with
# bool tensors int64, complex scalars with real tensors complex64, or
# complex128 beside float64), as MindSpore promotes Python scalars. Ints
# outside an integer dtype's range wrap as NumPy's astype does. They are cached:
# they are never written and never require gradients.
_scalar_cache = {}


def _scalar_base(value, like):
    """A cached 0-d TensorBase holding `value`, typed after dtype name `like`."""
    key = (value.__class__, value, like)
    base = _scalar_cache.get(key)
    if base is not None:
        return base
    cls = value.__class__
    if cls is float:
        name = like if like in _FLOAT_NAMES or like in _COMPLEX_NAMES else "float32"
    elif cls is bool:
        name = like
    elif cls is int:
        name = "int64" if like == "bool_" else like
    elif cls is complex:
        name = like if like in _COMPLEX_NAMES else ("complex128" if like == "float64" else "complex64")
    elif isinstance(value, np.generic):
        return _scalar_base(value.item(), like)
    elif isinstance(value, numbers.Integral):
        return _scalar_base(int(value), like)
    elif isinstance(value, numbers.Real):
        return _scalar_base(float(value), like)
    elif isinstance(value, numbers.Complex):
        return _scalar_base(complex(value), like)
    else:
        raise TypeError(f"unsupported scalar {value!r}")
    if name in _INT_NAMES and cls is int and not -(1 << 63) <= value < (1 << (64 if name == "uint64" else 63)):
        raise OverflowError(f"The Python int {value} does not fit in a {name} tensor.")
    if cls is complex or name in _COMPLEX_NAMES or (cls is int and name in _UINT_NAMES):
        # Exact through NumPy: a double cannot hold every uint64, nor an imaginary part.
        base = _TensorBase(np.asarray(value).astype(mstype._TO_NUMPY[_DTYPES[name]]))
    else:
        base = _c_scalar(value, name)
    if len(_scalar_cache) > 4096:
        _scalar_cache.clear()
    _scalar_cache[key] = base
    return base


def _as_base(value, like):
    """TensorBase for a binary-op operand: a Tensor's own, a scalar's cached
    0-d tensor (typed after `like`), or None when the operand is not supported."""
    if isinstance(value, Tensor):
        return value._t
    if isinstance(value, (int, float, complex, np.generic)):
        return _scalar_base(value, like)
    if isinstance(value, (np.ndarray, list, tuple)):
        return Tensor(value)._t
    return None


def _binary(name, a, b):
    """`a <op> b` where `a` is a Tensor and `b` anything binary ops accept."""
    ta = a._t
    if isinstance(b, Tensor):
        tb = b._t
    else:
        tb = _as_base(b, ta.dtype_name)
        if tb is None:
            return NotImplemented
    t = _new(Tensor)
    t._t = _call1(name, (ta, tb), _NOATTRS)
    return t


def _rbinary(name, a, b):
    """`b <op> a` for the reflected operators (`2 - x`)."""
    ta = a._t
    tb = _as_base(b, ta.dtype_name)
    if tb is None:
        return NotImplemented
    t = _new(Tensor)
    t._t = _call1(name, (tb, ta), _NOATTRS)
    return t


def _binary_method(name, dunder):
    """Tensor.<dunder>: `self <op> other`, a Tensor operand going straight to
    the core (one Python frame for `x + y`), anything else through _binary."""
    def method(self, other):
        if isinstance(other, Tensor):
            t = _new(Tensor)
            t._t = _call1(name, (self._t, other._t), _NOATTRS)
            return t
        return _binary(name, self, other)

    method.__name__ = dunder
    method.__qualname__ = f"Tensor.{dunder}"
    method.__doc__ = f"self <op> other: op '{name}' (a Python scalar takes self's dtype)."
    return method


def _as_tensor(value, like=None):
    """A Tensor for `value` (Tensors pass through; scalars follow `like`'s dtype)."""
    if isinstance(value, Tensor):
        return value
    if like is not None and isinstance(value, (int, float, complex, np.generic)):
        return _wrap(_scalar_base(value, like._t.dtype_name))
    return Tensor(value)


# --- construction -------------------------------------------------------------
def _numpy_of(data, dtype):
    """A NumPy array for Python data, with MindSpore 2.x's default dtypes
    (float → float32, complex → complex64, int → int64, bool → bool_)."""
    if isinstance(data, np.ndarray):
        array = data
    elif isinstance(data, np.generic):  # before float: numpy.float64 is a float, and keeps its dtype
        array = np.asarray(data)
    elif isinstance(data, bool):
        array = np.array(data, dtype=np.bool_)
    elif isinstance(data, int):
        array = np.array(data, dtype=np.int64)
    elif isinstance(data, float):
        array = np.array(data, dtype=np.float32)
    elif isinstance(data, complex) and not isinstance(data, np.generic):
        array = np.array(data, dtype=np.complex64)
    elif isinstance(data, (list, tuple)):
        array = np.array(data)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.complex128:
            array = array.astype(np.complex64)
        elif array.dtype.kind == "i" and array.dtype != np.int64:
            array = array.astype(np.int64)
        elif array.dtype.kind == "O" or array.dtype.kind in "US":
            raise TypeError(f"For 'Tensor', the list or tuple must hold numbers or bools only, but got {data!r}.")
    elif isinstance(data, numbers.Number) and not isinstance(data, complex):
        array = np.array(float(data), dtype=np.float32)
    else:
        raise TypeError("For 'Tensor', the type of 'input_data' should be one of [Tensor, ndarray, list, tuple, "
                        f"float, int, bool, complex], but got {type(data).__name__}.")
    if dtype is not None and dtype is not mstype.bfloat16:
        target = mstype.dtype_to_nptype(dtype)
        if array.dtype != target:
            array = array.astype(target)
    return array


# Tensor(init=..., shape, dtype) fills through msrt.common.initializer, which
# sits above this module and installs its generator here when it loads.
_init_generator = None


def _set_init_generator(generate):
    global _init_generator
    _init_generator = generate


def _make_base(input_data, dtype, shape, init):
    if dtype is not None and not isinstance(dtype, mstype.Type):
        # MindSpore takes its dtype objects; NumPy dtypes and names are accepted too.
        dtype = _DTYPES[mstype._core_name(dtype, "argument 'dtype'")]
    if dtype is not None:
        mstype._core_name(dtype, "argument 'dtype'")  # raises for types the core cannot hold
    if init is not None:
        if input_data is not None:
            raise TypeError("For 'Tensor', 'input_data' and 'init' can not be set at the same time.")
        if shape is None or dtype is None:
            raise ValueError("For 'Tensor', init, dtype and shape must have values at the same time.")
        if _init_generator is None:
            raise RuntimeError("msrt.common.initializer is not loaded; import msrt first.")
        return _init_generator(init, shape, dtype)._t
    if input_data is None:
        if shape is None:
            raise TypeError("For 'Tensor', 'input_data' and 'init' can not be None at the same time.")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dtype = dtype if dtype is not None else mstype.float32
        return _make_base(np.zeros(shape, mstype.dtype_to_nptype(dtype)), dtype, None, None)
    if shape is not None:
        raise ValueError("For 'Tensor', if 'input_data' is available, 'shape' doesn't need to be set.")
    if isinstance(input_data, Tensor):
        base = input_data._t
        if dtype is None or dtype._name == base.dtype_name:
            return _TensorBase(base)
        return _call("cast", [base], {"dtype": dtype._name})[0]
    if isinstance(input_data, _TensorBase):
        if dtype is None or dtype._name == input_data.dtype_name:
            return input_data
        return _call("cast", [input_data], {"dtype": dtype._name})[0]
    array = _numpy_of(input_data, dtype)
    if dtype is mstype.bfloat16:
        return _TensorBase(np.asarray(array, dtype=np.float32), "bfloat16")
    return _TensorBase(array)


def _is_dynamic_shape(shape):
    return isinstance(shape, (tuple, list)) and any(d is None for d in shape)


class Tensor:
    """MindSpore's Tensor: `Tensor(input_data=None, dtype=None, shape=None, init=None)`.

    `input_data` may be a Tensor (shares data), a NumPy array, a Python list
    or tuple, or a scalar (float → float32, int → int64, bool → bool_).
    """

    __slots__ = ("_t", "__dict__", "__weakref__")
    __array_priority__ = 100

    def __init__(self, input_data=None, dtype=None, shape=None, init=None, internal=False, const_arg=False,
                 device=None):
        if input_data is None and init is None and _is_dynamic_shape(shape):
            # A signature for Cell.set_inputs: None marks a dimension of any size. It holds no data.
            self._t = _make_base(None, dtype, [0 if d is None else d for d in shape], None)
            self.__dict__["dynamic_shape"] = tuple(-1 if d is None else d for d in shape)
            return
        self._t = _make_base(input_data, dtype, shape, init)

    @staticmethod
    def from_numpy(array):
        """A Tensor over the array's memory, as MindSpore's: writes through either one are seen by the
        other, and the Tensor keeps the array alive. An array that is not C-contiguous is copied to a
        contiguous Tensor, as MindSpore does; so is a read-only, misaligned or byte-swapped one, which
        msrt's in-place ops could not write."""
        if not isinstance(array, np.ndarray):
            raise TypeError(f"For 'Tensor.from_numpy', the input must be a numpy.ndarray, but got {type(array)}.")
        return _wrap(_TensorBase.from_numpy(array))

    # --- attributes ------------------------------------------------------
    @property
    def shape(self):
        watch = _shape_watch.watcher
        if watch is not None and self._t.symbolic:
            return watch(self._t.shape)
        return self._t.shape

    @property
    def dtype(self):
        return _DTYPES[self._t.dtype_name]

    @property
    def ndim(self):
        return self._t.ndim

    @property
    def size(self):
        if _shape_watch.watcher is not None:
            return math.prod(self.shape)
        return self._t.size

    @property
    def itemsize(self):
        return mstype._ITEMSIZE[self.dtype]

    @property
    def nbytes(self):
        if _shape_watch.watcher is not None:
            return self.size * self.itemsize
        return self._t.nbytes

    @property
    def strides(self):
        """Bytes to step in each dimension (the data is contiguous)."""
        item = self.itemsize
        out = []
        for d in reversed(self.shape):
            out.append(item)
            item *= d
        return tuple(reversed(out))

    @property
    def T(self):  # noqa: N802 - MindSpore's name
        return self.transpose()

    @property
    def mT(self):  # noqa: N802 - MindSpore's name
        nd = self._t.ndim
        perm = list(range(nd))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return _op("transpose", self, perm=perm)

    @property
    def has_init(self):
        return False

    @property
    def init(self):
        return None

    @property
    def init_finished(self):
        return True

    def init_data(self, slice_index=None, shape=None, opt_shard_group=None):
        return self

    def dim(self):
        return self._t.ndim

    ndimension = dim

    def numel(self):
        return self.size

    nelement = numel

    def stride(self, dim=None):
        """Elements to step in each dimension (MindSpore 2.x)."""
        item = 1
        out = []
        for d in reversed(self.shape):
            out.append(item)
            item *= d
        out = tuple(reversed(out))
        return out if dim is None else out[dim]

    def storage_offset(self):
        return 0

    def is_contiguous(self):
        return True

    def contiguous(self):
        return self

    # --- data ----------------------------------------------------------------
    def asnumpy(self):
        """The data as a NumPy array sharing memory (waits for pending ops)."""
        return self._t.asnumpy()

    numpy = asnumpy

    def __array__(self, dtype=None, copy=None):
        array = self._t.asnumpy()
        return array if dtype is None else array.astype(dtype)

    def item(self, index=None):
        """The value of a one-element tensor (or of element `index`) as a Python scalar."""
        array = self._t.asnumpy()
        if index is None:
            if array.size != 1:
                raise ValueError(f"The tensor should have only one element, but got {array.size} elements.")
            return array.reshape(()).item()
        return array.item(index)

    def tolist(self):
        return self._t.asnumpy().tolist()

    def __bool__(self):
        array = self._t.asnumpy()
        if array.size != 1:
            raise ValueError("The truth value of a Tensor with more than one element is ambiguous; "
                             f"it has shape {self.shape}. Use .any() or .all().")
        return bool(array.reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._t.dtype_name not in _INT_NAMES:
            raise TypeError(f"Only integer tensors of one element can be converted to an index, "
                            f"but got dtype {self.dtype}.")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __round__(self, ndigits=None):
        return round(self.item(), ndigits)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object (a 0-d Tensor)")
        return int(shape[0])  # int(): a dynamic dimension's use is seen (Note [Dynamic shapes])

    def __iter__(self):
        shape = self.shape
        if not shape:
            raise TypeError("iteration over a 0-d Tensor")
        for i in range(int(shape[0])):
            yield self[i]

    def __repr__(self):
        return _repr(self)

    def __str__(self):
        array = self._t.asnumpy()
        return str(array)

    def __format__(self, spec):
        if self._t.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __hash__(self):
        return id(self) >> 4

    def __reduce__(self):
        return (_rebuild, (np.array(self._t.asnumpy()), self._t.dtype_name))

    def __copy__(self):
        return _wrap(_TensorBase(self._t))

    def __deepcopy__(self, memo):
        return self.copy()

    # --- arithmetic operators ---------------------------------------------
    __add__ = _binary_method("add", "__add__")

    def __radd__(self, other):
        return _rbinary("add", self, other)

    __sub__ = _binary_method("sub", "__sub__")

    def __rsub__(self, other):
        return _rbinary("sub", self, other)

    __mul__ = _binary_method("mul", "__mul__")

    def __rmul__(self, other):
        return _rbinary("mul", self, other)

    __truediv__ = _binary_method("div", "__truediv__")

    def __rtruediv__(self, other):
        return _rbinary("div", self, other)

    __pow__ = _binary_method("pow", "__pow__")

    def __rpow__(self, other):
        return _rbinary("pow", self, other)

    __floordiv__ = _binary_method("floor_div", "__floordiv__")

    def __rfloordiv__(self, other):
        return _rbinary("floor_div", self, other)

    __mod__ = _binary_method("floor_mod", "__mod__")

    def __rmod__(self, other):
        return _rbinary("floor_mod", self, other)

    def __neg__(self):
        t = _new(Tensor)
        t._t = _call1("neg", (self._t,), _NOATTRS)
        return t

    def __pos__(self):
        return self

    def __abs__(self):
        t = _new(Tensor)
        t._t = _call1("abs", (self._t,), _NOATTRS)
        return t

    def __invert__(self):
        if self._t.dtype_name != "bool_":
            raise TypeError(f"For '__invert__', only bool tensors are supported, but got {self.dtype}.")
        return _op("logical_not", self)

    __and__ = _binary_method("logical_and", "__and__")

    def __rand__(self, other):
        return _rbinary("logical_and", self, other)

    __or__ = _binary_method("logical_or", "__or__")

    def __ror__(self, other):
        return _rbinary("logical_or", self, other)

    __xor__ = _binary_method("logical_xor", "__xor__")

    def __rxor__(self, other):
        return _rbinary("logical_xor", self, other)

    # In-place operators rebind the name to a new tensor, as MindSpore does.
    __iadd__ = __add__
    __isub__ = __sub__
    __imul__ = __mul__
    __itruediv__ = __truediv__
    __ifloordiv__ = __floordiv__
    __imod__ = __mod__

    # --- comparisons (elementwise) --------------------------------------------
    def __eq__(self, other):
        if isinstance(other, Tensor):
            t = _new(Tensor)
            t._t = _call1("equal", (self._t, other._t), _NOATTRS)
            return t
        if not isinstance(other, (int, float, np.ndarray, np.generic)):
            return False
        return _binary("equal", self, other)

    def __ne__(self, other):
        if isinstance(other, Tensor):
            t = _new(Tensor)
            t._t = _call1("not_equal", (self._t, other._t), _NOATTRS)
            return t
        if not isinstance(other, (int, float, np.ndarray, np.generic)):
            return True
        return _binary("not_equal", self, other)

    __lt__ = _binary_method("less", "__lt__")

    __le__ = _binary_method("less_equal", "__le__")

    __gt__ = _binary_method("greater", "__gt__")

    __ge__ = _binary_method("greater_equal", "__ge__")

    # --- indexing ----------------------------------------------------------------

    # --- methods -----------------------------------------------------------------
    def astype(self, dtype, copy=True):
        """A cast to `dtype`; the tensor itself when it has that dtype and copy is False."""
        name = mstype._core_name(dtype, "argument 'dtype'")
        if name == self._t.dtype_name and not copy:
            return self
        return _op("cast", self, dtype=name)

    def float(self):
        return self.astype(mstype.float32)

    def is_complex(self):
        """Whether the dtype is complex64 or complex128."""
        return self._t.dtype_name in _COMPLEX_NAMES

    def is_floating_point(self):
        """Whether the dtype is a real floating-point one."""
        return self._t.dtype_name in _FLOAT_NAMES

    def is_signed(self):
        """Whether the dtype holds negative values (signed integers, floats, complex)."""
        return self._t.dtype_name not in _UINT_NAMES and self._t.dtype_name != "bool_"

    def half(self):
        return self.astype(mstype.float16)

    def double(self):
        return self.astype(mstype.float64)

    def int(self):
        return self.astype(mstype.int32)

    def long(self):
        return self.astype(mstype.int64)

    def short(self):
        return self.astype(mstype.int16)

    def bool(self):
        return self.astype(mstype.bool_)

    def set_dtype(self, dtype):
        self._t = _call("cast", [self._t], {"dtype": mstype._core_name(dtype)})[0]
        return self


def _rebuild(array, dtype_name):
    return _wrap(_TensorBase(array, dtype_name))


# --- printing -------------------------------------------------------------------
def _repr(t):
    """MindSpore's form: Tensor(shape=[2, 3], dtype=Float32, value=\n[[...]])."""
    base = t._t
    shape = list(base.shape)
    dtype = _DTYPES[base.dtype_name]
    array = base.asnumpy()
    if array.ndim == 0:
        value = " " + _format_scalar(array.item())
    else:
        if array.dtype.kind == "f":
            body = np.array2string(array, separator=", ", threshold=1000, edgeitems=3,
                                   formatter={"float_kind": lambda v: f"{v: .8e}"})
        else:
            body = np.array2string(array, separator=", ", threshold=1000, edgeitems=3)
        value = (" " + body) if array.ndim == 1 else ("\n" + body)
    return f"Tensor(shape={shape}, dtype={dtype}, value={value})"


def _format_scalar(v):
    if isinstance(v, float):
        return repr(int(v)) if v.is_integer() and abs(v) < 1e16 else repr(v)
    return repr(v)
