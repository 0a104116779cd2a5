"""ms.Tensor: construction, attributes, printing, operators, indexing, methods."""
import copy
import pickle

import numpy as np
import pytest

import msrt as ms


def arr(t):
    return np.asarray(t.asnumpy())


# --- construction ---------------------------------------------------------------
@pytest.mark.parametrize("data, dtype, shape", [
    (1.5, ms.float32, ()),
    (3, ms.int64, ()),
    (True, ms.bool_, ()),
    ([1.0, 2.0], ms.float32, (2,)),
    ([1, 2, 3], ms.int64, (3,)),
    ([1, 2.5], ms.float32, (2,)),
    ([True, False], ms.bool_, (2,)),
    ((1, 2), ms.int64, (2,)),
    ([[1, 2], [3, 4]], ms.int64, (2, 2)),
    (np.zeros((2, 3), np.float64), ms.float64, (2, 3)),
    (np.zeros((2,), np.int32), ms.int32, (2,)),
    (np.float32(2.0), ms.float32, ()),
    (np.float64(2.5), ms.float64, ()),  # a NumPy scalar keeps its dtype, though numpy.float64 is a float
    (np.int32(-4), ms.int32, ()),
    (np.bool_(True), ms.bool_, ()),
])
def test_default_dtypes_follow_mindspore_2(data, dtype, shape):
    t = ms.Tensor(data)
    assert t.dtype == dtype and t.shape == shape
    np.testing.assert_array_equal(arr(t), np.asarray(data))


def test_explicit_dtype_converts():
    t = ms.Tensor([1.7, 2.2], ms.int32)
    assert t.dtype == ms.int32
    np.testing.assert_array_equal(arr(t), [1, 2])
    assert ms.Tensor(1, ms.float16).dtype == ms.float16
    assert ms.Tensor(np.ones(2), dtype=ms.float32).dtype == ms.float32
    b = ms.Tensor([1.5, 2.25], ms.bfloat16)
    assert b.dtype == ms.bfloat16
    np.testing.assert_array_equal(arr(b), [1.5, 2.25])


def test_tensor_from_tensor_shares_data_and_casts_on_request():
    a = ms.Tensor(np.zeros(3, np.float32))
    b = ms.Tensor(a)
    ms.ops.assign(a, ms.Tensor(np.ones(3, np.float32)))
    np.testing.assert_array_equal(arr(b), [1, 1, 1])
    c = ms.Tensor(a, ms.int32)
    assert c.dtype == ms.int32


def test_non_contiguous_arrays_and_shape_only():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ms.Tensor(base.T)
    np.testing.assert_array_equal(arr(t), base.T)
    z = ms.Tensor(shape=(2, 2), dtype=ms.int32)
    np.testing.assert_array_equal(arr(z), np.zeros((2, 2)))
    assert ms.Tensor(np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_construction_errors():
    with pytest.raises(TypeError):
        ms.Tensor(object())
    with pytest.raises(TypeError, match="numbers or bools"):
        ms.Tensor(["a", "b"])
    with pytest.raises(ValueError, match="shape"):
        ms.Tensor([1.0], shape=(1,))
    with pytest.raises(TypeError, match="can not be None"):
        ms.Tensor()


def test_asnumpy_is_zero_copy():
    t = ms.Tensor(np.arange(4, dtype=np.float32))
    a = t.asnumpy()
    b = t.asnumpy()
    assert np.shares_memory(a, b)
    np.testing.assert_array_equal(np.asarray(t), [0, 1, 2, 3])
    assert t.numpy().dtype == np.float32


# --- attributes -----------------------------------------------------------------
def test_attributes():
    t = ms.Tensor(np.zeros((2, 3, 4), np.float32))
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3 and t.size == 24 and t.numel() == 24
    assert t.itemsize == 4 and t.nbytes == 96 and t.strides == (48, 16, 4) and t.stride() == (12, 4, 1)
    assert t.T.shape == (4, 3, 2)
    assert len(t) == 2
    assert ms.Tensor(np.zeros((2, 3), np.int16)).itemsize == 2


def test_repr_and_str_like_mindspore():
    t = ms.Tensor(np.array([[1, 2], [3, 4]], np.float32))
    assert repr(t) == ("Tensor(shape=[2, 2], dtype=Float32, value=\n"
                       "[[ 1.00000000e+00,  2.00000000e+00],\n"
                       " [ 3.00000000e+00,  4.00000000e+00]])")
    assert str(t) == "[[1. 2.]\n [3. 4.]]"
    assert repr(ms.Tensor([1, 2, 3])) == "Tensor(shape=[3], dtype=Int64, value= [1, 2, 3])"
    assert repr(ms.Tensor(2.0)) == "Tensor(shape=[], dtype=Float32, value= 2)"
    assert repr(ms.Tensor(2.5)) == "Tensor(shape=[], dtype=Float32, value= 2.5)"
    assert repr(ms.Tensor(True)) == "Tensor(shape=[], dtype=Bool, value= True)"
    assert f"{ms.Tensor(0.5):.2f}" == "0.50"


def test_python_conversions():
    assert float(ms.Tensor([2.5])) == 2.5
    assert int(ms.Tensor(7)) == 7
    assert bool(ms.Tensor([True])) is True
    assert ms.Tensor(3.0).item() == 3.0 and isinstance(ms.Tensor(3).item(), int)
    assert ms.Tensor([[1, 2]]).tolist() == [[1, 2]]
    assert [1, 2, 3][ms.Tensor(1)] == 2
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ms.Tensor([1, 2]))
    with pytest.raises(ValueError, match="only one element"):
        ms.Tensor([1, 2]).item()
    with pytest.raises(TypeError, match="len"):
        len(ms.Tensor(1.0))
    with pytest.raises(TypeError):
        [1, 2][ms.Tensor(1.0)]


def test_hash_copy_pickle_and_iteration():
    t = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert {t: 1}[t] == 1
    c = copy.deepcopy(t)
    ms.ops.assign(t, ms.Tensor(np.zeros((3, 2), np.float32)))
    np.testing.assert_array_equal(arr(c), np.arange(6).reshape(3, 2))
    u = pickle.loads(pickle.dumps(c))
    np.testing.assert_array_equal(arr(u), arr(c))
    assert u.dtype == ms.float32
    rows = list(c)
    assert len(rows) == 3 and rows[1].shape == (2,)
    np.testing.assert_array_equal(arr(rows[2]), [4, 5])
    a, b = ms.Tensor([1.0, 2.0])
    assert float(a) == 1.0 and float(b) == 2.0


# --- operators ------------------------------------------------------------------
BINARY = [
    ("__add__", np.add), ("__sub__", np.subtract), ("__mul__", np.multiply), ("__truediv__", np.true_divide),
    ("__pow__", np.power), ("__radd__", lambda a, b: b + a), ("__rsub__", lambda a, b: b - a),
    ("__rmul__", lambda a, b: b * a), ("__rtruediv__", lambda a, b: b / a),
]


@pytest.mark.parametrize("method, ref", BINARY)
def test_binary_operators_with_tensors_and_broadcasting(method, ref):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, size=(3, 1, 4)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, size=(2, 4)).astype(np.float32)
    out = getattr(ms.Tensor(a), method)(ms.Tensor(b))
    assert out.shape == (3, 2, 4) and out.dtype == ms.float32
    np.testing.assert_allclose(arr(out), ref(a, b), rtol=1e-5)


@pytest.mark.parametrize("method, ref", BINARY)
def test_binary_operators_with_python_scalars(method, ref):
    a = np.array([0.5, 1.0, 2.0], np.float32)
    out = getattr(ms.Tensor(a), method)(2)
    assert out.dtype == ms.float32
    np.testing.assert_allclose(arr(out), ref(a, np.float32(2)), rtol=1e-6)


def test_scalars_take_the_tensor_s_dtype():
    f16 = ms.Tensor(np.ones(2, np.float16))
    assert (f16 + 1.5).dtype == ms.float16
    assert (2.0 * f16).dtype == ms.float16
    i32 = ms.Tensor(np.array([1, 2], np.int32))
    assert (i32 + 1).dtype == ms.int32
    assert (i32 * 2.5).dtype == ms.float32
    np.testing.assert_allclose(arr(i32 * 2.5), [2.5, 5.0])
    assert (i32 / 2).dtype == ms.float32  # true division
    np.testing.assert_allclose(arr(i32 / 2), [0.5, 1.0])
    assert (i32 + True).dtype == ms.int32
    b = ms.Tensor([True, False])
    assert (b + 1).dtype == ms.int64
    assert (ms.Tensor(np.ones(2, np.float64)) + 1).dtype == ms.float64


def test_tensor_dtypes_promote():
    a = ms.Tensor(np.ones(2, np.int32))
    b = ms.Tensor(np.ones(2, np.float32))
    assert (a + b).dtype == ms.float32
    assert (ms.Tensor(np.ones(2, np.float16)) + b).dtype == ms.float32


def test_numpy_operands():
    t = ms.Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(arr(t + np.array([1.0, 1.0], np.float32)), [2, 3])
    out = np.array([1.0, 1.0], np.float32) + t
    assert isinstance(out, ms.Tensor)
    np.testing.assert_allclose(arr(out), [2, 3])
    np.testing.assert_allclose(arr(t * [2.0, 3.0]), [2, 6])


def test_unary_operators():
    t = ms.Tensor(np.array([-1.5, 2.0], np.float32))
    np.testing.assert_array_equal(arr(-t), [1.5, -2.0])
    np.testing.assert_array_equal(arr(abs(t)), [1.5, 2.0])
    assert +t is t
    b = ms.Tensor([True, False])
    np.testing.assert_array_equal(arr(~b), [False, True])
    np.testing.assert_array_equal(arr(b & ms.Tensor([True, True])), [True, False])
    np.testing.assert_array_equal(arr(b | ms.Tensor([False, False])), [True, False])
    np.testing.assert_array_equal(arr(b ^ ms.Tensor([True, True])), [False, True])
    with pytest.raises(TypeError, match="bool"):
        ~t


def test_matmul_operator():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(arr(ms.Tensor(a) @ ms.Tensor(b)), a @ b)
    batch = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(arr(ms.Tensor(batch) @ ms.Tensor(b.T)), batch @ b.T)
    v = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(arr(ms.Tensor(a) @ ms.Tensor(v)), a @ v)
    np.testing.assert_allclose(arr(ms.Tensor(v) @ ms.Tensor(b)), v @ b)


@pytest.mark.parametrize("method, ref", [
    ("__lt__", np.less), ("__le__", np.less_equal), ("__gt__", np.greater), ("__ge__", np.greater_equal),
    ("__eq__", np.equal), ("__ne__", np.not_equal),
])
def test_comparisons_are_elementwise(method, ref):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([2.0, 2.0, 2.0], np.float32)
    out = getattr(ms.Tensor(a), method)(ms.Tensor(b))
    assert out.dtype == ms.bool_
    np.testing.assert_array_equal(arr(out), ref(a, b))
    np.testing.assert_array_equal(arr(getattr(ms.Tensor(a), method)(2)), ref(a, 2))


def test_equality_with_other_objects():
    t = ms.Tensor([1.0])
    assert (t == None) is False  # noqa: E711 - MindSpore's behaviour
    assert (t != "a") is True
    assert t in [t]


def test_unsupported_operands_raise_type_error():
    with pytest.raises(TypeError):
        ms.Tensor([1.0]) + "a"
    with pytest.raises(TypeError):
        ms.Tensor([1.0]) < None


def test_inplace_operators_rebind():
    t = ms.Tensor(np.ones(2, np.float32))
    alias = t
    t += 1
    np.testing.assert_array_equal(arr(t), [2, 2])
    np.testing.assert_array_equal(arr(alias), [1, 1])


# --- indexing -------------------------------------------------------------------
X = np.arange(120, dtype=np.float32).reshape(4, 5, 6)

INDEXES = [
    1, -1, (2,), (1, 2), (-1, -2, -3), slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(-10, 10),
    (slice(None), 2), (Ellipsis, 1), (1, Ellipsis), (None, 1), (slice(None), None, slice(1, 4, 2)),
    (Ellipsis, None), (slice(3, 0, -2), slice(None), slice(5, None, -3)), (0, 0, 0), slice(2, 2),
    [0, 2], [[0, 1], [2, 3]], ([0, 1], [1, 2]), ([0, 1], slice(None), [1, 2]), (slice(None), [0, -1]),
    (1, [0, 2]), (1, slice(None), [0, 2]), ([[0], [1]], [1, 2]), (slice(1, 3), [0, 4], slice(None, 2)),
    np.array([3, 0]), (Ellipsis, [1, 0]),
]


@pytest.mark.parametrize("index", INDEXES, ids=[repr(i) for i in INDEXES])
def test_getitem_matches_numpy(index):
    t = ms.Tensor(X)
    out = t[index]
    expected = X[index]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(arr(out), expected)


def test_getitem_with_tensors_and_masks():
    t = ms.Tensor(X)
    np.testing.assert_array_equal(arr(t[ms.Tensor([2, 0])]), X[[2, 0]])
    np.testing.assert_array_equal(arr(t[ms.Tensor(np.array([1, 3], np.int32))]), X[[1, 3]])
    np.testing.assert_array_equal(arr(t[:, ms.Tensor([0, 4])]), X[:, [0, 4]])
    mask = X[:, 0, 0] > 50
    np.testing.assert_array_equal(arr(t[ms.Tensor(mask)]), X[mask])
    np.testing.assert_array_equal(arr(t[[True, False, True, False]]), X[[True, False, True, False]])
    m2 = X[..., 0] % 4 == 0
    np.testing.assert_array_equal(arr(t[m2]), X[m2])
    np.testing.assert_array_equal(arr(t[ms.Tensor(1)]), X[1])


def test_getitem_errors():
    t = ms.Tensor(X)
    with pytest.raises(IndexError, match="out of bounds"):
        t[4]
    with pytest.raises(IndexError, match="out of bounds"):
        t[0, -7]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError):
        t["a"]
    with pytest.raises(IndexError, match="out of bounds"):
        t[[0, 9]]
    with pytest.raises(ValueError):
        t[::0]


SET_INDEXES = [1, (1, 2), slice(1, 3), (slice(None), 0), (Ellipsis, slice(None, None, 2)), [0, 3], (1, [0, 2]),
               (X[:, 0, 0] > 50)]


@pytest.mark.parametrize("index", SET_INDEXES, ids=[repr(i) for i in SET_INDEXES])
def test_setitem_matches_numpy(index):
    t = ms.Tensor(X.copy())
    expected = X.copy()
    t[index] = -1.0
    expected[index] = -1.0
    np.testing.assert_array_equal(arr(t), expected)
    values = np.arange(expected[index].size, dtype=np.float32).reshape(expected[index].shape) + 1000
    t[index] = ms.Tensor(values)
    expected[index] = values
    np.testing.assert_array_equal(arr(t), expected)


def test_setitem_broadcasts_casts_and_writes_in_place():
    t = ms.Tensor(np.zeros((3, 4), np.float32))
    alias = ms.Tensor(t)
    t[1] = ms.Tensor(np.arange(4, dtype=np.int64))
    t[:, 0] = 7
    t[2:] = ms.Tensor(np.array([1.0, 2.0, 3.0, 4.0]))
    expected = np.zeros((3, 4), np.float32)
    expected[1] = np.arange(4)
    expected[:, 0] = 7
    expected[2:] = [1, 2, 3, 4]
    np.testing.assert_array_equal(arr(alias), expected)
    assert t.dtype == ms.float32
    with pytest.raises(ValueError, match="broadcast"):
        t[0] = ms.Tensor(np.ones(3, np.float32))


@pytest.mark.parametrize("index", [0, -1, 2, slice(1, 3), slice(None, None, -2), slice(-2, None), slice(3, 1),
                                   slice(1, 100)], ids=repr)
@pytest.mark.parametrize("value", [5, -2.5, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_setitem_of_a_scalar_on_the_first_dimension_matches_numpy(index, value, dtype):
    # x[i] = v and x[a:b] = v with a Python scalar take a short path (a cached mask); the result is NumPy's
    # after the scalar takes the tensor's dtype as the general path gives it.
    base = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    t = ms.Tensor(base.copy())
    alias = ms.Tensor(t)
    expected = base.copy()
    general = ms.Tensor(base.copy())
    general[(index,)] = value  # a tuple index: the general path
    t[index] = value
    expected[index] = arr(ms.Tensor(np.asarray([value])).astype(ms.Tensor(base).dtype))[0]
    np.testing.assert_array_equal(arr(alias), expected)
    np.testing.assert_array_equal(arr(t), arr(general))
    assert t.dtype == ms.Tensor(base).dtype


def test_setitem_short_path_masks_follow_the_shape_and_index():
    a = ms.Tensor(np.zeros((3, 2), np.float32))
    b = ms.Tensor(np.zeros((2, 3), np.float32))
    c = ms.Tensor(np.zeros(3, np.float32))
    for t in (a, b, c):
        t[1] = 1.0
        t[-1] = 2.0
    np.testing.assert_array_equal(arr(a), [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(arr(b), [[0, 0, 0], [2, 2, 2]])
    np.testing.assert_array_equal(arr(c), [0, 1, 2])
    c[0:3:2] = 9
    np.testing.assert_array_equal(arr(c), [9, 1, 9])
    with pytest.raises(IndexError):
        c[3] = 1.0
    with pytest.raises(ValueError):
        c[::0] = 1.0
    np.testing.assert_array_equal(arr(c), [9, 1, 9])


def test_getitem_short_paths_keep_gradients_and_numpy_ints():
    x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(arr(x[np.int64(2)]), arr(x)[2])
    np.testing.assert_array_equal(arr(x[np.int32(-3)]), arr(x)[0])
    whole = x[:]
    assert whole is not x
    np.testing.assert_array_equal(arr(whole), arr(x))
    grad = ms.grad(lambda t: (t[1:3] * 2).sum() + t[0].sum() + t[::-2].sum())(x)
    expected = np.zeros((3, 4), np.float32)
    expected[1:3] += 2
    expected[0] += 1
    expected[::-2] += 1
    np.testing.assert_array_equal(arr(grad), expected)


# --- methods --------------------------------------------------------------------
def test_shape_methods():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ms.Tensor(a)
    np.testing.assert_array_equal(arr(t.reshape(6, 4)), a.reshape(6, 4))
    np.testing.assert_array_equal(arr(t.reshape((4, -1))), a.reshape(4, -1))
    np.testing.assert_array_equal(arr(t.view(-1)), a.reshape(-1))
    np.testing.assert_array_equal(arr(t.transpose()), a.transpose())
    np.testing.assert_array_equal(arr(t.transpose(1, 0, 2)), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(arr(t.transpose((2, 0, 1))), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(arr(t.permute(2, 1, 0)), a.transpose(2, 1, 0))
    np.testing.assert_array_equal(arr(t.swapaxes(0, 2)), a.swapaxes(0, 2))
    assert t.flatten().shape == (24,)
    assert t.flatten(start_dim=1).shape == (2, 12)
    assert t.ravel().shape == (24,)
    assert t.expand_dims(1).shape == (2, 1, 3, 4) and t.unsqueeze(-1).shape == (2, 3, 4, 1)
    assert ms.Tensor(np.zeros((1, 3, 1))).squeeze().shape == (3,)
    assert ms.Tensor(np.zeros((1, 3, 1))).squeeze(0).shape == (3, 1)
    assert ms.Tensor(np.zeros((1, 3, 1))).squeeze((0, 2)).shape == (3,)
    assert ms.Tensor(np.zeros((3, 1))).broadcast_to((2, 3, 5)).shape == (2, 3, 5)
    np.testing.assert_array_equal(arr(ms.Tensor([[1, 2]]).tile((2, 2))), np.tile([[1, 2]], (2, 2)))
    assert t.mT.shape == (2, 4, 3)


def test_reduction_methods():
    a = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    t = ms.Tensor(a)
    np.testing.assert_allclose(arr(t.sum()), a.sum(), rtol=1e-5)
    np.testing.assert_allclose(arr(t.sum(axis=1)), a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(arr(t.sum(axis=0, keepdims=True)), a.sum(axis=0, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(arr(t.mean(1)), a.mean(1), rtol=1e-5)
    np.testing.assert_allclose(arr(t.mean((0, 1), keep_dims=True)), a.mean(keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(arr(t.max()), a.max())
    np.testing.assert_allclose(arr(t.min(axis=0)), a.min(axis=0))
    values, index = t.max(axis=1, return_indices=True)
    np.testing.assert_array_equal(arr(index), a.argmax(1))
    np.testing.assert_array_equal(arr(t.argmax()), a.argmax())
    np.testing.assert_array_equal(arr(t.argmax(axis=1)), a.argmax(axis=1))
    np.testing.assert_array_equal(arr(t.argmin(0)), a.argmin(0))
    np.testing.assert_allclose(arr(t.prod(0)), a.prod(0), rtol=1e-5)
    assert ms.Tensor([True, True, False]).sum().item() == 2
    assert bool(ms.Tensor([True, True]).all()) and not bool(ms.Tensor([False, False]).any())
    assert ms.Tensor([[1.0, 0.0]]).all(axis=1).shape == (1,)


def test_elementwise_methods():
    a = np.array([0.5, 1.0, 4.0], np.float32)
    t = ms.Tensor(a)
    for name, ref in [("abs", np.abs), ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt),
                      ("square", np.square), ("neg", np.negative), ("reciprocal", np.reciprocal),
                      ("rsqrt", lambda x: 1 / np.sqrt(x)), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
                      ("tanh", np.tanh), ("sign", np.sign)]:
        np.testing.assert_allclose(arr(getattr(t, name)()), ref(a), rtol=1e-5, err_msg=name)
    np.testing.assert_allclose(arr(t.pow(2)), a ** 2)
    np.testing.assert_allclose(arr(t.clip(1.0, 2.0)), np.clip(a, 1, 2))
    np.testing.assert_allclose(arr(t.add(1)), a + 1)
    np.testing.assert_allclose(arr(t.maximum(ms.Tensor(np.ones(3, np.float32)))), np.maximum(a, 1))


def test_astype_copy_and_conversions():
    t = ms.Tensor(np.array([1.7, -2.2], np.float32))
    assert t.astype(ms.int32).dtype == ms.int32
    assert t.astype(np.float16).dtype == ms.float16
    assert t.astype("float64").dtype == ms.float64
    assert t.astype(ms.float32, copy=False) is t
    assert t.float().dtype == ms.float32 and t.half().dtype == ms.float16 and t.int().dtype == ms.int32
    assert t.long().dtype == ms.int64 and t.bool().dtype == ms.bool_ and t.double().dtype == ms.float64
    c = t.copy()
    ms.ops.assign(t, ms.Tensor(np.zeros(2, np.float32)))
    np.testing.assert_allclose(arr(c), [1.7, -2.2], rtol=1e-6)
    assert t.zeros_like().shape == (2,) and arr(t.ones_like()).tolist() == [1, 1]
    np.testing.assert_array_equal(arr(t.fill(3)), [3, 3])


def test_assign_value():
    t = ms.Tensor(np.zeros(2, np.float32))
    t.assign_value(ms.Tensor(np.ones(2, np.float32)))
    np.testing.assert_array_equal(arr(t), [1, 1])


def test_op_errors_come_from_the_core_with_the_op_name():
    with pytest.raises(ValueError, match="add"):
        ms.Tensor(np.ones((2, 3), np.float32)) + ms.Tensor(np.ones((4,), np.float32))
    with pytest.raises((ValueError, TypeError), match="reshape"):
        ms.Tensor(np.ones(6, np.float32)).reshape(4, 2)
