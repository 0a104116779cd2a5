"""The op call binding (`_C.call`): the op is found by its name's str object
(Note [Op lookup cache] in bind_tensor.cc); whatever string names it, the
call runs that op, unknown names raise every time, and arguments are read
as before."""
import numpy as np
import pytest

import msrt as ms

_C = ms._C


def base(values, dtype=np.float32):
    return _C.TensorBase(np.asarray(values, dtype))


def run(name, *inputs, attrs=None):
    return [o.asnumpy().copy() for o in _C.call(name, list(inputs), attrs or {})]


def test_names_built_at_run_time_call_their_own_op():
    x, y = base([1.0, 2.0, 3.0]), base([4.0, 5.0, 6.0])
    want = {"add": [5.0, 7.0, 9.0], "mul": [4.0, 10.0, 18.0], "sub": [-3.0, -3.0, -3.0]}
    # New str objects every call, dropped at once: an address freed by one
    # name is reused by the next, and more names than the cache keeps pass.
    for i in range(6000):
        op = ("add", "mul", "sub")[i % 3]
        name = "".join(list(op))
        (out,) = _C.call(name, [x, y], {})
        if i % 500 < 3:
            np.testing.assert_array_equal(out.asnumpy(), want[op])
    for op, values in want.items():
        np.testing.assert_array_equal(run(op, x, y)[0], values)


def test_a_str_subclass_names_an_op():
    class Name(str):
        pass

    x = base([1.0, -2.0])
    np.testing.assert_array_equal(run(Name("relu"), x)[0], [1.0, 0.0])
    np.testing.assert_array_equal(run(Name("neg"), x)[0], [-1.0, 2.0])


def test_an_unknown_op_raises_on_every_call():
    x = base([1.0])
    for _ in range(3):
        with pytest.raises(ValueError, match=r"There is no op named 'ad_d'\. Did you mean 'add'\?"):
            _C.call("ad_d", [x, x], {})
    np.testing.assert_array_equal(run("add", x, x)[0], [2.0])


def test_argument_errors_keep_their_order():
    x = base([1.0])
    with pytest.raises(TypeError, match="'op' must be a str, but got int"):
        _C.call(3, [x], {})
    # The inputs and attributes are checked before the name is looked up.
    with pytest.raises(TypeError, match="'inputs' must be a list of TensorBase, but got str"):
        _C.call("no_such_op", "xy", {})
    with pytest.raises(TypeError, match="'attrs' must be a dict"):
        _C.call("add", [x, x], [])
    with pytest.raises(TypeError, match="add.*takes 2 inputs, but got 1"):
        _C.call("add", [x], {})


def test_keywords_attributes_and_promotion():
    x, y = base([1.0, 2.0]), base([3, 4], np.int32)
    (out,) = _C.call(op="add", inputs=[x, y], attrs={})
    assert out.dtype_name == "float32"
    np.testing.assert_array_equal(out.asnumpy(), [4.0, 6.0])
    (out,) = _C.call("add", inputs=[y, y])
    assert out.dtype_name == "int32"
    (total,) = _C.call("reduce_sum", [base([[1.0, 2.0], [3.0, 4.0]])], {"axis": [1], "keep_dims": True})
    np.testing.assert_array_equal(total.asnumpy(), [[3.0], [7.0]])
    (total,) = _C.call("reduce_sum", [base([[1.0, 2.0], [3.0, 4.0]])], {})
    np.testing.assert_array_equal(total.asnumpy(), 10.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'name'"):
        _C.call(name="add", inputs=[x, x])


def test_call1_returns_the_one_output_and_refuses_ops_of_several():
    out = _C.call1("add", (base([1, 2]), base([3, 4])), {})
    assert isinstance(out, _C.TensorBase)
    np.testing.assert_array_equal(out.asnumpy(), [4, 6])
    np.testing.assert_array_equal(_C.call1(op="neg", inputs=[base([1])]).asnumpy(), [-1])
    with pytest.raises(TypeError, match="call1.*'split' gave 2 outputs"):
        _C.call1("split", [base([1, 2, 3, 4])], {"axis": 0, "output_num": 2})
    with pytest.raises(TypeError, match="call1\\(\\) got an unexpected keyword argument 'x'"):
        _C.call1("neg", [base([1])], x=1)


def test_outputs_pass_to_bindings_like_any_tensor_base():
    # Note [Wrapping op outputs]: outputs are not in pybind11's instance registry; bindings read them all the same.
    import gc
    import weakref

    out = _C.call1("neg", [base([1.0, 2.0])], {})
    other = _C.TensorBase(out)  # a binding taking a Tensor reference
    assert other._same(out) and out._same(other) and other is not out
    np.testing.assert_array_equal(_C.call1("add", (out, other), {}).asnumpy(), [-2, -4])
    ref = weakref.ref(out)
    del out
    gc.collect()
    assert ref() is None
    np.testing.assert_array_equal(other.asnumpy(), [-1, -2])


def test_call_any_returns_one_output_itself_and_several_as_a_list():
    out = _C.call_any("add", (base([1, 2]), base([3, 4])), {})
    assert type(out) is _C.TensorBase
    np.testing.assert_array_equal(out.asnumpy(), [4, 6])
    halves = _C.call_any("split", [base([1, 2, 3, 4])], {"axis": 0, "output_num": 2})
    assert type(halves) is list and [h.asnumpy().tolist() for h in halves] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="call_any\\(\\) got an unexpected keyword argument 'x'"):
        _C.call_any("neg", [base([1])], x=1)
    with pytest.raises(ValueError):
        _C.call_any("no_such_op", [base([1])], {})


def test_generated_op_functions_give_tensors_and_tuples_as_before():
    x = ms.Tensor(np.array([1.0, -2.0, 3.0, 4.0], np.float32))
    assert type(ms.ops.relu(x)) is ms.Tensor
    np.testing.assert_array_equal(ms.ops.relu(x).asnumpy(), [1, 0, 3, 4])
    parts = ms.ops.split(x, 2)
    assert type(parts) is tuple and [p.asnumpy().tolist() for p in parts] == [[1, -2], [3, 4]]
    np.testing.assert_array_equal(x.add(x, alpha=2).asnumpy(), [3, -6, 9, 12])
    np.testing.assert_array_equal(x.add(x).asnumpy(), [2, -4, 6, 8])


def test_outputs_own_their_tensors_and_free_them_when_dropped():
    # Note [Wrapping op outputs]: each output is a TensorBase of its own, kept alive by Python alone.
    import gc
    import weakref

    a = base(np.arange(1 << 16))  # 256 KiB of float32: above the small pieces the pool keeps aside
    _C.synchronize()
    before = ms.runtime.memory_allocated()
    outs = [_C.call1("neg", [a], {}) for _ in range(4)] + _C.call("add", [a, a], {})
    assert all(type(o) is _C.TensorBase for o in outs)
    assert len({id(o) for o in outs}) == 5
    refs = [weakref.ref(o) for o in outs]
    _C.synchronize()
    assert ms.runtime.memory_allocated() >= before + 5 * (1 << 18)
    del a  # the outputs do not need it
    np.testing.assert_array_equal(outs[0].asnumpy(), -np.arange(1 << 16))
    np.testing.assert_array_equal(outs[4].asnumpy(), 2 * np.arange(1 << 16))
    del outs
    gc.collect()
    _C.synchronize()
    assert all(r() is None for r in refs)
    assert ms.runtime.memory_allocated() <= before - (1 << 18)  # the input went too


def test_sequence_attributes_convert_alike_whatever_their_type():
    class Shape(list):
        pass

    x = base(np.arange(6))
    for shape in ([2, 3], (2, 3), Shape([2, 3]), [2, -1], (-1, 3)):
        out = _C.call1("reshape", (x,), {"shape": shape})
        assert out.shape == (2, 3)
        np.testing.assert_array_equal(out.asnumpy(), np.arange(6).reshape(2, 3))
    with pytest.raises(TypeError, match="shape"):
        _C.call1("reshape", (x,), {"shape": [2, "3"]})
    assert ms.ops.transpose(ms.Tensor(np.zeros((2, 3, 4))), (2, 0, 1)).shape == (4, 2, 3)
