"""MindSpore's dtype objects: names, printing, equality, conversions."""
import pickle

import numpy as np
import pytest

import msrt as ms
from msrt.common import dtype as mstype


@pytest.mark.parametrize("dtype, printed, numpy_type, size", [
    (ms.bool_, "Bool", np.bool_, 1),
    (ms.int8, "Int8", np.int8, 1),
    (ms.int16, "Int16", np.int16, 2),
    (ms.int32, "Int32", np.int32, 4),
    (ms.int64, "Int64", np.int64, 8),
    (ms.uint8, "UInt8", np.uint8, 1),
    (ms.float16, "Float16", np.float16, 2),
    (ms.float32, "Float32", np.float32, 4),
    (ms.float64, "Float64", np.float64, 8),
])
def test_each_dtype_prints_converts_and_sizes_as_mindspore(dtype, printed, numpy_type, size):
    assert str(dtype) == printed and repr(dtype) == printed
    assert ms.dtype_to_nptype(dtype) is numpy_type
    assert ms.pytype_to_dtype(numpy_type) == dtype
    assert mstype.type_size_in_bytes(dtype) == size
    t = ms.Tensor(np.zeros((2,), numpy_type))
    assert t.dtype == dtype and t.itemsize == size


def test_aliases_and_the_dtype_module():
    assert ms.dtype is mstype
    assert ms.dtype.float32 is ms.float32
    assert ms.half is ms.float16 and ms.single is ms.float32 and ms.double is ms.float64
    assert ms.intc is ms.int32 and ms.intp is ms.int64 and ms.byte is ms.int8 and ms.short is ms.int16
    assert ms.ubyte is ms.uint8
    assert str(ms.bfloat16) == "BFloat16"
    from msrt.common.dtype import float32 as f32
    assert f32 is ms.float32


def test_equality_hashing_and_type_classes():
    assert ms.Int(64) == ms.int64 and ms.Float(32) == ms.float32
    assert ms.int32 != ms.int64 and ms.float32 != ms.int32
    assert ms.float32 != "float32"
    assert len({ms.float32, ms.Float(32), ms.int32}) == 2
    assert isinstance(ms.float32, ms.dtype.Float) and isinstance(ms.int8, ms.dtype.Int)
    assert isinstance(ms.float32, ms.dtype.Number) and isinstance(ms.float32, ms.dtype.Type)
    assert ms.float32 in ms.dtype.float_type and ms.int64 in ms.dtype.int_type
    assert str(ms.int_) == "Int" and str(ms.number) == "Number"
    assert pickle.loads(pickle.dumps(ms.float32)) == ms.float32


def test_python_type_conversions():
    assert ms.pytype_to_dtype(int) == ms.int64
    assert ms.pytype_to_dtype(float) == ms.float64
    assert ms.pytype_to_dtype(bool) == ms.bool_
    assert ms.pytype_to_dtype(np.dtype("float16")) == ms.float16
    assert ms.dtype_to_pytype(ms.float16) is float
    assert ms.dtype_to_pytype(ms.int8) is int
    assert ms.dtype_to_pytype(ms.bool_) is bool
    assert ms.get_py_obj_dtype(1) == ms.int64
    assert ms.get_py_obj_dtype(ms.Tensor([1.0])) == ms.tensor_type(ms.float32)
    with pytest.raises(TypeError):
        ms.pytype_to_dtype(3)
    with pytest.raises(NotImplementedError):
        ms.pytype_to_dtype(dict)


def test_types_the_core_cannot_hold_raise_a_type_error():
    assert str(ms.uint32) == "UInt32" and str(ms.complex64) == "Complex64"
    with pytest.raises(TypeError, match="UInt32 is not supported"):
        ms.Tensor([1, 2], ms.uint32)
    with pytest.raises(TypeError, match="mindspore dtype"):
        ms.Tensor([1, 2], "not a dtype")


def test_quant_dtype_enum():
    assert str(ms.dtype.QuantDtype.INT8) == "INT8"
    assert ms.dtype.QuantDtype.UINT4.value == 103
