"""float16 / bfloat16 kernels (Note [Half conversions], Note [Half blocks]): the cast to and from float32 gives the
bits of round-to-nearest-even (NumPy's float16 cast; bfloat16's rounding written out in NumPy) for special values
and at odd lengths around the vector width and the block size; the elementwise kernels and activation gradients,
computed in float32 block by block, agree with a float64 reference within half precision. Every test also runs
with MSRT_HALF_CONVERT=scalar (the scalar loops), in a subprocess (test_scalar_path)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt.ops import _op

from .harness import _C, covers

RNG = np.random.default_rng(15)
# around the 8- and 16-lane loops, the 1024-element block, and the thread split (2 * 32768)
LENGTHS = [1, 7, 8, 15, 17, 1023, 1025, 70001]
HALF = {"float16": ms.float16, "bfloat16": ms.bfloat16}
# a result rounded to the half type: half an ulp (2^-11, 2^-8) relative, plus float32 rounding inside
RTOL = {"float16": 1.5e-3, "bfloat16": 1e-2}
SCALAR = os.environ.get("MSRT_HALF_CONVERT") == "scalar"


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []


def bf16_bits(x):
    """bfloat16 bits of float32 x: round to nearest even; NaN keeps its high half with the quiet bit."""
    b = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    out = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
    out[nan] = (b[nan] >> 16) | 0x40
    return out.astype(np.uint16)


def half_bits(t):
    """The stored bits of a float16 / bfloat16 msrt tensor (through the exact widening to float32)."""
    f = t.astype(ms.float32).asnumpy()
    if t.dtype == ms.float16:
        return f.astype(np.float16).view(np.uint16)
    return (f.view(np.uint32) >> 16).astype(np.uint16)


def specials():
    tiny = np.float32(np.finfo(np.float32).tiny)
    return np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -2.5, 65504.0, 65519.0, 65520.0, 1e6, 6e-8, 3e-8, 2.98e-8,
                     6.1e-5, 1e-40, -1e-45, tiny, 1.0009765625, 1.00048828125, 1.00146484375, 3.4e38,
                     1.00390625, 1.01171875, 1.0 + 2 ** -9, 1.0 + 3 * 2 ** -9], np.float32)


def values(n, scale=100.0):
    x = (RNG.standard_normal(n) * scale).astype(np.float32)
    s = specials()
    x[:min(n, len(s))] = s[:n]
    return x


def test_conversion_path_follows_the_cpu_and_the_switch():
    path = ms._C._half_convert_path()
    if SCALAR:
        assert path == "scalar"
        return
    flags = _cpu_flags()
    assert ("f16c" in path) == ("f16c" in flags), (path, flags)
    assert ("avx512f" in path) == ("avx512f" in flags), (path, flags)


@pytest.mark.parametrize("n", LENGTHS)
def test_float16_cast_rounds_as_ieee(n):
    x = values(n)
    t = ms.Tensor(x).astype(ms.float16)
    got = half_bits(t)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(got, want)
    # and back: exact
    back = t.astype(ms.float32).asnumpy()
    np.testing.assert_array_equal(back, want.view(np.float16).astype(np.float32))


@pytest.mark.parametrize("n", LENGTHS)
def test_round_to_float16_is_the_float16_round_trip(n):
    # Note [float16 held in float32]: float32 in, float32 out, the value of the cast to float16 and back.
    x = values(n)
    (got,) = _C.call("round_to_float16", [_C.TensorBase(x)], {})
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.asnumpy().view(np.uint32), want.view(np.uint32))
    nan = np.array([np.nan, -np.nan] * 9, np.float32)
    (got,) = _C.call("round_to_float16", [_C.TensorBase(nan)], {})
    assert np.isnan(got.asnumpy()).all()
    with pytest.raises(TypeError, match="round_to_float16.*float32"):
        _C.call("round_to_float16", [_C.TensorBase(x.astype(np.float64))], {})


covers("round_to_float16")


def test_float16_nan_stays_nan():
    x = np.array([np.nan, -np.nan] * 9, np.float32)
    out = ms.Tensor(x).astype(ms.float16).astype(ms.float32).asnumpy()
    assert np.isnan(out).all()


@pytest.mark.parametrize("n", LENGTHS)
def test_bfloat16_cast_rounds_to_nearest_even(n):
    x = values(n, scale=1e3)
    x[-1:] = np.nan
    t = ms.Tensor(x).astype(ms.bfloat16)
    np.testing.assert_array_equal(half_bits(t), bf16_bits(x))
    back = t.astype(ms.float32).asnumpy()
    np.testing.assert_array_equal(back.view(np.uint32), bf16_bits(x).astype(np.uint32) << 16)


def rounded(x, dtype):
    """x (float32) rounded to the half type, as float64."""
    if dtype == "float16":
        return x.astype(np.float16).astype(np.float64)
    return (bf16_bits(x).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def erf(x):
    from math import erf as e
    return np.vectorize(e)(x)


UNARY = {
    "relu": (lambda t: ms.ops.relu(t), lambda x: np.maximum(x, 0)),
    "neg": (lambda t: -t, lambda x: -x),
    "exp": (lambda t: ms.ops.exp(t), np.exp),
    "sigmoid": (lambda t: ms.ops.sigmoid(t), lambda x: 1 / (1 + np.exp(-x))),
    "tanh": (lambda t: ms.ops.tanh(t), np.tanh),
    "gelu": (lambda t: _op("gelu", t, approximate=False), lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
    "gelu_tanh": (lambda t: _op("gelu", t, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
}


def check_close(out, want, dtype):
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    assert out.dtype == HALF[dtype]
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * 1e-2)


@pytest.mark.parametrize("dtype", list(HALF))
@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("n", [7, 1025, 70001])
def test_unary_kernels(name, dtype, n):
    x = rounded(RNG.uniform(-4, 4, n).astype(np.float32), dtype)
    run, ref = UNARY[name]
    check_close(run(ms.Tensor(x.astype(np.float32)).astype(HALF[dtype])), ref(x), dtype)


BINARY = {"add": (lambda a, b: a + b), "sub": (lambda a, b: a - b), "mul": (lambda a, b: a * b),
          "div": (lambda a, b: a / b)}


@pytest.mark.parametrize("dtype", list(HALF))
@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("shapes", [((17,), (17,)), ((3, 1025), (3, 1025)), ((70001,), ()), ((), (9,)),
                                    ((4, 5), (5,))])
def test_binary_kernels(name, dtype, shapes):
    a = rounded(RNG.uniform(0.5, 4, shapes[0]).astype(np.float32).reshape(-1), dtype).reshape(shapes[0])
    b = rounded(RNG.uniform(0.5, 4, shapes[1]).astype(np.float32).reshape(-1), dtype).reshape(shapes[1])
    ta, tb = (ms.Tensor(np.asarray(v, np.float32)).astype(HALF[dtype]) for v in (a, b))
    check_close(BINARY[name](ta, tb), BINARY[name](a, b), dtype)


GRADS = {
    "relu_grad": (lambda d, v: np.where(v > 0, d, 0.0)),
    "sigmoid_grad": (lambda d, y: d * y * (1 - y)),
    "tanh_grad": (lambda d, y: d * (1 - y * y)),
    "gelu_grad": (lambda d, x: d * (0.5 * (1 + erf(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi))),
}


@pytest.mark.parametrize("dtype", list(HALF))
@pytest.mark.parametrize("name", list(GRADS))
@pytest.mark.parametrize("n", [15, 1023, 70001])
def test_activation_gradients(name, dtype, n):
    d = rounded(RNG.uniform(-2, 2, n).astype(np.float32), dtype)
    v = rounded(RNG.uniform(-3, 3, n).astype(np.float32), dtype)
    if name in ("sigmoid_grad", "tanh_grad"):
        v = rounded(RNG.uniform(-0.99, 0.99, n).astype(np.float32), dtype)  # outputs of the activation
    td, tv = (ms.Tensor(a.astype(np.float32)).astype(HALF[dtype]) for a in (d, v))
    attrs = {"approximate": False} if name == "gelu_grad" else {}
    out = _op(name, td, tv, **attrs)
    want = GRADS[name](d, v)
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    assert out.dtype == HALF[dtype]
    # a difference of terms: relative to the terms' size
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * 2 * np.abs(d).max())


def test_half_kernels_agree_with_their_float32_kernels():
    # the blockwise path computes what the float32 kernel computes, rounded once
    x = RNG.uniform(-4, 4, 4099).astype(np.float32)
    for dtype in HALF.values():
        t = ms.Tensor(x).astype(dtype)
        x32 = t.astype(ms.float32)
        for fn in (ms.ops.relu, ms.ops.sigmoid, lambda v: v * v, lambda v: v + 1.5):
            np.testing.assert_array_equal(half_bits(fn(t)), half_bits(fn(x32).astype(dtype)))


@pytest.mark.skipif(SCALAR, reason="already the scalar run")
def test_scalar_path():
    env = dict(os.environ, MSRT_HALF_CONVERT="scalar")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout, out.stdout[-500:]


@pytest.mark.parametrize("dtype", list(HALF))
@pytest.mark.parametrize("batch,threads", [(1, 2), (5, 2), (32, 2), (4, 3)])  # 4 images on 3 threads: 2 slices of 2
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_conv2d_backprop_filter(dtype, batch, threads, data_format):
    # Note [bfloat16 backward weights]: float32 slices of the batch on the thread pool, partials summed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 3: runtime_num_threads 2 and one more loop thread (Note [Thread plan])
        ms.set_context(runtime_num_threads=2, inter_op_parallel_num=threads - 2)
    x = rounded(RNG.standard_normal(batch * 6 * 9 * 9).astype(np.float32), dtype).reshape(batch, 6, 9, 9)
    dy = rounded(RNG.standard_normal(batch * 8 * 5 * 5).astype(np.float32), dtype).reshape(batch, 8, 5, 5)
    want = np.zeros((8, 6, 3, 3))
    for i in range(3):
        for j in range(3):  # stride 2, padding 1: output (p, q) reads input (2p + i - 1, 2q + j - 1)
            xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))[:, :, i:i + 9:2, j:j + 9:2]
            want[:, :, i, j] = np.einsum("nohw,nchw->oc", dy, xp)
    to = (lambda a: a) if data_format == "NCHW" else (lambda a: a.transpose(0, 2, 3, 1))
    tx, tdy = (ms.Tensor(np.ascontiguousarray(to(a)).astype(np.float32)).astype(HALF[dtype]) for a in (x, dy))
    out = _op("conv2d_backprop_filter", tdy, tx, filter_shape=[8, 6, 3, 3], pad_mode="pad", pad=[1, 1, 1, 1],
              stride=[2, 2], data_format=data_format)
    assert out.dtype == HALF[dtype]
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    scale = np.sqrt(batch * 25 * 9) * RTOL[dtype]  # sums of products of rounded values, then one rounding
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=scale)


@pytest.mark.parametrize("dtype", list(HALF))
@pytest.mark.parametrize("deterministic", ["OFF", "ON"])
def test_conv2d_backprop_filter_in_chunks(dtype, deterministic):
    # Note [bfloat16 backward weights]: a slice goes in chunks of images whose float32 copies fit in 512 KiB; here
    # 128 KiB an image, so chunks of 4: slices of 6 and 5 images on two threads (4 + 2, 4 + 1), or 4 + 4 + 3 in
    # the one slice of deterministic="ON"; the last, smaller chunk has a primitive of its own.
    ms.set_context(runtime_num_threads=2, deterministic=deterministic)
    try:
        batch = 11
        x = rounded(RNG.standard_normal(batch * 16 * 32 * 32).astype(np.float32), dtype).reshape(batch, 16, 32, 32)
        dy = rounded(RNG.standard_normal(batch * 16 * 32 * 32).astype(np.float32), dtype).reshape(batch, 16, 32, 32)
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        want = np.zeros((16, 16, 3, 3))
        for i in range(3):
            for j in range(3):  # padding 1: output (p, q) reads input (p + i - 1, q + j - 1)
                want[:, :, i, j] = np.einsum("nohw,nchw->oc", dy, xp[:, :, i:i + 32, j:j + 32])
        tx, tdy = (ms.Tensor(np.ascontiguousarray(a.transpose(0, 2, 3, 1))).astype(HALF[dtype]) for a in (x, dy))
        out = _op("conv2d_backprop_filter", tdy, tx, filter_shape=[16, 16, 3, 3], pad_mode="pad", pad=[1, 1, 1, 1],
                  data_format="NHWC")
        got = out.astype(ms.float32).asnumpy().astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=np.sqrt(batch * 1024 * 9) * RTOL[dtype])
    finally:
        ms.set_context(deterministic="OFF")


@pytest.mark.parametrize("dtype", list(HALF))
def test_conv3d_backprop_filter(dtype):
    x = rounded(RNG.standard_normal(3 * 2 * 5 * 4 * 6).astype(np.float32), dtype).reshape(3, 2, 5, 4, 6)
    dy = rounded(RNG.standard_normal(3 * 4 * 4 * 3 * 5).astype(np.float32), dtype).reshape(3, 4, 4, 3, 5)
    args = dict(filter_shape=[4, 2, 2, 2, 2], pad_mode="valid")
    want = _op("conv3d_backprop_filter", ms.Tensor(dy), ms.Tensor(x), **args).asnumpy()  # float64
    out = _op("conv3d_backprop_filter", *(ms.Tensor(a.astype(np.float32)).astype(HALF[dtype]) for a in (dy, x)),
              **args)
    assert out.dtype == HALF[dtype]
    got = out.astype(ms.float32).asnumpy()
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype] * np.abs(want).max())


# Note [float16 products] / Note [float16 convolutions]: float16 matmul, batch_matmul, dense and convolution
# forward / backward data run float32 oneDNN primitives on slices (of the batch, or of the rows) converted on the
# thread pool. Sizes above 16 MFLOP are split over the threads; smaller ones, partly broadcast batch dims and a
# transposed first operand of a single product run as one slice. enable_reduce_precision=False shows that the
# float16 kernel itself runs (the generic converting kernel would raise TypeError).


@pytest.fixture
def no_substitution():
    ms.set_context(enable_reduce_precision=False)
    yield
    ms.set_context(enable_reduce_precision=True)


def _f16(shape):
    x = rounded((RNG.standard_normal(int(np.prod(shape)))).astype(np.float32), "float16").reshape(shape)
    return x, ms.Tensor(x.astype(np.float32)).astype(ms.float16)


def _check_f16(out, want):
    assert out.dtype == ms.float16
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    # float32 sums of exact products, rounded once to float16
    np.testing.assert_allclose(got, want, rtol=RTOL["float16"], atol=1e-4 * np.abs(want).max())


def _op_t(a, transposed):
    return np.swapaxes(a, -1, -2) if transposed else a


@pytest.mark.parametrize("shape_a,shape_b", [((37, 29), (29, 41)), ((301, 170), (170, 190)), ((1, 250), (250, 300)),
                                             ((128, 2049), (2049, 512))])  # k split when a is transposed
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_float16_matmul(no_substitution, shape_a, shape_b, ta, tb):
    a, ta_ms = _f16(shape_a[::-1] if ta else shape_a)
    b, tb_ms = _f16(shape_b[::-1] if tb else shape_b)
    out = _op("matmul", ta_ms, tb_ms, transpose_a=ta, transpose_b=tb)
    _check_f16(out, _op_t(a, ta) @ _op_t(b, tb))


@pytest.mark.parametrize("shape_a,shape_b", [
    ((6, 33, 70), (6, 70, 45)),          # one slice (small)
    ((20, 64, 96), (20, 96, 80)),        # both operands sliced by batch
    ((20, 64, 96), (1, 96, 80)),         # b broadcast: converted once
    ((1, 64, 96), (21, 96, 80)),         # a broadcast
    ((2, 1, 64, 96), (1, 3, 96, 80)),    # partly broadcast: one slice
    ((2, 3, 129, 96), (2, 3, 96, 81)),   # two batch dims, odd sizes
])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_float16_batch_matmul(no_substitution, shape_a, shape_b, ta, tb):
    sa = shape_a[:-2] + shape_a[-2:][::-1] if ta else shape_a
    sb = shape_b[:-2] + shape_b[-2:][::-1] if tb else shape_b
    a, am = _f16(sa)
    b, bm = _f16(sb)
    out = _op("batch_matmul", am, bm, transpose_a=ta, transpose_b=tb)
    _check_f16(out, np.matmul(_op_t(a, ta), _op_t(b, tb)))


@pytest.mark.parametrize("x_shape,units", [((7, 13), 5), ((3, 101, 200), 300), ((1, 640), 1000)])
def test_float16_dense(no_substitution, x_shape, units):
    x, xm = _f16(x_shape)
    w, wm = _f16((units, x_shape[-1]))
    bias, bm = _f16((units,))
    out = _op("dense", xm, wm, bm)
    _check_f16(out, x @ w.T + bias)


def _conv_case(batch, data_format, channels):
    cin, cout = channels
    x = rounded(RNG.standard_normal(batch * cin * 15 * 13).astype(np.float32), "float16").reshape(batch, cin, 15, 13)
    w = rounded(RNG.standard_normal(cout * cin * 3 * 3).astype(np.float32), "float16").reshape(cout, cin, 3, 3)
    to = (lambda a: a) if data_format == "NCHW" else (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1)))
    return x, w, to


CONV = dict(pad_mode="pad", pad=[1, 1, 1, 1], stride=[2, 1])


@pytest.mark.parametrize("batch", [1, 5, 32])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("channels", [(3, 8), (16, 24)])
def test_float16_conv2d_forward_and_backprop_input(no_substitution, batch, data_format, channels):
    x, w, to = _conv_case(batch, data_format, channels)
    half = (lambda a: ms.Tensor(a.astype(np.float32)).astype(ms.float16))
    args = dict(CONV, data_format=data_format)
    want = _op("conv2d", ms.Tensor(to(x)), ms.Tensor(w), **args).asnumpy()  # float64 reference loops
    _check_f16(_op("conv2d", half(to(x)), half(w), **args), want)
    dy = rounded(RNG.standard_normal(want.size).astype(np.float32), "float16").reshape(want.shape)
    want_dx = _op("conv2d_backprop_input", ms.Tensor(dy), ms.Tensor(w), input_shape=list(to(x).shape),
                  **args).asnumpy()
    _check_f16(_op("conv2d_backprop_input", half(dy), half(w), input_shape=list(to(x).shape), **args), want_dx)


@pytest.mark.parametrize("batch", [1, 32])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_float16_conv2d_bias_adds_the_bias_in_each_slice(no_substitution, batch, data_format):
    x, w, to = _conv_case(batch, data_format, (16, 24))
    bias = rounded(RNG.standard_normal(24).astype(np.float32) * 4, "float16")
    half = (lambda a: ms.Tensor(a.astype(np.float32)).astype(ms.float16))
    args = dict(CONV, data_format=data_format)
    want = _op("conv2d_bias", ms.Tensor(to(x)), ms.Tensor(w), ms.Tensor(bias), **args).asnumpy()  # float64 loops
    _check_f16(_op("conv2d_bias", half(to(x)), half(w), half(bias), **args), want)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_bfloat16_conv2d_bias_adds_the_bias_in_the_primitive(data_format):
    x, w, to = _conv_case(4, data_format, (16, 24))
    x, w = rounded(x.astype(np.float32), "bfloat16"), rounded(w.astype(np.float32), "bfloat16")
    bias = rounded(RNG.standard_normal(24).astype(np.float32) * 4, "bfloat16")
    bf16 = (lambda a: ms.Tensor(a.astype(np.float32)).astype(ms.bfloat16))
    args = dict(CONV, data_format=data_format)
    want = _op("conv2d_bias", ms.Tensor(to(x)), ms.Tensor(w), ms.Tensor(bias), **args).asnumpy()  # float64 loops
    out = _op("conv2d_bias", bf16(to(x)), bf16(w), bf16(bias), **args)
    assert out.dtype == ms.bfloat16
    got = out.astype(ms.float32).asnumpy().astype(np.float64)
    # float32 sums rounded once to bfloat16 (8 significant bits)
    np.testing.assert_allclose(got, want, rtol=2 ** -7, atol=2 ** -7 * np.abs(want).max())


def test_float16_conv3d_forward_and_backprop_input(no_substitution):
    x = rounded(RNG.standard_normal(4 * 2 * 5 * 4 * 6).astype(np.float32), "float16").reshape(4, 2, 5, 4, 6)
    w = rounded(RNG.standard_normal(3 * 2 * 2 * 2 * 2).astype(np.float32), "float16").reshape(3, 2, 2, 2, 2)
    half = (lambda a: ms.Tensor(a.astype(np.float32)).astype(ms.float16))
    args = dict(pad_mode="valid")
    want = _op("conv3d", ms.Tensor(x), ms.Tensor(w), **args).asnumpy()
    _check_f16(_op("conv3d", half(x), half(w), **args), want)
    dy = rounded(want.astype(np.float32), "float16")
    want_dx = _op("conv3d_backprop_input", ms.Tensor(dy), ms.Tensor(w), input_shape=list(x.shape), **args).asnumpy()
    _check_f16(_op("conv3d_backprop_input", half(dy), half(w), input_shape=list(x.shape), **args), want_dx)


@pytest.mark.parametrize("batch", [1, 32])
def test_float16_fused_epilogue_in_graph_matches_eager(no_substitution, batch):
    # GRAPH fuses the activation into the convolution and the dense (oneDNN post-ops of the float32 slices)
    _, xm = _f16((batch, 16, 15, 13))
    _, wm = _f16((24, 16, 3, 3))
    _, dw = _f16((10, 24 * 8 * 13))
    _, db = _f16((10,))

    def step(x, w, dense_w, dense_b):
        y = ms.ops.relu(_op("conv2d", x, w, **CONV))
        return ms.ops.relu(_op("dense", y.reshape(batch, -1), dense_w, dense_b))

    want = step(xm, wm, dw, db)
    got = ms.jit(step)(xm, wm, dw, db)
    assert got.dtype == ms.float16
    np.testing.assert_allclose(got.astype(ms.float32).asnumpy(), want.astype(ms.float32).asnumpy(), rtol=2e-3,
                               atol=1e-3 * np.abs(want.astype(ms.float32).asnumpy()).max())
