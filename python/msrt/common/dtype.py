"""Data types, as MindSpore's `mindspore.common.dtype` (`ms.dtype`) names them.

`ms.float32`, `ms.int64`, `ms.bool_`... are instances of `Type` subclasses
(`Float`, `Int`, `UInt`, `Bool`...); they print as MindSpore prints them
("Float32", "Int64", "Bool") and compare equal when they name the same type
(`ms.Int(64) == ms.int64`). A type the C++ core can hold carries the name the
core uses (`_name`, e.g. "float32"); the abstract ones (`ms.number`, `ms.int_`...)
raise a TypeError when used as a tensor's dtype.
"""
import enum

import numpy as np

__all__ = [
    "Type", "Number", "Bool", "Int", "UInt", "Float", "BFloat", "Complex", "String", "List", "Tuple",
    "TensorType", "TypeNone", "QuantDtype",
    "int8", "byte", "int16", "short", "int32", "intc", "int64", "intp",
    "uint8", "ubyte", "uint16", "ushort", "uint32", "uintc", "uint64", "uintp",
    "float16", "half", "float32", "single", "float64", "double", "bfloat16",
    "bool_", "float_", "int_", "uint", "number", "complex64", "complex128", "cfloat", "cdouble",
    "string", "list_", "tuple_", "type_none", "tensor", "tensor_type",
    "number_type", "int_type", "uint_type", "float_type", "signed_type", "complex_type", "all_types",
    "dtype_to_nptype", "dtype_to_pytype", "pytype_to_dtype", "get_py_obj_dtype", "type_size_in_bytes",
]


class Type:
    """Base of every MindSpore type object."""

    __slots__ = ("_name", "_bits")
    _kind = "Type"

    def __init__(self, bits=0):
        self._bits = bits
        self._name = None

    def __repr__(self):
        return self._kind + (str(self._bits) if self._bits else "")

    __str__ = __repr__

    def __eq__(self, other):
        return self is other or (type(other) is type(self) and other._bits == self._bits)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self._kind, self._bits))

    def __reduce__(self):
        return (type(self), (self._bits,) if self._bits else ())


class Number(Type):
    __slots__ = ()
    _kind = "Number"


class Bool(Number):
    __slots__ = ()
    _kind = "Bool"


class Int(Number):
    __slots__ = ()
    _kind = "Int"


class UInt(Number):
    __slots__ = ()
    _kind = "UInt"


class Float(Number):
    __slots__ = ()
    _kind = "Float"


class BFloat(Number):
    __slots__ = ()
    _kind = "BFloat"


class Complex(Number):
    __slots__ = ()
    _kind = "Complex"


class String(Type):
    __slots__ = ()
    _kind = "String"


class List(Type):
    __slots__ = ()
    _kind = "List"


class Tuple(Type):
    __slots__ = ()
    _kind = "Tuple"


class TypeNone(Type):
    __slots__ = ()
    _kind = "NoneType"


class TensorType(Type):
    """`ms.tensor_type(ms.float32)`: the type of a tensor of that element type."""

    __slots__ = ("element_type",)
    _kind = "TensorType"

    def __init__(self, element_type=None):
        super().__init__()
        self.element_type = element_type

    def __repr__(self):
        return "TensorType" if self.element_type is None else f"Tensor[{self.element_type}]"

    __str__ = __repr__

    def element_type_(self):
        return self.element_type

    def __eq__(self, other):
        return isinstance(other, TensorType) and other.element_type == self.element_type

    def __hash__(self):
        return hash(("TensorType", self.element_type))


def _make(cls, bits, core_name):
    t = cls(bits)
    t._name = core_name
    return t


bool_ = _make(Bool, 0, "bool_")
int8 = _make(Int, 8, "int8")
int16 = _make(Int, 16, "int16")
int32 = _make(Int, 32, "int32")
int64 = _make(Int, 64, "int64")
uint8 = _make(UInt, 8, "uint8")
uint16 = _make(UInt, 16, "uint16")
uint32 = _make(UInt, 32, "uint32")
uint64 = _make(UInt, 64, "uint64")
float16 = _make(Float, 16, "float16")
float32 = _make(Float, 32, "float32")
float64 = _make(Float, 64, "float64")
bfloat16 = _make(BFloat, 16, "bfloat16")
complex64 = _make(Complex, 64, "complex64")
complex128 = _make(Complex, 128, "complex128")

byte, short, intc, intp = int8, int16, int32, int64
ubyte, ushort, uintc, uintp = uint8, uint16, uint32, uint64
half, single, double = float16, float32, float64
cfloat, cdouble = complex64, complex128

number = Number()
int_ = Int()
uint = UInt()
float_ = Float()
string = String()
list_ = List()
tuple_ = Tuple()
type_none = TypeNone()
tensor = TensorType()
tensor_type = TensorType

number_type = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, complex64,
               complex128)
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
float_type = (float16, float32, float64)
signed_type = (int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
complex_type = (complex64, complex128)
all_types = (bool_, int8, uint8, int16, int32, int64, uint16, uint32, uint64, float16, float32, float64, complex64,
             complex128)

# The element types the C++ core holds, by the name it uses ("float32", "bool_"...).
_CORE_TYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, uint16, uint32, uint64,
               complex64, complex128)
_BY_CORE_NAME = {t._name: t for t in _CORE_TYPES}
_BY_CORE_NAME["bool"] = bool_

_TO_NUMPY = {
    bool_: np.bool_, int8: np.int8, int16: np.int16, int32: np.int32, int64: np.int64,
    uint8: np.uint8, uint16: np.uint16, uint32: np.uint32, uint64: np.uint64,
    float16: np.float16, float32: np.float32, float64: np.float64,
    complex64: np.complex64, complex128: np.complex128,
}
_FROM_NUMPY = {np.dtype(v): k for k, v in _TO_NUMPY.items()}

_ITEMSIZE = {bool_: 1, int8: 1, uint8: 1, int16: 2, uint16: 2, float16: 2, bfloat16: 2, int32: 4, uint32: 4,
             float32: 4, int64: 8, uint64: 8, float64: 8, complex64: 8, complex128: 16}

_SIMPLE_TYPES = {
    list: list_, tuple: tuple_, type(None): type_none, bool: bool_, int: int64, float: float64,
    complex: complex128, str: string, np.bool_: bool_, np.str_: string,
    np.int8: int8, np.int16: int16, np.int32: int32, np.int64: int64,
    np.uint8: uint8, np.uint16: uint16, np.uint32: uint32, np.uint64: uint64,
    np.float16: float16, np.float32: float32, np.float64: float64,
    np.complex64: complex64, np.complex128: complex128,
}


def _core_name(dtype, what="dtype"):
    """The C++ name of `dtype` (a Type, a NumPy dtype or type, or a name)."""
    if isinstance(dtype, Type):
        if dtype._name is None:
            raise TypeError(f"The {what} {dtype} is not supported by msrt; supported: "
                            "bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, "
                            "float32, float64, complex64, complex128.")
        return dtype._name
    if isinstance(dtype, str) and dtype in _BY_CORE_NAME:
        return _BY_CORE_NAME[dtype]._name
    try:
        return _core_name(_FROM_NUMPY[np.dtype(dtype)], what)
    except (TypeError, KeyError):
        raise TypeError(f"The {what} must be a mindspore dtype such as mindspore.float32, but got {dtype!r}.") from None


def _from_core_name(name):
    return _BY_CORE_NAME[name]


def dtype_to_nptype(type_):
    """The NumPy type of a MindSpore dtype (`ms.float32` → `numpy.float32`)."""
    if type_ == bfloat16:
        return np.float32  # NumPy has no bfloat16; msrt hands bfloat16 data out as float32
    return _TO_NUMPY[type_]


def dtype_to_pytype(type_):
    """The Python type of a MindSpore dtype (`ms.float32` → `float`)."""
    if isinstance(type_, Bool):
        return bool
    if isinstance(type_, (Int, UInt)):
        return int
    if isinstance(type_, (Float, BFloat)):
        return float
    if isinstance(type_, Complex):
        return complex
    return {list_: list, tuple_: tuple, string: str, type_none: type(None)}[type_]


def pytype_to_dtype(obj):
    """The MindSpore dtype of a Python or NumPy type (`int` → `ms.int64`)."""
    if isinstance(obj, np.dtype):
        obj = obj.type
    if isinstance(obj, Type):
        return obj
    if not isinstance(obj, type):
        raise TypeError("For 'pytype_to_dtype', the argument 'obj' must be a python type object, such as int, "
                        f"float, str, etc. But got type {type(obj)}.")
    if obj in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[obj]
    raise NotImplementedError(f"The python type {obj} cannot be converted to MindSpore type.")


def get_py_obj_dtype(obj):
    """The MindSpore type of a Python object or type (a tensor gives its TensorType)."""
    if hasattr(obj, "shape") and isinstance(getattr(obj, "dtype", None), Type):
        return TensorType(obj.dtype)
    if isinstance(obj, Type):
        return obj
    if isinstance(obj, type):
        return pytype_to_dtype(obj)
    return pytype_to_dtype(type(obj))


def type_size_in_bytes(dtype):
    """Bytes per element of `dtype`."""
    if not isinstance(dtype, Type):
        raise TypeError(f"The argument `dtype` should be instance of Type, but got {type(dtype)}.")
    return _ITEMSIZE[dtype]


@enum.unique
class QuantDtype(enum.Enum):
    """Quantization data types (INT1..INT16, UINT1..UINT16)."""

    INT1, INT2, INT3, INT4, INT5, INT6, INT7, INT8 = range(0, 8)
    INT9, INT10, INT11, INT12, INT13, INT14, INT15, INT16 = range(8, 16)
    UINT1, UINT2, UINT3, UINT4, UINT5, UINT6, UINT7, UINT8 = range(100, 108)
    UINT9, UINT10, UINT11, UINT12, UINT13, UINT14, UINT15, UINT16 = range(108, 116)

    def __str__(self):
        return self.name
