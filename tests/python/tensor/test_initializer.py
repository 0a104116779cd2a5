"""Initializers: values, fan computations, aliases and seeding."""
import math

import numpy as np
import pytest

import msrt as ms
from msrt.common import initializer as init
from msrt.common import seed as seed_module
from msrt.common.initializer import (Constant, HeNormal, HeUniform, Normal, One, TruncatedNormal, Uniform,
                                     XavierNormal, XavierUniform, Zero, initializer)


@pytest.fixture(autouse=True)
def _fresh_seed():
    """Tests here set the global seed; the next test module starts unseeded again."""
    yield
    seed_module._reset()
    try:
        import msrt.dataset.config as dataset_config
        dataset_config._reset()
    except (ImportError, AttributeError):
        pass


def test_initializer_returns_a_tensor_of_shape_and_dtype():
    t = initializer(Zero(), [2, 3], ms.float32)
    assert isinstance(t, ms.Tensor) and t.shape == (2, 3) and t.dtype == ms.float32
    np.testing.assert_array_equal(t.asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(initializer(One(), (4,), ms.int32).asnumpy(), np.ones(4, np.int32))
    np.testing.assert_array_equal(initializer(Constant(2.5), 3).asnumpy(), np.full(3, 2.5, np.float32))
    np.testing.assert_array_equal(initializer(7, [2], ms.int64).asnumpy(), [7, 7])
    assert initializer("ones", [2, 2], ms.float16).dtype == ms.float16
    assert initializer("normal", [2, 2], ms.bfloat16).dtype == ms.bfloat16


@pytest.mark.parametrize("alias, cls", [
    ("zeros", Zero), ("zero", Zero), ("ones", One), ("normal", Normal), ("uniform", Uniform),
    ("truncatedNormal", TruncatedNormal), ("xavier_uniform", XavierUniform), ("XavierUniform", XavierUniform),
    ("xavier_normal", XavierNormal), ("he_uniform", HeUniform), ("he_normal", HeNormal),
])
def test_aliases(alias, cls):
    assert init._ALIASES[alias.lower()] is cls
    assert initializer(alias, [4, 3]).shape == (4, 3)


def test_errors_are_mindspore_s():
    with pytest.raises(ValueError, match="was not found"):
        initializer("no_such_init", [2])
    with pytest.raises(TypeError, match="'init' argument"):
        initializer(object(), [2])
    with pytest.raises(ValueError, match="positive integer"):
        initializer("zeros", [2, 0])
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        initializer(XavierUniform(), [5])
    with pytest.raises(ValueError, match="same as the argument 'shape'"):
        initializer(ms.Tensor(np.zeros((2, 2))), [3])


def test_a_tensor_init_is_returned_as_is():
    t = ms.Tensor(np.ones((2, 2), np.float32))
    assert initializer(t, [2, 2]) is t


@pytest.mark.parametrize("shape, fan_in, fan_out", [((8, 4), 4, 8), ((16, 3, 5, 5), 75, 400), ((6, 2, 7), 14, 42)])
def test_fan_in_and_fan_out_follow_mindspore(shape, fan_in, fan_out):
    assert init._calculate_fan_in_and_fan_out(shape) == (fan_in, fan_out)


def test_he_uniform_bound_uses_gain_and_fan():
    ms.set_seed(0)
    shape = (64, 32, 3, 3)
    data = initializer(HeUniform(), shape).asnumpy()
    bound = math.sqrt(3.0) * math.sqrt(2.0) / math.sqrt(32 * 9)  # leaky_relu with slope 0: gain sqrt(2)
    assert data.max() <= bound and data.min() >= -bound
    assert data.max() > 0.95 * bound and data.min() < -0.95 * bound
    out = initializer(HeUniform(negative_slope=math.sqrt(5), mode="fan_out"), shape).asnumpy()
    bound = math.sqrt(3.0) * math.sqrt(2.0 / 6.0) / math.sqrt(64 * 9)
    assert out.max() <= bound and out.max() > 0.95 * bound


def test_distributions_have_the_documented_spread():
    ms.set_seed(1)
    normal = initializer(Normal(sigma=0.5, mean=2.0), [200, 200]).asnumpy()
    assert abs(normal.mean() - 2.0) < 0.01 and abs(normal.std() - 0.5) < 0.01
    uniform = initializer(Uniform(scale=0.3), [200, 200]).asnumpy()
    assert uniform.min() >= -0.3 and uniform.max() <= 0.3 and abs(uniform.std() - 0.3 / math.sqrt(3)) < 0.005
    xavier = initializer(XavierUniform(gain=2), [50, 30]).asnumpy()
    bound = 2 * math.sqrt(6.0 / 80)
    assert xavier.max() <= bound and xavier.min() >= -bound
    he = initializer(HeNormal(nonlinearity="relu"), [400, 100]).asnumpy()
    assert abs(he.std() - math.sqrt(2.0) / 10) < 0.005
    xn = initializer(XavierNormal(), [300, 100]).asnumpy()
    assert abs(xn.std() - math.sqrt(2.0 / 400)) < 0.003
    trunc = initializer(TruncatedNormal(sigma=1.5), [100000]).asnumpy()
    assert trunc.min() >= -2 and trunc.max() <= 2


def test_set_seed_makes_draws_repeatable_and_independent_of_numpy():
    ms.set_seed(42)
    a = initializer("normal", [3, 3]).asnumpy().copy()
    b = initializer("normal", [3, 3]).asnumpy().copy()
    ms.set_seed(42)
    np.random.seed(123)  # NumPy's global state does not matter
    np.random.rand(10)
    c = initializer("normal", [3, 3]).asnumpy()
    d = initializer("normal", [3, 3]).asnumpy()
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)
    assert not np.array_equal(a, b)
    ms.set_seed(43)
    assert not np.array_equal(initializer("normal", [3, 3]).asnumpy(), a)


def test_tensor_with_init_and_initializer_as_a_function_on_arrays():
    t = ms.Tensor(shape=(2, 3), dtype=ms.float32, init=One())
    np.testing.assert_array_equal(t.asnumpy(), np.ones((2, 3)))
    assert t.init_data() is t
    arr = np.zeros((2, 2), np.float32)
    Constant(3)(arr)
    np.testing.assert_array_equal(arr, np.full((2, 2), 3))
    with pytest.raises(ValueError, match="at the same time"):
        ms.Tensor(shape=(2,), init=One())


def test_other_initializers():
    np.testing.assert_array_equal(initializer("identity", [2, 3]).asnumpy(), np.eye(2, 3))
    q = initializer("orthogonal", [4, 4]).asnumpy()
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)
    d = initializer(init.Dirac(), [2, 2, 3, 3]).asnumpy()
    assert d[0, 0, 1, 1] == 1 and d[1, 1, 1, 1] == 1 and d.sum() == 2
    s = initializer(init.Sparse(0.5), [4, 6]).asnumpy()
    assert ((s == 0).sum(axis=0) >= 2).all()
    v = initializer(init.VarianceScaling(distribution="uniform"), [10, 30]).asnumpy()
    assert np.abs(v).max() <= math.sqrt(3.0 / 30)


def test_set_seed_seeds_every_generator():
    x = ms.Tensor(np.ones((8, 8), np.float32))
    ms.set_seed(5)
    assert ms.get_seed() == 5
    a = ms.ops.dropout(x, 0.5).asnumpy().copy()
    n = np.random.rand(3)
    ms.set_seed(5)
    np.testing.assert_array_equal(ms.ops.dropout(x, 0.5).asnumpy(), a)  # the C++ generator
    np.testing.assert_array_equal(np.random.rand(3), n)  # NumPy's, as MindSpore seeds it
    assert ms._C.get_seed() == 5
    import msrt.dataset.config as dataset_config
    assert dataset_config.get_seed() == 5


def test_set_seed_rejects_bad_seeds():
    with pytest.raises(TypeError, match="type of int"):
        ms.set_seed(1.5)
    with pytest.raises(TypeError, match="type of int"):
        ms.set_seed(True)
    with pytest.raises(ValueError, match="non-negative"):
        ms.set_seed(-1)
    ms.set_seed(9)
    with pytest.raises(ValueError, match="at most"):
        ms.set_seed(1 << 32)
    assert ms.get_seed() == 9


@pytest.mark.parametrize("make, draw", [
    (lambda: Normal(sigma=0.3, mean=0.1), lambda rng, shape: rng.normal(0.1, 0.3, size=shape)),
    (lambda: HeUniform(), lambda rng, shape: rng.uniform(-math.sqrt(6 / 700), math.sqrt(6 / 700), size=shape)),
])
def test_a_large_tensor_is_drawn_in_blocks_into_its_own_memory(make, draw):
    # Note [Freed host heap]: the samples are drawn in blocks straight into the tensor, never as one float64 array
    # of the whole size (a 1000x700 tensor: 5.3 MiB of float64); the values are those of one draw.
    import tracemalloc

    ms.set_seed(11)
    tracemalloc.start()
    try:
        value = initializer(make(), [1000, 700], ms.float32)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20, peak / 2 ** 20
    ms.set_seed(11)
    expected = draw(seed_module._init_generator(), (1000, 700)).astype(np.float32)
    np.testing.assert_array_equal(value.asnumpy(), expected)
