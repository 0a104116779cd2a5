"""The Python surface bound from the op declarations (msrt.ops._api)."""
import inspect

import numpy as np
import pytest

import msrt as ms
from msrt import ops
from msrt.ops import _api


def test_every_declared_form_is_bound():
    for form in _api.forms():
        for name in form["names"]:
            if form["kind"] == "function":
                fn = getattr(ops, name)
                assert f"(op '{form['op']}')" in fn.__doc__, name
            elif form["kind"] == "primitive":
                cls = getattr(ops, name)
                assert issubclass(cls, ops.Primitive), name
            else:
                assert callable(getattr(ms.Tensor, name)), name


def test_signatures_are_mindspores():
    assert str(inspect.signature(ops.mean)) == "(input, axis=None, keep_dims=False)"
    assert str(inspect.signature(ops.concat)) == "(tensors, axis=0)"
    assert str(inspect.signature(ops.gather)) == "(input_params, input_indices, axis, batch_dims=0)"
    assert str(inspect.signature(ops.ReduceMean)) == "(keep_dims=False)"
    assert str(inspect.signature(ops.ReduceMean.__call__)) == "(self, x, axis=())"
    assert str(inspect.signature(ms.Tensor.unsqueeze)) == "(self, dim)"


def test_keywords_defaults_and_aliases():
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(ops.mean(x, keep_dims=True, axis=1).asnumpy(), [[1.0], [4.0]])
    assert ops.cat is ops.concat or ops.cat.__name__ == "cat"
    np.testing.assert_array_equal(ops.cat([x, x], axis=0).asnumpy(), np.concatenate([x.asnumpy()] * 2))
    np.testing.assert_array_equal(x.unsqueeze(dim=0).shape, (1, 2, 3))
    with pytest.raises(TypeError):
        ops.mean(x, 1, False, True)  # too many arguments: Python's own error


def test_primitive_constructors_check_their_attributes_in_the_op():
    with pytest.raises(TypeError, match=r"\[reduce_mean\] attribute 'keep_dims' must be a bool"):
        ops.ReduceMean(keep_dims=1)
    prim = ops.ReduceMean(keep_dims=True)
    assert prim.keep_dims is True and prim.attrs["keep_dims"] is True
    x = ms.Tensor(np.ones((2, 3), np.float32))
    assert prim(x, 1).shape == (2, 1)


def test_unsupported_parameters_raise_unless_left_at_their_default():
    x = ms.Tensor(np.ones((2, 3), np.float32))
    i = ms.Tensor(np.array([0, 1], np.int32))
    assert ops.gather(x, i, 0, batch_dims=0).shape == (2, 3)
    with pytest.raises(NotImplementedError, match="'batch_dims'"):
        ops.gather(x, i, 0, batch_dims=1)
    with pytest.raises(NotImplementedError, match="'batch_dims'"):
        ops.Gather(batch_dims=1)


def test_scalars_follow_the_other_operand_only_for_elementwise_ops():
    x = ms.Tensor(np.array([1.0, 2.0], np.float16))
    assert ops.add(x, 1).dtype == ms.float16
    assert ops.add(1, x).dtype == ms.float16
    params = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(ops.gather(params, 1, 0).asnumpy(), [2.0, 3.0])  # index stays an integer
    with pytest.raises(TypeError, match="every input must be a Tensor"):
        ops.exp(1.0)


def test_numpy_values_are_converted_for_typed_attributes():
    x = ms.Tensor(np.ones((2, 3), np.float32))
    assert ops.reshape(x, np.array([3, 2])).shape == (3, 2)
    assert ops.expand_dims(x, np.int64(0)).shape == (1, 2, 3)
    assert ops.mean(x, axis=(np.int32(0),)).shape == (3,)


def test_defaults_converted_once_give_what_the_converted_argument_gives():
    # A parameter left at its default passes the default converted when the
    # form was made; any other value, equal or not, is converted at the call.
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.sum().shape == () and float(x.sum()) == 15.0
    assert x.sum(None).shape == ()  # the default object itself
    assert x.sum(axis=()).shape == ()
    np.testing.assert_array_equal(x.sum(axis=np.int64(1)).asnumpy(), [3.0, 12.0])
    assert x.sum(dtype=ms.float64).dtype == ms.float64 and x.sum().dtype == ms.float32
    np.testing.assert_array_equal(x.sum(initial=np.float32(1.0)).asnumpy(), 16.0)
    assert ops.mean(x).shape == () and ops.mean(x, keep_dims=True).shape == (1, 1)
    before = list(_api._CONVERTED_DEFAULTS)
    for _ in range(2):
        x.sum()
        ops.mean(x)
    assert _api._CONVERTED_DEFAULTS == before  # the shared converted values are not written


def test_parameters_at_the_ops_own_default_are_left_out_of_the_call(monkeypatch):
    # Note [Defaults left out]: a parameter at its default is not passed when
    # that default is the op's own; any other value is, and so is a default
    # that differs from the op's, and a Primitive's own attributes.
    from msrt import _tensor

    seen = []

    def spy(real):
        def call(op, bases, attrs):
            seen.append((op, dict(attrs)))
            return real(op, bases, attrs)
        return call

    monkeypatch.setattr(_tensor, "_call", spy(_tensor._call))
    monkeypatch.setattr(_tensor, "_call_any", spy(_tensor._call_any))
    x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert float(x.sum()) == 15.0
    assert seen[-1] == ("sum", {})
    np.testing.assert_array_equal(x.sum(axis=1, keepdims=True).asnumpy(), [[3.0], [12.0]])
    assert seen[-1] == ("sum", {"axis": 1, "keep_dims": True})
    assert x.sum(None, keepdims=False).shape == ()  # the default objects themselves
    assert seen[-1] == ("sum", {})
    assert x.sum([]).shape == ()  # an equal value given: passed, converted
    assert seen[-1] == ("sum", {"axis": []})
    assert int(ops.argmax(x)) == 5  # dim=None (every element) is not the op's axis -1
    assert seen[-1][0] == "argmax" and "axis" in seen[-1][1]
    assert ops.ReduceSum(keep_dims=True)(x).shape == (1, 1)
    assert seen[-1] == ("sum", {"keep_dims": True, "axis": []})


def test_a_name_written_by_hand_and_declared_is_an_error():
    namespace = {"mean": lambda *a: None}
    with pytest.raises(RuntimeError, match="'mean' is declared by op 'reduce_mean' and also written by hand"):
        _api.install_functions(namespace)

    class Fake:
        def exp(self):
            return None

    with pytest.raises(RuntimeError, match=r"Tensor\.exp"):
        _api.install_methods(Fake)


def test_losses_promote_python_scalars_like_their_input():
    x = ms.Tensor(np.array([0.5, 1.5], np.float16))
    for fn in (ops.mse_loss, ops.l1_loss, ops.binary_cross_entropy_with_logits):
        assert fn(x, 1.0).dtype == ms.float16, fn.__name__


def _form(op, params):
    """A form as `_C.op_api()` gives it, for binding checks of notation no op uses yet."""
    full = [{"target": p["name"], "binds": "attr", "required": True, "default": None, "keyword_only": False,
             "varargs": False, **p} for p in params]
    return {"op": op, "kind": "method", "names": ["f"], "params": full, "init": [], "returns": [], "doc": ""}


def test_star_parameters_take_the_remaining_positional_arguments():
    fn = _api._function(_form("reshape", [{"name": "self", "target": "x", "binds": "input"},
                                          {"name": "shape", "varargs": True}]), "f")
    assert str(inspect.signature(fn)) == "(self, *shape)"
    x = ms.Tensor(np.arange(6, dtype=np.float32))
    for args in [(2, 3), ((2, 3),), ([2, 3],), (np.array([2, 3]),), (ms.Tensor(np.array([2, 3])),)]:
        assert fn(x, *args).shape == (2, 3), args
    assert fn(x, -1).shape == (6,)
    with pytest.raises(TypeError, match="shape"):
        fn(x, 2.5, 2)


def test_scalar_attributes_keep_their_kind():
    assert _api._scalar_attr(np.int32(3)) == 3 and isinstance(_api._scalar_attr(np.int32(3)), int)
    assert isinstance(_api._scalar_attr(ms.Tensor(np.array(2.5, np.float32))), float)
    assert _api._scalar_attr(ms.Tensor(np.array([True]))) is True
    assert _api._scalar_attr(1.5) == 1.5


def test_optional_inputs_take_tensors_and_numbers_only_where_scalars_promote():
    x = ms.Tensor(np.array([-2.0, 0.5, 3.0], np.float32))
    np.testing.assert_array_equal(ops.clamp(x, max=1).asnumpy(), [-2.0, 0.5, 1.0])
    assert ops.clamp(x, min=0).dtype == ms.float32
    with pytest.raises(TypeError, match=r"For 'clamp', 'min' must be a Tensor, a number or None, but got list"):
        ops.clamp(x, min=[0.0, 0.0, 0.0])
    labels = ms.Tensor(np.array([0, 2, 1], np.int32))
    logits = ms.Tensor(np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError, match=r"For 'cross_entropy', 'weight' must be a Tensor or None, but got float"):
        ops.cross_entropy(logits, labels, weight=1.0)


def test_in_place_forms_return_the_objects_they_were_given():
    var = ms.Parameter(ms.Tensor(np.ones(3, np.float32)), name="var")
    assert ops.assign(var, ms.Tensor(np.full(3, 2.0, np.float32))) is var
    assert ops.AssignAdd()(var, 1.0) is var  # a scalar takes the variable's dtype
    np.testing.assert_array_equal(var.asnumpy(), [3.0, 3.0, 3.0])
    m = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="m")
    v = ms.Parameter(ms.Tensor(np.zeros(3, np.float32)), name="v")
    grad = ms.Tensor(np.ones(3, np.float32))
    out = ops.Adam()(var, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, grad)
    assert out[0] is var and out[1] is m and out[2] is v
    assert (var.asnumpy() < 3.0).all() and (m.asnumpy() > 0).all()
    assert str(inspect.signature(ops.ApplyMomentum)) == "(use_nesterov=False, use_locking=False, gradient_scale=1.0)"
    with pytest.raises(NotImplementedError, match="gradient_scale"):
        ops.ApplyMomentum(gradient_scale=0.5)


def test_shape_and_creation_forms_have_mindspores_signatures():
    sig = inspect.signature
    assert str(sig(ops.flatten)) == "(input, order='C', *, start_dim=1, end_dim=-1)"
    assert str(sig(ms.Tensor.flatten)) == "(self, order='C', *, start_dim=0, end_dim=-1)"
    assert str(sig(ops.strided_slice)) == ("(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, "
                                           "new_axis_mask=0, shrink_axis_mask=0)")
    assert str(sig(ops.StridedSlice)) == ("(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, "
                                          "shrink_axis_mask=0)")
    assert str(sig(ops.StridedSlice.__call__)) == "(self, input_x, begin, end, strides)"
    assert str(sig(ops.slice)) == "(input_x, begin, size)"
    assert str(sig(ops.Slice.__call__)) == "(self, input_x, begin, size)"
    assert str(sig(ops.one_hot)) == "(indices, depth, on_value=1, off_value=0, axis=-1)"
    assert str(sig(ops.OneHot)) == "(axis=-1)"
    assert str(sig(ops.OneHot.__call__)) == "(self, indices, depth, on_value, off_value)"
    assert str(sig(ops.tile)) == "(input, dims)"
    assert str(sig(ops.Tile.__call__)) == "(self, input_x, multiples)"
    assert str(sig(ops.fill)) == "(type, shape, value)"
    assert str(sig(ops.Fill.__call__)) == "(self, type, shape, value)"
    assert str(sig(ops.Fills.__call__)) == "(self, x, value)"
    assert str(sig(ops.zeros)) == "(size, dtype=None)"
    assert str(sig(ops.ones)) == "(shape, dtype=None)"
    assert str(sig(ops.Zeros.__call__)) == "(self, size, type=None)"
    assert str(sig(ops.Ones.__call__)) == "(self, size, type=None)"
    assert str(sig(ops.zeros_like)) == "(input, *, dtype=None)"
    assert str(sig(ops.ones_like)) == "(input, *, dtype=None)"
    assert str(sig(ops.full_like)) == "(input, fill_value, *, dtype=None)"
    assert str(sig(ops.arange)) == "(start=0, end=None, step=1, *, dtype=None)"
    assert str(sig(ops.eye)) == "(n, m=None, dtype=None)"
    for name, text in [("reshape", "(self, *shape)"), ("view", "(self, *shape)"), ("permute", "(self, *axis)"),
                       ("transpose", "(self, *axes)"), ("tile", "(self, *reps)")]:
        assert str(sig(getattr(ms.Tensor, name))) == text, name


def test_shape_forms_keep_mindspores_behaviour():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = ms.Tensor(a)
    assert x.flatten().shape == (24,) and x.flatten(start_dim=1).shape == (2, 12)
    with pytest.raises(NotImplementedError, match="'ellipsis_mask'"):
        ops.strided_slice(x, (0,), (1,), (1,), ellipsis_mask=1)
    with pytest.raises(NotImplementedError, match="'new_axis_mask'"):
        ops.StridedSlice(new_axis_mask=1)
    parts = ops.split(x, 2)  # one part: still a tuple
    assert isinstance(parts, tuple) and len(parts) == 1 and parts[0].shape == (2, 3, 4)
    assert isinstance(x.split(3, axis=1), tuple) and len(x.split((1, 3), axis=2)) == 2
    np.testing.assert_array_equal(ops.split(x, np.array([1, 1]))[1].asnumpy(), a[1:])
    np.testing.assert_array_equal(ops.tile(x, ms.Tensor(np.array([2, 1]))).asnumpy(), np.tile(a, (2, 1)))
    assert ops.zeros(ms.Tensor(np.array([2, 3])), ms.int8).dtype == ms.int8
    assert ops.one_hot([1, 0], 2).dtype == ms.int64  # array-like indices among several inputs
    np.testing.assert_array_equal(ops.arange(1, 2.0, 0.25).asnumpy(), np.arange(1, 2.0, 0.25, dtype=np.float32))
    assert ops.eye(2, 3, ms.int32).dtype == ms.int32
    assert ops.arange(ms.Tensor(3)).dtype == ms.int64 and ops.arange(ms.Tensor(3.0)).dtype == ms.float32
    np.testing.assert_array_equal(ops.full_like(x, ms.Tensor(np.float32(2.5))).asnumpy(), np.full(a.shape, 2.5))


def test_shape_methods_take_their_sizes_as_arguments_or_one_sequence():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = ms.Tensor(a)
    for args in [(4, 6), ((4, 6),), ([4, -1],)]:
        assert x.reshape(*args).shape == (4, 6) and x.view(*args).shape == (4, 6)
    with pytest.raises(TypeError, match="shape"):
        x.view(ms.float32)
    np.testing.assert_array_equal(x.transpose().asnumpy(), a.transpose())
    np.testing.assert_array_equal(x.transpose(None).asnumpy(), a.transpose())
    np.testing.assert_array_equal(x.transpose(1, 0, 2).asnumpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(x.transpose((2, 0, 1)).asnumpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.permute(2, 1, 0).asnumpy(), a.transpose(2, 1, 0))
    np.testing.assert_array_equal(x.permute([0, 2, 1]).asnumpy(), a.transpose(0, 2, 1))
    with pytest.raises(ValueError, match="transpose"):
        x.transpose(0, 0, 1)
    np.testing.assert_array_equal(x.tile(2, 1).asnumpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(x.tile((2,)).asnumpy(), np.tile(a, 2))


def test_split_forms_always_return_a_tuple_and_take_numpy_sections():
    x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(2, 6))
    for parts in (ops.split(x, 6, axis=1), x.split(6, 1), ops.Split(axis=0, output_num=1)(x)):
        assert isinstance(parts, tuple) and len(parts) == 1
    parts = ops.split(x, np.array([1, 5]), axis=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 5)]
    assert x.transpose(np.int64(1), 0).shape == (6, 2)


def test_shape_attributes_take_ints_in_every_container_and_refuse_the_rest():
    x = ms.Tensor(np.arange(6, dtype=np.float32))
    shape = [2, 3]
    for given in ((2, 3), shape, [np.int64(2), 3], np.array([2, 3]), ms.Tensor(np.array([2, 3]))):
        assert x.reshape(given).shape == (2, 3)
        assert ops.reshape(x, given).shape == (2, 3)
    assert x.reshape(3, 2).shape == (3, 2)
    assert shape == [2, 3]  # the caller's list is not changed
    with pytest.raises(TypeError):
        x.reshape([2, True])
    with pytest.raises(TypeError):
        x.reshape((2, 3.0))
    # Two Tensors, one Tensor, and other inputs (scalars, arrays) all reach the op.
    np.testing.assert_array_equal(ops.add(x, x).asnumpy(), 2 * np.arange(6))
    np.testing.assert_array_equal(ops.add(x, 1).asnumpy(), np.arange(6) + 1)
    np.testing.assert_array_equal(ops.relu(x - 2).asnumpy(), np.maximum(np.arange(6) - 2, 0))
    with pytest.raises(TypeError, match="must be a Tensor"):
        ops.relu([1.0])
