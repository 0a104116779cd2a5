"""Parity tests of the elementwise ops against NumPy: every op over its
dtypes and broadcast shapes (0-d and empty included), NaN handling, half
types through cast, error messages, and finite-difference gradients."""
import json
import math
import warnings

import numpy as np
import pytest

import msrt

from .harness import _C, check_grad, covers, gradients, run_op, tensor

RNG = np.random.default_rng(1234)
SHAPES = [(), (0,), (7,), (2, 3, 4), (300, 257)]  # the last runs on the thread pool
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]


def rand(shape, dtype, low=-3.0, high=3.0):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def tol(dtype):
    return {np.float32: dict(rtol=2e-6, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12),
            np.float16: dict(rtol=2e-3, atol=2e-3)}.get(np.dtype(dtype).type, dict(rtol=0, atol=0))


def expect_error(exc, tokens, name, inputs, attrs=None):
    with pytest.raises(exc) as info:
        run_op(name, inputs, attrs)
    for token in tokens:
        assert token in str(info.value), f"{token!r} not in {info.value}"


_erf = np.vectorize(math.erf)


def gelu_tanh(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def sigmoid(x):
    return 1 / (1 + np.exp(-x.astype(np.float64)))


# name: (reference, dtypes, (low, high), differentiable)
UNARY = {
    "neg": (np.negative, FLOATS + INTS, (-3, 3), True),
    "abs": (np.abs, FLOATS + INTS, (-3, 3), True),
    "sign": (np.sign, FLOATS + INTS, (-3, 3), True),
    "exp": (np.exp, FLOATS, (-10, 10), True),
    "log": (np.log, FLOATS, (0.01, 10), True),
    "sqrt": (np.sqrt, FLOATS, (0.01, 10), True),
    "floor": (np.floor, FLOATS, (-5, 5), True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), FLOATS, (0.01, 10), True),
    "square": (np.square, FLOATS + INTS, (-3, 3), True),
    "reciprocal": (np.reciprocal, FLOATS, (0.1, 3), True),
    "sigmoid": (sigmoid, FLOATS, (-10, 10), True),
    "tanh": (np.tanh, FLOATS, (-5, 5), True),
    "relu": (lambda x: np.maximum(x, 0), FLOATS + INTS, (-3, 3), True),
    "relu6": (lambda x: np.minimum(np.maximum(x, 0), 6), FLOATS + INTS, (-8, 8), True),
    "silu": (lambda x: x * sigmoid(x), FLOATS, (-6, 6), True),
}
covers(*UNARY, "gelu", "gelu_grad", "logical_not", "ones_like", "zeros_like", "identity", "cast")


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", SHAPES)
def test_unary_matches_numpy(name, shape):
    ref, dtypes, (low, high), _ = UNARY[name]
    for dtype in dtypes:
        x = rand(shape, dtype, low, high)
        (y,) = run_op(name, [x])
        assert y.dtype == dtype and y.shape == x.shape
        np.testing.assert_allclose(y, ref(x).astype(dtype), **tol(dtype), err_msg=f"{name} {np.dtype(dtype)}")


@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh", "relu", "sqrt", "neg"])
def test_unary_float16_goes_through_float32(name):
    ref, _, (low, high), _ = UNARY[name]
    x = rand((5, 6), np.float16, low, high)
    (y,) = run_op(name, [x])
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float32), ref(x.astype(np.float64)).astype(np.float16).astype(np.float32),
                               rtol=2e-3, atol=2e-3)


def test_exp_tanh_sigmoid_edges():
    x = np.array([-np.inf, -200, -100, -88, -1e-8, 0, 1e-8, 20, 88, 89, 100, np.inf, np.nan], dtype=np.float32)
    with np.errstate(over="ignore"):
        for name, ref in [("exp", np.exp), ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v)))]:
            (y,) = run_op(name, [x])
            np.testing.assert_allclose(y, ref(x.astype(np.float64)).astype(np.float32), rtol=2e-6, atol=1e-40,
                                       err_msg=name)


def test_log_edges():
    tiny = np.float32(1e-45)  # subnormals go through the scaled path
    x = np.array([0.0, -1.0, np.inf, np.nan, 1.0, tiny, 1e-40, 1.17e-38, 0.7071, 1.4142, 3.4e38], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.log(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(run_op("log", [x])[0], expected, rtol=2e-7)
    bits = RNG.integers(1, 0x7F800000, size=20000, dtype=np.uint32).view(np.float32)  # all magnitudes
    np.testing.assert_allclose(run_op("log", [bits])[0], np.log(bits.astype(np.float64)).astype(np.float32), rtol=2e-7)


def test_nan_propagates():
    x = np.array([np.nan, -1.0, 2.0], dtype=np.float32)
    for name in ["relu", "relu6", "sign", "abs", "neg"]:
        assert np.isnan(run_op(name, [x])[0][0]), name
    y = np.array([1.0, np.nan, 1.0], dtype=np.float32)
    np.testing.assert_array_equal(run_op("maximum", [x, y])[0], np.maximum(x, y))
    np.testing.assert_array_equal(run_op("minimum", [x, y])[0], np.minimum(x, y))


@pytest.mark.parametrize("approximate", [True, False])
@pytest.mark.parametrize("dtype", FLOATS)
def test_gelu(approximate, dtype):
    x = rand((4, 33), dtype, -6, 6)
    (y,) = run_op("gelu", [x], {"approximate": approximate})
    ref = gelu_tanh(x) if approximate else gelu_erf(x)
    np.testing.assert_allclose(y, ref.astype(dtype), **tol(dtype))
    # Default is the tanh form.
    if approximate:
        np.testing.assert_array_equal(run_op("gelu", [x])[0], y)


def _gelu_tanh_grad(x):
    x = x.astype(np.float64)
    k, c = np.sqrt(2 / np.pi), 0.044715
    t = np.tanh(k * (x + c * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)


def _gelu_erf_grad(x):
    x = x.astype(np.float64)
    return 0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)


def test_gelu_erf_float32_is_accurate_over_a_wide_range():
    """The vectorised erf behind gelu (float32) against float64 erf: within a few float32 ulps of the
    value (or 1e-37 absolute where it underflows), from the left tail to large x."""
    x = np.concatenate([np.linspace(-12, 12, 48001), np.geomspace(1e-30, 1e3, 2000),
                        -np.geomspace(1e-30, 1e3, 2000)]).astype(np.float32)
    for approximate, ref, grad_ref in [(False, gelu_erf, _gelu_erf_grad)]:
        (y,) = run_op("gelu", [x], {"approximate": approximate})
        want = ref(x)
        # the left tail keeps its relative accuracy (no cancellation in 1 + erf) down to x = -5.6; below,
        # where |gelu(x)| < 6e-8, it is 0, as torch's is from about there
        body = x >= -5.6
        np.testing.assert_allclose(y[body], want[body], rtol=6e-7 * 8, atol=1e-37)
        np.testing.assert_allclose(y[~body], want[~body], rtol=0, atol=6e-8)
        (dx,) = run_op("gelu_grad", [np.ones_like(x), x], {"approximate": approximate})
        np.testing.assert_allclose(dx, grad_ref(x), rtol=6e-7 * 8, atol=2e-7)


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_special_values_match_torch(approximate):
    torch = pytest.importorskip("torch")
    x = np.array([-np.inf, -100, -30, -10, -6, -5, -1e-30, -0.0, 0.0, 1e-30, 5, 10, 100, np.inf, np.nan],
                 np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.gelu(tx, approximate="tanh" if approximate else "none")
    (tdx,) = torch.autograd.grad(ty.sum(), tx)
    (y,) = run_op("gelu", [x], {"approximate": approximate})
    (dx,) = run_op("gelu_grad", [np.ones_like(x), x], {"approximate": approximate})
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(dx, tdx.numpy(), rtol=2e-6, atol=2e-6)
    # float64 goes through the C library's erf
    (y64,) = run_op("gelu", [x.astype(np.float64)], {"approximate": approximate})
    np.testing.assert_allclose(y64[np.isfinite(x)], y[np.isfinite(x)], rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("approximate", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_gradient_matches_torch(approximate, dtype):
    torch = pytest.importorskip("torch")
    x = rand((33, 65), dtype, -7, 7)
    sens = rand(x.shape, dtype)
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(tx, approximate="tanh" if approximate else "none").backward(torch.tensor(sens))
    (dx,) = gradients("gelu", [x], {"approximate": approximate}, sens=sens)
    # float32: two float32 evaluations of the derivative, each within a few ulps of float64's
    tolerance = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else tol(dtype)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **tolerance)
    np.testing.assert_allclose(dx, (_gelu_tanh_grad(x) if approximate else _gelu_erf_grad(x)) * sens, **tolerance)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradient(name):
    _, _, (low, high), _ = UNARY[name]
    x = rand((3, 4), np.float64, low, high)
    if name in ("abs", "relu", "relu6", "sign"):
        x = np.where(np.abs(x) < 0.1, 0.5, x)  # away from the kinks
        x = np.where(np.abs(x - 6) < 0.1, 5.5, x)
    check_grad(name, [x])


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_gradient(approximate):
    x = rand((3, 5), np.float64, -4, 4)
    check_grad("gelu", [x], {"approximate": approximate})
    dy = rand((3, 5), np.float64)
    check_grad("gelu_grad", [dy, x], {"approximate": approximate}, wrt=(0,))


# The activations' gradient ops: name -> (reference dx from dy and v, what v is, range of v, which v
# has a second derivative through the op).
ACTIVATION_GRADS = {
    "relu_grad": (lambda dy, y: np.where(y > 0, dy, 0), "y", (-3, 3), False),
    "relu6_grad": (lambda dy, x: np.where((x > 0) & (x < 6), dy, 0), "x", (-8, 8), False),
    "sigmoid_grad": (lambda dy, y: dy * y * (1 - y), "y", (0, 1), True),
    "tanh_grad": (lambda dy, y: dy * (1 - y * y), "y", (-1, 1), True),
    "silu_grad": (lambda dy, x: dy * sigmoid(x) * (1 + x * (1 - sigmoid(x))), "x", (-6, 6), True),
    "leaky_relu_grad": (lambda dy, x: np.where(x > 0, dy, 0.2 * dy), "x", (-3, 3), False),
}
covers(*ACTIVATION_GRADS)


@pytest.mark.parametrize("name", sorted(ACTIVATION_GRADS))
@pytest.mark.parametrize("shape", SHAPES)
def test_activation_grad_ops_match_numpy(name, shape):
    ref, _, (low, high), _ = ACTIVATION_GRADS[name]
    for dtype in FLOATS:
        dy, v = rand(shape, dtype), rand(shape, dtype, low, high)
        (dx,) = run_op(name, [dy, v])
        assert dx.dtype == dtype and dx.shape == v.shape
        want = ref(dy.astype(np.float64), v.astype(np.float64)).astype(dtype)
        np.testing.assert_allclose(dx, want, **tol(dtype), err_msg=f"{name} {np.dtype(dtype)}")
    dy, v = rand((5, 6), np.float16), rand((5, 6), np.float16, low, high)
    np.testing.assert_allclose(run_op(name, [dy, v])[0].astype(np.float32),
                               ref(dy.astype(np.float64), v.astype(np.float64)), rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("name", sorted(ACTIVATION_GRADS))
def test_activation_grad_ops_are_differentiable(name):
    _, _, (low, high), second = ACTIVATION_GRADS[name]
    dy, v = rand((3, 4), np.float64), rand((3, 4), np.float64, low, high)
    v = np.where(np.abs(v) < 0.1, 0.5, v)  # away from the kinks at 0 (and 6)
    v = np.where(np.abs(v - 6) < 0.1, 5.5, v)
    check_grad(name, [dy, v], wrt=(0, 1) if second else (0,))


@pytest.mark.parametrize("name", ["relu", "relu6", "sigmoid", "tanh", "silu", "gelu", "leaky_relu"])
def test_activation_backward_is_one_kernel(name, in_tmp):
    """An activation's backward runs one kernel, its gradient op (Note [Activation gradients])."""
    x = tensor(rand((4, 5), np.float32))
    x.requires_grad = True
    tape = _C.GradTape()
    try:
        (y,) = _C.call(name, [x], {})
        y.asnumpy()
        prof = msrt.Profiler(output_path="prof")
        (dx,) = tape.gradient([y], [tensor(rand((4, 5), np.float32))], [x])
        dx.asnumpy()
    finally:
        tape.end()
    prof.analyse()
    with open(in_tmp / "prof" / "profiler" / "trace_0.json") as f:
        kernels = [e["name"] for e in json.load(f)["traceEvents"] if e.get("cat") == "op"]
    assert kernels == [f"{name}_grad"], kernels


@pytest.mark.parametrize("name, torch_name", [("relu", "relu"), ("relu6", "relu6"), ("sigmoid", "sigmoid"),
                                              ("tanh", "tanh"), ("silu", "silu"), ("leaky_relu", "leaky_relu")])
@pytest.mark.filterwarnings("ignore:nn.functional")
@pytest.mark.parametrize("dtype", FLOATS)
def test_activation_gradients_match_torch(name, torch_name, dtype):
    torch = pytest.importorskip("torch")
    x = rand((17, 33), dtype, -8, 8)
    x[0, :4] = [0.0, -0.0, 6.0, 1e-30]
    sens = rand(x.shape, dtype)
    tx = torch.tensor(x, requires_grad=True)
    slope = {"negative_slope": 0.2} if name == "leaky_relu" else {}  # msrt's default alpha
    ty = getattr(torch.nn.functional, torch_name)(tx, **slope)
    ty.backward(torch.tensor(sens))
    (dx,) = gradients(name, [x], sens=sens)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **tol(dtype))


def test_gelu_grad_errors():
    expect_error(ValueError, ["[gelu_grad]", "shape"], "gelu_grad", [np.ones((2,)), np.ones((3,))])
    expect_error(TypeError, ["[gelu_grad]", "Float32"], "gelu_grad",
                 [np.ones(2, np.float32), np.ones(2, np.float64)])
    for name, (_, v, _, _) in ACTIVATION_GRADS.items():
        expect_error(ValueError, [f"[{name}]", "'dy' must have the shape of", v], name,
                     [np.ones((2,), np.float32), np.ones((3,), np.float32)])
        expect_error(TypeError, [f"[{name}]", "Float64"], name, [np.ones(2, np.float64), np.ones(2, np.float32)])
        expect_error(TypeError, [f"[{name}]", "Int32"], name, [np.ones(2, np.int32), np.ones(2, np.int32)])


def test_logical_not_and_likes():
    b = rand((3, 5), np.bool_)
    np.testing.assert_array_equal(run_op("logical_not", [b])[0], ~b)
    for dtype in [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.int16, np.bool_, np.float16]:
        x = rand((2, 3), dtype) if dtype != np.float16 else rand((2, 3), np.float32).astype(np.float16)
        for name, ref in [("ones_like", np.ones_like), ("zeros_like", np.zeros_like), ("identity", np.copy)]:
            (y,) = run_op(name, [x])
            assert y.dtype == x.dtype
            np.testing.assert_array_equal(y, ref(x))
    assert run_op("ones_like", [np.zeros((0, 2), np.float32)])[0].shape == (0, 2)
    check_grad("identity", [rand((2, 3), np.float64)])


def test_unary_dtype_errors():
    expect_error(TypeError, ["[exp]", "'x'", "Int32", "Float32"], "exp", [np.ones(3, np.int32)])
    expect_error(TypeError, ["[neg]", "Bool"], "neg", [np.ones(3, np.bool_)])
    expect_error(TypeError, ["[logical_not]", "Bool", "Float32"], "logical_not", [np.ones(3, np.float32)])
    expect_error(TypeError, ["[gelu]", "approximate", "bool"], "gelu", [np.ones(3, np.float32)], {"approximate": 1})
    expect_error(TypeError, ["[relu]", "unknown attribute 'alpha'"], "relu", [np.ones(3, np.float32)], {"alpha": 1})


# ---- cast ----

def to_bfloat16_as_float32(x):
    """Round-to-nearest-even to bfloat16, returned as float32 (what asnumpy gives)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


CAST_DTYPES = ["bool_", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("src", CAST_DTYPES)
@pytest.mark.parametrize("dst", CAST_DTYPES)
def test_cast_matches_numpy(src, dst):
    x = np.array([0, 1, 2, 7, 100, 3.5, -2.25, -1], dtype=np.float64)
    if src in ("uint8", "bool_"):
        x = np.abs(x)
    x = x.astype(src)
    (y,) = run_op("cast", [x], {"dtype": dst})
    assert y.dtype == np.dtype(dst)
    np.testing.assert_array_equal(y, x.astype(dst))


def test_cast_bfloat16_and_names():
    x = rand((4, 9), np.float32, -100, 100)
    t = _C.call("cast", [tensor(x)], {"dtype": "bfloat16"})[0]
    assert t.dtype_name == "bfloat16"
    np.testing.assert_array_equal(t.asnumpy(), to_bfloat16_as_float32(x))
    back = _C.call("cast", [t], {"dtype": "float64"})[0].asnumpy()
    np.testing.assert_array_equal(back, to_bfloat16_as_float32(x).astype(np.float64))
    # MindSpore's capitalised names and 'bool' are accepted too.
    assert run_op("cast", [x], {"dtype": "Float64"})[0].dtype == np.float64
    assert run_op("cast", [x], {"dtype": "bool"})[0].dtype == np.bool_
    # NaN becomes True, like NumPy.
    assert run_op("cast", [np.array([np.nan, 0.0])], {"dtype": "bool_"})[0].tolist() == [True, False]


def test_cast_errors_and_gradient():
    expect_error(TypeError, ["[cast]", "unknown dtype", "'float128'"], "cast", [np.ones(2)], {"dtype": "float128"})
    expect_error(TypeError, ["[cast]", "dtype", "int"], "cast", [np.ones(2)], {"dtype": 3})
    expect_error(TypeError, ["[cast]", "missing the required attribute 'dtype'"], "cast", [np.ones(2)])
    x = rand((2, 3), np.float64)
    g = gradients("cast", [x], {"dtype": "float32"}, sens=np.full((2, 3), 2.0, np.float32))[0]
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, np.full((2, 3), 2.0))


# ---- binary ----

BROADCAST_PAIRS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1, 4), (3, 1)),
    ((), (2, 3)),
    ((4,), ()),
    ((), ()),
    ((0, 3), (3,)),
    ((1,), (5,)),
    ((5, 1), (1, 6)),
    ((300, 1000), (1000,)),   # pool, row broadcast
    ((300, 1000), (300, 1)),  # pool, column broadcast
    ((2, 300, 200), (2, 1, 200)),
]

ARITH = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
covers(*ARITH, *COMPARE, *LOGICAL, "div", "pow", "select")


@pytest.mark.parametrize("name", sorted(ARITH))
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_arithmetic_matches_numpy(name, shapes, dtype):
    a, b = rand(shapes[0], dtype), rand(shapes[1], dtype)
    (y,) = run_op(name, [a, b])
    ref = ARITH[name](a, b)
    assert y.dtype == ref.dtype and y.shape == ref.shape
    np.testing.assert_allclose(y, ref, **tol(dtype))


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS)
def test_div_matches_numpy(shapes):
    for dtype in FLOATS:
        a, b = rand(shapes[0], dtype), rand(shapes[1], dtype, 0.5, 3)
        (y,) = run_op("div", [a, b])
        np.testing.assert_allclose(y, a / b, **tol(dtype))
    # Integers divide truly, into float32.
    a, b = rand(shapes[0], np.int32, -9, 9), rand(shapes[1], np.int64, 1, 9)
    (y,) = run_op("div", [a, b])
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, (a / b).astype(np.float32), rtol=1e-6)


def test_pow():
    a, b = rand((3, 4), np.float64, 0.1, 3), rand((4,), np.float64, -2, 2)
    np.testing.assert_allclose(run_op("pow", [a, b])[0], a ** b, rtol=1e-12)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(run_op("pow", [a32, b32])[0], a32 ** b32, rtol=2e-6)
    ai = np.array([2, -3, 0, 1, -1, 5], np.int64)
    bi = np.array([10, 3, 2, -2, -3, 0], np.int64)
    expected = [1024, -27, 0, 1, -1, 1]  # negative exponents: 1 and -1 stay, others give 0
    assert run_op("pow", [ai, bi])[0].tolist() == expected
    assert run_op("pow", [ai.astype(np.int32), bi.astype(np.int32)])[0].dtype == np.int32


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS[:9])
def test_comparisons_match_numpy(name, shapes):
    for dtype in FLOATS + INTS + [np.bool_, np.uint8, np.int8]:
        a, b = rand(shapes[0], dtype, 0, 3), rand(shapes[1], dtype, 0, 3)
        (y,) = run_op(name, [a, b])
        assert y.dtype == np.bool_
        np.testing.assert_array_equal(y, COMPARE[name](a, b))


def test_comparisons_promote_and_handle_nan():
    a = np.array([1, 2, 3], np.int32)
    b = np.array([1.5, 2.0, np.nan], np.float64)
    for name, ref in COMPARE.items():
        np.testing.assert_array_equal(run_op(name, [a, b])[0], ref(a, b), err_msg=name)


@pytest.mark.parametrize("name", sorted(LOGICAL))
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS[:9])
def test_logical_match_numpy(name, shapes):
    a, b = rand(shapes[0], np.bool_), rand(shapes[1], np.bool_)
    (y,) = run_op(name, [a, b])
    assert y.dtype == np.bool_
    np.testing.assert_array_equal(y, LOGICAL[name](a, b))


@pytest.mark.parametrize("a_dtype, b_dtype, out_dtype", [
    (np.int32, np.float32, np.float32),
    (np.float32, np.float64, np.float64),
    (np.uint8, np.int8, np.int16),
    (np.bool_, np.int32, np.int32),
    (np.int32, np.int64, np.int64),
    (np.float16, np.float32, np.float32),
    (np.float16, np.float16, np.float16),
])
def test_binary_promotion(a_dtype, b_dtype, out_dtype):
    a = rand((2, 3), np.float64, 0, 5).astype(a_dtype)
    b = rand((3,), np.float64, 1, 5).astype(b_dtype)
    for name in ["add", "sub", "mul", "maximum"]:
        (y,) = run_op(name, [a, b])
        assert y.dtype == out_dtype, name
        ref = ARITH[name](a.astype(np.float64), b.astype(np.float64)).astype(out_dtype)
        np.testing.assert_allclose(y, ref, **tol(out_dtype), err_msg=name)


def test_integer_arithmetic_wraps():
    a = np.array([127, -128, 100], np.int8)
    b = np.array([1, -1, 100], np.int8)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_op("add", [a, b])[0], a + b)
        np.testing.assert_array_equal(run_op("mul", [a, b])[0], a * b)


def test_select():
    c = rand((2, 1, 4), np.bool_)
    x, y = rand((3, 1), np.float32), rand((4,), np.float64)
    (out,) = run_op("select", [c, x, y])
    ref = np.where(c, x, y)
    assert out.dtype == np.float64 and out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)
    for dtype in [np.int32, np.bool_, np.float16, np.int64]:
        c = rand((300, 300), np.bool_)
        x, y = rand((300, 300), dtype), rand((300,), dtype)
        np.testing.assert_array_equal(run_op("select", [c, x, y])[0], np.where(c, x, y))
    assert run_op("select", [np.array(True), np.array(1.0), np.array(2.0)])[0] == 1.0
    expect_error(TypeError, ["[select]", "'condition'", "Bool", "Int32"], "select",
                 [np.ones(2, np.int32), np.ones(2), np.ones(2)])
    expect_error(ValueError, ["[select]", "can not be broadcast"], "select",
                 [np.ones(2, np.bool_), np.ones(3), np.ones(2)])


def test_binary_errors():
    expect_error(ValueError, ["[add]", "(2, 3)", "(4,)", "can not be broadcast"], "add", [np.ones((2, 3)), np.ones(4)])
    expect_error(TypeError, ["[add]", "Bool"], "add", [np.ones(2, np.bool_), np.ones(2, np.bool_)])
    expect_error(TypeError, ["[div]", "Bool"], "div", [np.ones(2, np.bool_), np.ones(2, np.bool_)])
    expect_error(TypeError, ["[logical_and]", "'y'", "Bool", "Float64"], "logical_and",
                 [np.ones(2, np.bool_), np.ones(2)])
    expect_error(TypeError, ["[add]", "takes 2 inputs", "got 1"], "add", [np.ones(2)])


def test_float16_binary_and_select():
    a, b = rand((4, 5), np.float16), rand((5,), np.float16)
    np.testing.assert_allclose(run_op("mul", [a, b])[0].astype(np.float32), (a * b).astype(np.float32), rtol=1e-3)
    np.testing.assert_array_equal(run_op("less", [a, b])[0], a < b)


# ---- gradients ----

@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1, 3), (4, 1)), ((), (2, 2))])
def test_binary_gradient(name, shapes):
    low = 0.5 if name in ("div", "pow") else -2
    a, b = rand(shapes[0], np.float64, low, 2), rand(shapes[1], np.float64, low, 2)
    check_grad(name, [a, b], wrt=(0, 1))


def test_pow_gradient_with_nonpositive_base():
    a = np.array([-2.0, 0.5, 3.0])
    b = np.array([2.0, 3.0, 2.0])
    check_grad("pow", [a, b], wrt=(0,))
    g = gradients("pow", [a, b], wrt=(1,))[0]
    np.testing.assert_allclose(g, [0.0, 0.125 * np.log(0.5), 9 * np.log(3.0)])


def test_mixed_dtype_gradient_has_input_dtype():
    a = rand((2, 3), np.float32)
    b = rand((3,), np.float64)
    ga, gb = gradients("mul", [a, b], wrt=(0, 1))
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    np.testing.assert_allclose(ga, np.broadcast_to(b, (2, 3)), rtol=1e-6)
    np.testing.assert_allclose(gb, a.sum(0), rtol=1e-6)


def test_select_gradient():
    c = rand((2, 3), np.bool_)
    x, y = rand((2, 3), np.float64), rand((3,), np.float64)
    check_grad("select", [c, x, y], wrt=(1, 2))


def test_ties_send_gradient_to_x():
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([1.0, 1.0, 4.0])
    ga, gb = gradients("maximum", [a, b], wrt=(0, 1))
    np.testing.assert_array_equal(ga, [1, 1, 0])
    np.testing.assert_array_equal(gb, [0, 0, 1])


def test_threads_do_not_change_results():
    x = rand((512, 1024), np.float32)
    b = rand((1024,), np.float32)
    base = run_op("add", [x, b])[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oversubscribes small machines, on purpose
        msrt.set_context(runtime_num_threads=2, inter_op_parallel_num=2)  # one more loop thread
    np.testing.assert_array_equal(run_op("add", [x, b])[0], base)


covers("addn")


@pytest.mark.parametrize("count", [1, 2, 4])
def test_addn_sums_its_inputs_with_gradients(count):
    xs = [rand((2, 3), np.float64) for _ in range(count)]
    (y,) = run_op("addn", xs)
    np.testing.assert_allclose(y, np.sum(xs, axis=0))
    check_grad("addn", xs, wrt=tuple(range(count)))
    expect_error(ValueError, ["[add]", "broadcast"], "addn", [np.ones((2, 3)), np.ones((4,))])


# --- divide (rounding modes) and clamp, composites over the ops above ---
covers("divide", "clamp")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_divide_rounding_modes_match_torch_semantics(dtype):
    x = rand((4, 5), dtype, -9, 9)
    y = rand((5,), dtype, 0.5, 3) * np.where(RNG.random(5) > 0.5, 1, -1).astype(dtype)
    np.testing.assert_allclose(run_op("divide", [x, y])[0], x / y, **tol(dtype))
    np.testing.assert_array_equal(run_op("divide", [x, y], {"rounding_mode": "floor"})[0], np.floor(x / y))
    np.testing.assert_array_equal(run_op("divide", [x, y], {"rounding_mode": "trunc"})[0], np.trunc(x / y))
    check_grad("divide", [x, y], wrt=(0, 1))
    np.testing.assert_array_equal(gradients("divide", [x, y], {"rounding_mode": "floor"})[0], np.zeros_like(x))


def test_divide_integers_rounded_keep_an_integer_type():
    a = np.array([7, -7, 9, -9], np.int32)
    b = np.array([2, 2, -4, -4], np.int64)
    (f,) = run_op("divide", [a, b], {"rounding_mode": "floor"})
    (t,) = run_op("divide", [a, b], {"rounding_mode": "trunc"})
    assert f.dtype == np.int64 and t.dtype == np.int64
    np.testing.assert_array_equal(f, a // b)
    np.testing.assert_array_equal(t, np.trunc(a / b))
    assert run_op("divide", [a, a])[0].dtype == np.float32
    expect_error(ValueError, ["[divide]", "'rounding_mode'", "'trunc' or 'floor'", "'round'"], "divide", [a, b],
                 {"rounding_mode": "round"})


def test_clamp_bounds_either_side_and_broadcasts():
    x = rand((3, 4), np.float64)
    lo, hi = rand((4,), np.float64, -2, 0), rand((3, 1), np.float64, 0, 2)
    np.testing.assert_array_equal(run_op("clamp", [x, lo, hi])[0], np.minimum(np.maximum(x, lo), hi))
    check_grad("clamp", [x, lo, hi], wrt=(0, 1, 2))
    only_max = _C.call("clamp", [tensor(x), None, tensor(hi)], {})[0].asnumpy()
    np.testing.assert_array_equal(only_max, np.minimum(x, hi))
    only_min = _C.call("clamp", [tensor(x), tensor(lo), None], {})[0].asnumpy()
    np.testing.assert_array_equal(only_min, np.maximum(x, lo))
    with pytest.raises(ValueError, match=r"\[clamp\].*at least one of 'min' and 'max'"):
        _C.call("clamp", [tensor(x), None, None], {})


covers("add_scaled", "sub_scaled")


@pytest.mark.parametrize("alpha", [1, 2.5, -1])
def test_add_and_sub_with_alpha(alpha):
    x, y = rand((3, 4), np.float64), rand((4,), np.float64)
    np.testing.assert_allclose(run_op("add_scaled", [x, y], {"alpha": alpha})[0], x + alpha * y, rtol=1e-12)
    np.testing.assert_allclose(run_op("sub_scaled", [x, y], {"alpha": alpha})[0], x - alpha * y, rtol=1e-12)
    check_grad("add_scaled", [x, y], {"alpha": alpha}, wrt=(0, 1))
    check_grad("sub_scaled", [x, y], {"alpha": alpha}, wrt=(0, 1))
    i = np.array([1, 2], np.int32)
    assert run_op("add_scaled", [i, i], {"alpha": 2})[0].dtype == np.int32
