"""ms.Parameter and ms.ParameterTuple."""
import copy
import pickle

import numpy as np
import pytest

import msrt as ms
from msrt.common.initializer import initializer


def test_a_parameter_is_a_tensor_with_a_name_and_requires_grad():
    p = ms.Parameter(ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), name="w")
    assert isinstance(p, ms.Tensor) and isinstance(p, ms.Parameter)
    assert p.name == "w" and p.requires_grad is True and p.layerwise_parallel is False
    assert p.shape == (2, 3) and p.dtype == ms.float32
    np.testing.assert_array_equal(p.asnumpy(), np.arange(6).reshape(2, 3))
    assert repr(p) == "Parameter (name=w, shape=(2, 3), dtype=Float32, requires_grad=True)"
    assert p.data is p
    assert ms.Parameter(ms.Tensor([1.0])).name == "Parameter"


def test_default_inputs_of_every_kind():
    assert ms.Parameter(1.0).dtype == ms.float32
    assert ms.Parameter(3).dtype == ms.int64
    assert ms.Parameter(np.ones((2,), np.float64)).dtype == ms.float64
    assert ms.Parameter([1.0, 2.0]).shape == (2,)
    p = ms.Parameter(initializer("ones", [3], ms.float16), name="b", requires_grad=False)
    assert p.dtype == ms.float16 and p.requires_grad is False
    with pytest.raises(TypeError, match="default_input"):
        ms.Parameter("text")
    with pytest.raises(TypeError, match="needs a shape"):
        ms.Parameter(ms.common.initializer.Normal())


def test_name_and_requires_grad_are_checked():
    p = ms.Parameter(ms.Tensor([1.0]), name="a")
    p.name = "b"
    assert p.name == "b"
    with pytest.raises(TypeError, match="'name' must be a str"):
        p.name = 3
    p.requires_grad = False
    assert not p.requires_grad
    with pytest.raises(TypeError, match="requires_grad"):
        p.requires_grad = 1


def test_set_data_writes_in_place():
    p = ms.Parameter(ms.Tensor(np.zeros((2, 2), np.float32)), name="w")
    view = p.value()
    assert p.set_data(ms.Tensor(np.ones((2, 2), np.float32))) is p
    np.testing.assert_array_equal(p.asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(view.asnumpy(), np.ones((2, 2)))  # the same tensor sees the write
    p.set_data(ms.Tensor(np.full((2, 2), 3, np.float64)))  # converted to the parameter's dtype
    assert p.dtype == ms.float32
    np.testing.assert_array_equal(p.asnumpy(), np.full((2, 2), 3))
    p.set_data(5.0)
    np.testing.assert_array_equal(p.asnumpy(), np.full((2, 2), 5))
    with pytest.raises(ValueError, match="shape of the new data"):
        p.set_data(ms.Tensor(np.ones((3,), np.float32)))
    p.set_data(ms.Tensor(np.ones((3,), np.float32)), slice_shape=True)
    assert p.shape == (3,) and p.name == "w" and p.requires_grad
    with pytest.raises(TypeError, match="must be a Tensor or a number"):
        p.set_data("x")


@pytest.mark.parametrize("wrap", [lambda a: a, ms.Tensor.from_numpy], ids=["ndarray", "from_numpy"])
def test_set_data_from_host_memory_takes_no_pool_memory(wrap):
    # 4 MiB of float32 read straight from the array into the parameter's own buffer: neither a second copy of
    # the data nor the old buffer is held by the pool, not even for a moment (the peak stays where it was).
    p = ms.Parameter(ms.Tensor(np.zeros((1024, 1024), np.float32)), name="w")
    p.asnumpy()
    ms.runtime.synchronize()
    before = ms.runtime.memory_allocated()
    ms.runtime.reset_peak_memory_stats()
    data = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024)
    assert p.set_data(wrap(data)) is p
    np.testing.assert_array_equal(p.asnumpy(), data)
    ms.runtime.synchronize()
    assert ms.runtime.memory_allocated() == before
    assert ms.runtime.max_memory_allocated() < before + p.nbytes // 2
    data[0, 0] = -1.0  # a copy, not an alias of the array
    assert p.asnumpy()[0, 0] == 0.0


def test_set_data_from_an_array_of_another_dtype_or_shape_converts():
    p = ms.Parameter(ms.Tensor(np.zeros((2, 3), np.float32)), name="w")
    p.set_data(np.full((2, 3), 2, np.float64))
    assert p.dtype == ms.float32
    np.testing.assert_array_equal(p.asnumpy(), np.full((2, 3), 2))
    p.set_data(np.arange(3, dtype=np.float32))  # broadcast to the parameter's shape
    np.testing.assert_array_equal(p.asnumpy(), np.tile(np.arange(3), (2, 1)))
    p.set_data(np.ones((3, 2), np.float32).T)  # not C-contiguous
    np.testing.assert_array_equal(p.asnumpy(), np.ones((2, 3)))


def test_clone_copies_data_and_keeps_name():
    p = ms.Parameter(ms.Tensor(np.ones((2,), np.float32)), name="w", requires_grad=False)
    c = p.clone()
    assert c.name == "w" and c.requires_grad is False and c is not p
    p.set_data(ms.Tensor(np.zeros((2,), np.float32)))
    np.testing.assert_array_equal(c.asnumpy(), [1, 1])
    z = p.clone(init="zeros")
    np.testing.assert_array_equal(z.asnumpy(), [0, 0])


def test_copy_deepcopy_and_pickle():
    p = ms.Parameter(ms.Tensor(np.arange(3, dtype=np.float32)), name="w")
    d = copy.deepcopy(p)
    assert isinstance(d, ms.Parameter) and d.name == "w"
    p.set_data(ms.Tensor(np.zeros(3, np.float32)))
    np.testing.assert_array_equal(d.asnumpy(), [0, 1, 2])
    s = copy.copy(p)
    assert s.name == "w"
    u = pickle.loads(pickle.dumps(d))
    assert isinstance(u, ms.Parameter) and u.name == "w"
    np.testing.assert_array_equal(u.asnumpy(), [0, 1, 2])


def test_parameter_from_parameter_is_independent():
    p = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="a")
    q = ms.Parameter(p, name="b")
    p.set_data(ms.Tensor(np.zeros(2, np.float32)))
    np.testing.assert_array_equal(q.asnumpy(), [1, 1])
    assert p.name == "a" and q.name == "b"


def test_ops_on_parameters_give_tensors():
    p = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), name="a")
    out = p + 1
    assert type(out) is ms.Tensor
    np.testing.assert_array_equal(out.asnumpy(), [2, 2])


def test_parameter_tuple():
    a = ms.Parameter(ms.Tensor([1.0]), name="a")
    b = ms.Parameter(ms.Tensor([2.0]), name="b")
    t = ms.ParameterTuple([a, b])
    assert isinstance(t, tuple) and t[0] is a and len(t) == 2
    c = t.clone("copy")
    assert [p.name for p in c] == ["copy.a", "copy.b"]
    with pytest.raises(TypeError, match="must be a Parameter"):
        ms.ParameterTuple([a, ms.Tensor([1.0])])
    with pytest.raises(ValueError, match="'a' is used by two"):
        ms.ParameterTuple([a, ms.Parameter(ms.Tensor([3.0]), name="a")])
