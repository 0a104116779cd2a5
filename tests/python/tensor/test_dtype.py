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
    with pytest.raises(TypeError, match="Number is not supported"):
        ms.Tensor([1, 2], ms.number)
    with pytest.raises(TypeError, match="mindspore dtype"):
        ms.Tensor([1, 2], "not a dtype")


def test_quant_dtype_enum():
    assert str(ms.dtype.QuantDtype.INT8) == "INT8"
    assert ms.dtype.QuantDtype.UINT4.value == 103


# --- uint16, uint32, uint64, complex64, complex128 ----------------------------------------------
NEW_TYPES = [("uint16", "UInt16", np.uint16, 2), ("uint32", "UInt32", np.uint32, 4), ("uint64", "UInt64", np.uint64, 8),
             ("complex64", "Complex64", np.complex64, 8), ("complex128", "Complex128", np.complex128, 16)]


@pytest.mark.parametrize("attr, name, nptype, size", NEW_TYPES)
def test_new_dtypes_names_sizes_and_numpy_types(attr, name, nptype, size):
    dtype = getattr(ms, attr)
    assert str(dtype) == name and repr(dtype) == name
    assert ms.dtype_to_nptype(dtype) is nptype
    assert ms.pytype_to_dtype(nptype) == dtype
    assert ms.type_size_in_bytes(dtype) == size
    assert dtype in ms.dtype.number_type
    t = ms.Tensor(np.zeros(3, nptype))
    assert t.dtype == dtype and t.itemsize == size and t.nbytes == 3 * size
    assert ms.Tensor([1, 2], dtype).dtype == dtype
    assert ms.Tensor([1, 2], attr).dtype == dtype
    assert ms.Tensor(np.array([1, 2], np.int64)).astype(dtype).dtype == dtype
    assert ms.ops.zeros((2,), dtype).dtype == dtype and ms.ops.ones((2,), dtype).asnumpy().tolist() == [1, 1]
    assert ms.ops.Cast()(ms.Tensor([3.0]), dtype).asnumpy().tolist() == [3]


def test_complex_aliases():
    assert ms.cfloat is ms.complex64 and ms.cdouble is ms.complex128
    assert ms.dtype_to_pytype(ms.complex64) is complex and ms.dtype_to_pytype(ms.uint64) is int


@pytest.mark.parametrize("array", [
    np.array([0, 1, 65535], np.uint16), np.array([[0, 4294967295]], np.uint32),
    np.array([0, 2**63, 2**64 - 1], np.uint64), np.array([1 + 2j, -3.5 - 0j, np.inf + 1j], np.complex64),
    np.array([[1e300 + 1e-300j], [np.nan - 2j]], np.complex128), np.zeros((0, 2), np.complex64),
    np.array(7 + 8j, np.complex128), np.array(2**64 - 1, np.uint64),
])
def test_asnumpy_round_trips(array):
    t = ms.Tensor(array)
    got = t.asnumpy()
    assert got.dtype == array.dtype and got.shape == array.shape
    np.testing.assert_array_equal(got, array)
    np.testing.assert_array_equal(ms.Tensor.from_numpy(array).asnumpy(), array)
    np.testing.assert_array_equal(np.asarray(t), array)
    if not np.isnan(array).any():
        assert t.tolist() == array.tolist()
    big_endian = array.astype(array.dtype.newbyteorder(">"))
    np.testing.assert_array_equal(ms.Tensor(big_endian).asnumpy(), array)
    if array.size == 1:
        assert t.item() == array.item() and isinstance(t.item(), type(array.item()))


def test_python_scalars():
    assert ms.Tensor(2 + 3j).asnumpy().tolist() == 2 + 3j
    assert complex(ms.Tensor(np.array([1 - 1j], np.complex128))) == 1 - 1j
    assert ms.Tensor([1j, 2]).dtype == ms.complex64
    assert ms.Tensor([2**64 - 1]).dtype == ms.uint64  # NumPy's type for the list
    assert int(ms.Tensor(np.array(2**64 - 1, np.uint64))) == 2**64 - 1


def test_printing_in_mindspore_form():
    assert repr(ms.Tensor(np.array([1 + 2j, 3 - 4.5j], np.complex64))) == \
        "Tensor(shape=[2], dtype=Complex64, value= [1.+2.j , 3.-4.5j])"
    assert repr(ms.Tensor(np.array(1 + 2j, np.complex128))) == "Tensor(shape=[], dtype=Complex128, value= (1+2j))"
    assert repr(ms.Tensor(np.array([[1j], [2]], np.complex128))) == \
        "Tensor(shape=[2, 1], dtype=Complex128, value=\n[[0.+1.j],\n [2.+0.j]])"
    assert repr(ms.Tensor(np.array([2**64 - 1, 0], np.uint64))) == \
        "Tensor(shape=[2], dtype=UInt64, value= [18446744073709551615,                    0])"
    assert repr(ms.Tensor(np.array(65535, np.uint16))) == "Tensor(shape=[], dtype=UInt16, value= 65535)"
    assert str(ms.Tensor(np.array([1 + 2j], np.complex64))) == "[1.+2.j]"


def test_print_op_screen_form(capfd):
    ms.ops.print_(ms.Tensor(np.array([1 + 2j, -3j], np.complex64)), ms.Tensor(np.array(1.5 - 2j, np.complex128)),
                  ms.Tensor(np.array([2**64 - 1], np.uint64)))
    out = capfd.readouterr().out
    assert "dtype=Complex64, value= [ 1.00000000e+00+2.00000000e+00j, -0.00000000e+00-3.00000000e+00j])" in out
    assert "dtype=Complex128, value= (1.5-2j))" in out
    assert "value= [18446744073709551615])" in out


def test_checkpoint_round_trip_of_the_new_dtypes(tmp_path):
    arrays = {"u16": np.array([1, 65535], np.uint16), "u32": np.array([4294967295], np.uint32),
              "u64": np.array([[2**64 - 1, 5]], np.uint64), "c64": np.array([1 + 2j, -1j], np.complex64),
              "c128": np.array([[1e300 - 3j]], np.complex128)}
    path = str(tmp_path / "new.ckpt")
    ms.save_checkpoint({k: ms.Tensor(v) for k, v in arrays.items()}, path)
    loaded = ms.load_checkpoint(path)
    for k, v in arrays.items():
        assert loaded[k].asnumpy().dtype == v.dtype
        np.testing.assert_array_equal(loaded[k].asnumpy(), v)


def test_dtype_predicates():
    c = ms.Tensor(np.array([1j], np.complex64))
    u = ms.Tensor(np.array([1], np.uint32))
    f = ms.Tensor([1.0])
    assert c.is_complex() and not u.is_complex() and not f.is_complex()
    assert f.is_floating_point() and not c.is_floating_point() and not u.is_floating_point()
    assert c.is_signed() and f.is_signed() and not u.is_signed() and ms.Tensor([1]).is_signed()
    assert not ms.Tensor([True]).is_signed()
