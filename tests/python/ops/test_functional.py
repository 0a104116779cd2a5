"""The functional API and the Primitive classes map onto the right catalogue
ops with the right attributes (and give NumPy's answers). Op numerics are the
op engineers' tests; nothing here is registered with harness.covers."""
import numpy as np
import pytest

import msrt as ms
from msrt import _C, ops


class _Calls:
    """The op calls (name, parsed attributes) recorded so far, outer call first;
    a live view of the trace."""

    def __init__(self, trace):
        self._trace = trace

    def __getitem__(self, index):
        return self._trace.calls()[index]

    def __len__(self):
        return len(self._trace.calls())

    def clear(self):
        self._trace.start()


@pytest.fixture
def calls():
    """Records every op call the test makes, the calls inside composites included."""
    trace = _C.CallTrace()
    trace.start()
    yield _Calls(trace)
    trace.stop()


def T(a, dtype=np.float32):  # noqa: N802 - a short constructor for tests
    return ms.Tensor(np.asarray(a, dtype=dtype))


def arr(t):
    return np.asarray(t.asnumpy())


RNG = np.random.default_rng(0)
A = RNG.uniform(0.5, 2.0, size=(2, 3)).astype(np.float32)
B = RNG.uniform(0.5, 2.0, size=(2, 3)).astype(np.float32)


@pytest.mark.parametrize("fn, op, ref", [
    (ops.add, "add", np.add), (ops.sub, "sub", np.subtract), (ops.mul, "mul", np.multiply),
    (ops.div, "div", np.true_divide), (ops.pow, "pow", np.power), (ops.maximum, "maximum", np.maximum),
    (ops.minimum, "minimum", np.minimum), (ops.equal, "equal", np.equal), (ops.ne, "not_equal", np.not_equal),
    (ops.not_equal, "not_equal", np.not_equal), (ops.less, "less", np.less), (ops.lt, "less", np.less),
    (ops.less_equal, "less_equal", np.less_equal), (ops.le, "less_equal", np.less_equal),
    (ops.greater, "greater", np.greater), (ops.gt, "greater", np.greater),
    (ops.greater_equal, "greater_equal", np.greater_equal), (ops.ge, "greater_equal", np.greater_equal),
])
def test_binary_functions(calls, fn, op, ref):
    out = fn(T(A), T(B))
    assert calls[-1] == (op, {})
    np.testing.assert_allclose(arr(out), ref(A, B), rtol=1e-5)
    out = fn(T(A), 2)  # a scalar operand becomes a 0-d tensor of the tensor's dtype
    np.testing.assert_allclose(arr(out), ref(A, np.float32(2)), rtol=1e-5)
    out = fn(2, T(A))
    np.testing.assert_allclose(arr(out), ref(np.float32(2), A), rtol=1e-5)


@pytest.mark.parametrize("fn, op, ref", [
    (ops.neg, "neg", np.negative), (ops.abs, "abs", np.abs), (ops.exp, "exp", np.exp), (ops.log, "log", np.log),
    (ops.sqrt, "sqrt", np.sqrt), (ops.rsqrt, "rsqrt", lambda x: 1 / np.sqrt(x)), (ops.square, "square", np.square),
    (ops.reciprocal, "reciprocal", np.reciprocal), (ops.sign, "sign", np.sign),
    (ops.relu, "relu", lambda x: np.maximum(x, 0)), (ops.relu6, "relu6", lambda x: np.clip(x, 0, 6)),
    (ops.sigmoid, "sigmoid", lambda x: 1 / (1 + np.exp(-x))), (ops.tanh, "tanh", np.tanh),
    (ops.silu, "silu", lambda x: x / (1 + np.exp(-x))),
])
def test_unary_functions(calls, fn, op, ref):
    x = A if op in ("log", "sqrt", "rsqrt") else A - 1
    out = fn(T(x))
    assert calls[-1] == (op, {})
    np.testing.assert_allclose(arr(out), ref(x), rtol=1e-5, atol=1e-6)


def test_logical_functions(calls):
    a = ms.Tensor([True, False, True])
    b = ms.Tensor([True, True, False])
    np.testing.assert_array_equal(arr(ops.logical_and(a, b)), [True, False, False])
    assert calls[-1][0] == "logical_and"
    np.testing.assert_array_equal(arr(ops.logical_or(a, b)), [True, True, True])
    np.testing.assert_array_equal(arr(ops.logical_xor(a, b)), [False, True, True])
    np.testing.assert_array_equal(arr(ops.logical_not(a)), [False, True, False])
    assert calls[-1][0] == "logical_not"


def test_select_where_cast_clamp(calls):
    cond = ms.Tensor(A > 1)
    np.testing.assert_allclose(arr(ops.select(cond, T(A), T(B))), np.where(A > 1, A, B))
    assert calls[-1][0] == "select"
    np.testing.assert_allclose(arr(ops.where(cond, T(A), 0.0)), np.where(A > 1, A, 0))
    out = ops.cast(T(A), ms.int32)
    assert calls[-1] == ("cast", {"dtype": "int32"}) and out.dtype == ms.int32
    np.testing.assert_allclose(arr(ops.clamp(T(A), 0.8, 1.5)), np.clip(A, 0.8, 1.5))
    assert [c[0] for c in calls[-2:]] == ["maximum", "minimum"]
    np.testing.assert_allclose(arr(ops.addn([T(A), T(B), T(A)])), A + B + A, rtol=1e-6)


def test_gelu_approximate_attribute(calls):
    x = T(A - 1)
    ops.gelu(x)
    assert calls[-1] == ("gelu", {"approximate": False})
    ops.gelu(x, approximate="tanh")
    assert calls[-1] == ("gelu", {"approximate": True})
    ops.GeLU()(x)
    assert calls[-1] == ("gelu", {"approximate": True})
    with pytest.raises(ValueError, match="approximate"):
        ops.gelu(x, approximate="fast")


def test_div_rounding_modes():
    a = T([7.0, -7.0, 5.5])
    b = T([2.0, 2.0, 2.0])
    np.testing.assert_array_equal(arr(ops.div(a, b, rounding_mode="floor")), [3, -4, 2])
    np.testing.assert_array_equal(arr(ops.div(a, b, rounding_mode="trunc")), [3, -3, 2])
    i = ops.div(T([7, -7], np.int32), T([2, 2], np.int32), rounding_mode="floor")
    assert i.dtype == ms.int32
    np.testing.assert_array_equal(arr(i), [3, -4])
    with pytest.raises(ValueError, match="rounding_mode"):
        ops.div(a, b, rounding_mode="round")


def test_reductions(calls):
    x = T(A)
    np.testing.assert_allclose(arr(ops.sum(x)), A.sum(), rtol=1e-5)
    assert calls[-1] == ("reduce_sum", {"axis": [], "keep_dims": False})
    np.testing.assert_allclose(arr(ops.sum(x, 1, keepdim=True)), A.sum(1, keepdims=True), rtol=1e-5)
    assert calls[-1] == ("reduce_sum", {"axis": [1], "keep_dims": True})
    np.testing.assert_allclose(arr(ops.mean(x, (0, 1))), A.mean(), rtol=1e-5)
    assert calls[-1] == ("reduce_mean", {"axis": [0, 1], "keep_dims": False})
    np.testing.assert_allclose(arr(ops.prod(x, 0)), A.prod(0), rtol=1e-5)
    assert calls[-1][0] == "reduce_prod"
    np.testing.assert_allclose(arr(ops.amax(x, 1)), A.max(1))
    assert calls[-1] == ("reduce_max", {"axis": [1], "keep_dims": False})
    np.testing.assert_allclose(arr(ops.amin(x)), A.min())
    values, index = ops.max(x, axis=1)
    np.testing.assert_allclose(arr(values), A.max(1))
    np.testing.assert_array_equal(arr(index), A.argmax(1))
    values, index = ops.min(x, axis=0, keepdims=True)
    np.testing.assert_allclose(arr(values), A.min(0, keepdims=True))
    np.testing.assert_array_equal(arr(index), A.argmin(0)[None])
    np.testing.assert_array_equal(arr(ops.argmax(x, dim=1)), A.argmax(1))
    assert calls[-1] == ("argmax", {"axis": 1, "keep_dims": False, "output_type": "int32"})
    np.testing.assert_array_equal(arr(ops.argmax(x)), A.argmax())
    np.testing.assert_array_equal(arr(ops.argmin(x, 0)), A.argmin(0))
    assert ops.sum(x, dtype=ms.float64).dtype == ms.float64


def test_matmul_family(calls):
    a = RNG.normal(size=(2, 3)).astype(np.float32)
    b = RNG.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(arr(ops.matmul(T(a), T(b))), a @ b, rtol=1e-5)
    assert calls[-1] == ("matmul", {"transpose_a": False, "transpose_b": False})
    batch_a = RNG.normal(size=(5, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(arr(ops.matmul(T(batch_a), T(b))), batch_a @ b, rtol=1e-5, atol=1e-6)
    assert calls[-1][0] == "batch_matmul"
    batch_b = RNG.normal(size=(5, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(arr(ops.bmm(T(batch_a), T(batch_b))), batch_a @ batch_b, rtol=1e-5, atol=1e-6)
    assert calls[-1] == ("batch_matmul", {"transpose_a": False, "transpose_b": False})
    np.testing.assert_allclose(arr(ops.mm(T(a), T(b))), a @ b, rtol=1e-5)
    ops.MatMul(transpose_b=True)(T(a), T(b.T))
    assert calls[-1] == ("matmul", {"transpose_a": False, "transpose_b": True})
    ops.BatchMatMul(transpose_a=True)(T(batch_a.transpose(0, 2, 1)), T(batch_b))
    assert calls[-1] == ("batch_matmul", {"transpose_a": True, "transpose_b": False})
    w = RNG.normal(size=(4, 3)).astype(np.float32)
    bias = RNG.normal(size=(4,)).astype(np.float32)
    np.testing.assert_allclose(arr(ops.dense(T(a), T(w), T(bias))), a @ w.T + bias, rtol=1e-5, atol=1e-6)
    assert calls[-1] == ("dense", {})
    np.testing.assert_allclose(arr(ops.dense(T(a), T(w))), a @ w.T, rtol=1e-5, atol=1e-6)
    x3 = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(arr(ops.dense(T(x3), T(w), T(bias))), x3 @ w.T + bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(ops.bias_add(T(a.T), T([1.0, 2.0]))), a.T + [1.0, 2.0], rtol=1e-6)
    assert calls[-1] == ("bias_add", {"data_format": "NCHW"})


def test_conv2d_attributes(calls):
    x = T(RNG.normal(size=(1, 2, 5, 5)))
    w = T(RNG.normal(size=(4, 2, 3, 3)))
    out = ops.conv2d(x, w)
    assert calls[-1] == ("conv2d", {"stride": [1, 1], "pad_mode": "valid", "pad": [0, 0, 0, 0],
                                    "dilation": [1, 1], "group": 1, "data_format": "NCHW"})
    assert out.shape == (1, 4, 3, 3)
    out = ops.conv2d(x, w, T(np.ones(4)), stride=2, pad_mode="pad", padding=1)
    assert calls[-2] == ("conv2d", {"stride": [2, 2], "pad_mode": "pad", "pad": [1, 1, 1, 1],
                                    "dilation": [1, 1], "group": 1, "data_format": "NCHW"})
    assert calls[-1] == ("bias_add", {"data_format": "NCHW"}) and out.shape == (1, 4, 3, 3)
    ops.conv2d(x, w, padding=(1, 2))
    assert calls[-1][1]["pad_mode"] == "pad" and calls[-1][1]["pad"] == [1, 1, 2, 2]
    ops.conv2d(x, w, pad_mode="same")
    assert calls[-1][1]["pad_mode"] == "same"
    conv = ops.Conv2D(out_channel=4, kernel_size=3, pad_mode="pad", pad=(1, 1, 0, 0), stride=(1, 1, 2, 2),
                      dilation=1, group=1)
    out = conv(x, w)
    assert calls[-1] == ("conv2d", {"stride": [2, 2], "pad_mode": "pad", "pad": [1, 1, 0, 0],
                                    "dilation": [1, 1], "group": 1, "data_format": "NCHW"})
    ops.Conv2D(out_channel=4, kernel_size=3, data_format="NHWC")(T(RNG.normal(size=(1, 5, 5, 2))), w)
    assert calls[-1][1]["data_format"] == "NHWC"
    with pytest.raises(ValueError, match="'pad' must be zero"):
        ops.Conv2D(4, 3, pad_mode="valid", pad=1)
    with pytest.raises(ValueError, match="pad_mode"):
        ops.Conv2D(4, 3, pad_mode="full")


def test_pooling_attributes(calls):
    x = T(RNG.normal(size=(1, 2, 6, 6)))
    out = ops.max_pool2d(x, 2)
    assert calls[-1] == ("max_pool2d", {"kernel_size": [2, 2], "strides": [2, 2], "pad_mode": "valid",
                                        "data_format": "NCHW"})
    assert out.shape == (1, 2, 3, 3)
    out = ops.avg_pool2d(x, kernel_size=3, stride=1)
    assert calls[-1] == ("avg_pool2d", {"kernel_size": [3, 3], "strides": [1, 1], "pad_mode": "valid",
                                        "data_format": "NCHW"})
    ops.MaxPool(kernel_size=2, strides=2, pad_mode="SAME")(x)
    assert calls[-1] == ("max_pool2d", {"kernel_size": [2, 2], "strides": [2, 2], "pad_mode": "same",
                                        "data_format": "NCHW"})
    ops.AvgPool(kernel_size=(2, 3), strides=1, data_format="NHWC")(x)
    assert calls[-1] == ("avg_pool2d", {"kernel_size": [2, 3], "strides": [1, 1], "pad_mode": "valid",
                                        "data_format": "NHWC"})
    with pytest.raises(NotImplementedError, match="padding"):
        ops.max_pool2d(x, 2, padding=1)


def test_batch_norm_attributes_and_input_order(calls):
    x = T(RNG.normal(size=(4, 3, 2, 2)))
    scale, bias = T(np.ones(3)), T(np.zeros(3))
    mean, var = T(np.zeros(3)), T(np.ones(3))
    y = ops.batch_norm(x, mean, var, scale, bias, training=True, momentum=0.2, eps=1e-3)
    assert calls[1] == ("batch_norm", {"is_training": True, "epsilon": 1e-3, "momentum": 0.2, "data_format": "NCHW"})
    xs = arr(x)
    expected = (xs - xs.mean((0, 2, 3), keepdims=True)) / np.sqrt(xs.var((0, 2, 3), keepdims=True) + 1e-3)
    np.testing.assert_allclose(arr(y), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arr(mean), 0.2 * xs.mean((0, 2, 3)), rtol=1e-4, atol=1e-5)
    outs = ops.BatchNorm(is_training=False)(x, scale, bias, mean, var)
    assert len(outs) == 5
    assert calls[-1] == ("batch_norm", {"is_training": False, "epsilon": 1e-5, "momentum": 0.1, "data_format": "NCHW"})


def test_softmax_and_dropout(calls):
    x = T(A)
    e = np.exp(A - A.max(-1, keepdims=True))
    np.testing.assert_allclose(arr(ops.softmax(x)), e / e.sum(-1, keepdims=True), rtol=1e-5)
    assert calls[-1] == ("softmax", {"axis": -1})
    ops.log_softmax(x, 0)
    assert calls[-1] == ("log_softmax", {"axis": 0})
    ops.Softmax(axis=0)(x)
    assert calls[-1] == ("softmax", {"axis": 0})
    ops.LogSoftmax()(x)
    assert calls[-1] == ("log_softmax", {"axis": -1})
    big = T(np.ones((100, 100)))
    y = ops.dropout(big, p=0.25)
    assert calls[-1] == ("dropout", {"keep_prob": 0.75})
    values = np.unique(arr(y))
    assert set(values.tolist()) <= {0.0, np.float32(1 / 0.75)}
    n = len(calls)
    assert ops.dropout(big, p=0.3, training=False) is big and len(calls) == n
    out, mask = ops.Dropout(keep_prob=0.9)(big)
    assert calls[-1] == ("dropout", {"keep_prob": 0.9}) and mask.shape == (100, 100)


def test_shape_functions(calls):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = T(a)
    np.testing.assert_array_equal(arr(ops.reshape(x, (4, 6))), a.reshape(4, 6))
    assert calls[-1] == ("reshape", {"shape": [4, 6]})
    np.testing.assert_array_equal(arr(ops.transpose(x, (2, 0, 1))), a.transpose(2, 0, 1))
    assert calls[-1] == ("transpose", {"perm": [2, 0, 1]})
    np.testing.assert_array_equal(arr(ops.permute(x, (1, 0, 2))), a.transpose(1, 0, 2))
    assert ops.expand_dims(x, 0).shape == (1, 2, 3, 4)
    assert calls[-1] == ("expand_dims", {"axis": 0})
    assert ops.unsqueeze(x, -1).shape == (2, 3, 4, 1)
    assert ops.squeeze(T(np.zeros((1, 2, 1)))).shape == (2,)
    assert calls[-1] == ("squeeze", {"axis": []})
    assert ops.Squeeze(2)(T(np.zeros((1, 2, 1)))).shape == (1, 2)
    assert calls[-1] == ("squeeze", {"axis": [2]})
    assert ops.flatten(x).shape == (2, 12)
    assert calls[-1] == ("flatten", {})
    assert ops.flatten(x, start_dim=0).shape == (24,)
    assert ops.flatten(x, start_dim=0, end_dim=1).shape == (6, 4)
    assert ops.Flatten()(x).shape == (2, 12)
    out = ops.concat((x, x), axis=1)
    assert calls[-1] == ("concat", {"axis": 1})
    np.testing.assert_array_equal(arr(out), np.concatenate((a, a), 1))
    np.testing.assert_array_equal(arr(ops.cat([x, x])), np.concatenate((a, a)))
    np.testing.assert_array_equal(arr(ops.Concat(2)((x, x))), np.concatenate((a, a), 2))
    out = ops.stack([x, x], axis=-1)
    assert calls[-1] == ("stack", {"axis": -1})
    np.testing.assert_array_equal(arr(out), np.stack((a, a), -1))
    np.testing.assert_array_equal(arr(ops.Stack(1)([x, x])), np.stack((a, a), 1))


def test_split_variants(calls):
    a = np.arange(24, dtype=np.float32).reshape(6, 4)
    x = T(a)
    parts = ops.split(x, 2)
    assert calls[-1] == ("split", {"axis": 0, "output_num": 3})
    assert len(parts) == 3 and all(p.shape == (2, 4) for p in parts)
    parts = ops.split(x, 4)
    assert [p.shape for p in parts] == [(4, 4), (2, 4)]
    np.testing.assert_array_equal(arr(parts[1]), a[4:])
    parts = ops.split(x, [1, 3], axis=1)
    np.testing.assert_array_equal(arr(parts[0]), a[:, :1])
    np.testing.assert_array_equal(arr(parts[1]), a[:, 1:])
    parts = ops.Split(axis=1, output_num=2)(x)
    assert calls[-1] == ("split", {"axis": 1, "output_num": 2}) and len(parts) == 2
    with pytest.raises(ValueError, match="add up"):
        ops.split(x, [1, 2])


def test_gather_one_hot_broadcast_tile_strided_slice(calls):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = T(a)
    idx = ms.Tensor(np.array([2, 0], np.int32))
    np.testing.assert_array_equal(arr(ops.gather(x, idx, 1)), a[:, [2, 0]])
    assert calls[-1] == ("gather", {"axis": 1})
    np.testing.assert_array_equal(arr(ops.Gather()(x, idx, 0)), a[[2, 0]])
    out = ops.one_hot(ms.Tensor([0, 2]), 3)
    assert calls[-1] == ("one_hot", {"depth": 3, "on_value": 1.0, "off_value": 0.0, "axis": -1,
                                     "dtype": "int64"})
    assert ops.one_hot(ms.Tensor([0]), 2, 1.0, 0.0).dtype == ms.float32
    np.testing.assert_array_equal(arr(out), np.eye(3)[[0, 2]])
    out = ops.OneHot()(ms.Tensor([1]), 2, T(5.0, np.float16), T(-1.0, np.float16))
    assert calls[-1][1]["dtype"] == "float16" and calls[-1][1]["on_value"] == 5.0
    np.testing.assert_array_equal(arr(out), [[-1, 5]])
    out = ops.broadcast_to(T(np.ones((3, 1))), (2, 3, 4))
    assert calls[-1] == ("broadcast_to", {"shape": [2, 3, 4]}) and out.shape == (2, 3, 4)
    assert ops.BroadcastTo((-1, 5))(T(np.ones((3, 1)))).shape == (3, 5)
    out = ops.tile(x, (2,))
    assert calls[-1] == ("tile", {"multiples": [1, 2]})
    np.testing.assert_array_equal(arr(out), np.tile(a, (1, 2)))
    out = ops.strided_slice(x, (0, 1), (3, 4), (2, 2))
    assert calls[-1] == ("strided_slice", {"begin": [0, 1], "end": [3, 4], "strides": [2, 2]})
    np.testing.assert_array_equal(arr(out), a[0:3:2, 1:4:2])
    np.testing.assert_array_equal(arr(ops.StridedSlice(shrink_axis_mask=1)(x, (1, 0), (2, 4), (1, 1))), a[1])
    np.testing.assert_array_equal(arr(ops.slice(x, (1, 1), (2, -1))), a[1:3, 1:])


def test_creation_functions(calls):
    out = ops.zeros((2, 3))
    assert calls[-1] == ("fill", {"shape": [2, 3], "value": 0.0, "dtype": "float32"})
    np.testing.assert_array_equal(arr(out), np.zeros((2, 3)))
    out = ops.ones(4, ms.int32)
    assert calls[-1] == ("fill", {"shape": [4], "value": 1.0, "dtype": "int32"}) and out.dtype == ms.int32
    out = ops.fill(ms.float16, (2,), 3)
    assert calls[-1] == ("fill", {"shape": [2], "value": 3.0, "dtype": "float16"})
    assert ops.full((2,), 7).dtype == ms.int64 and ops.full((2,), 7.5).dtype == ms.float32
    assert ops.full((2,), True).dtype == ms.bool_
    x = T(A)
    ops.zeros_like(x)
    assert calls[-1] == ("zeros_like", {})
    ops.ones_like(x)
    assert calls[-1] == ("ones_like", {})
    assert ops.zeros_like(x, dtype=ms.int32).dtype == ms.int32
    np.testing.assert_array_equal(arr(ops.full_like(x, 2)), np.full((2, 3), 2))
    np.testing.assert_array_equal(arr(ops.arange(5)), np.arange(5))
    assert ops.arange(0, 1, 0.5).dtype == ms.float32
    np.testing.assert_array_equal(arr(ops.eye(2)), np.eye(2))
    np.testing.assert_array_equal(arr(ops.Zeros()((2, 2), ms.float32)), np.zeros((2, 2)))
    np.testing.assert_array_equal(arr(ops.Ones()(3, ms.int64)), np.ones(3))
    np.testing.assert_array_equal(arr(ops.Fill()(ms.int32, (2,), 4)), [4, 4])
    assert ops.ZerosLike()(x).shape == (2, 3) and ops.OnesLike()(x).shape == (2, 3)


def _log_softmax(x):
    z = x - x.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def test_losses(calls):
    logits = RNG.normal(size=(4, 5)).astype(np.float32)
    labels = np.array([0, 3, 4, 1], np.int32)
    logp = _log_softmax(logits.astype(np.float64))
    nll = -logp[np.arange(4), labels]
    out = ops.cross_entropy(T(logits), ms.Tensor(labels))
    assert ("sparse_softmax_cross_entropy", {}) in calls
    np.testing.assert_allclose(arr(out), nll.mean(), rtol=1e-5)
    np.testing.assert_allclose(arr(ops.cross_entropy(T(logits), ms.Tensor(labels), reduction="sum")), nll.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(arr(ops.cross_entropy(T(logits), ms.Tensor(labels), reduction="none")), nll,
                               rtol=1e-5)
    weight = np.array([1.0, 2.0, 0.5, 1.0, 3.0], np.float32)
    w = weight[labels]
    out = ops.cross_entropy(T(logits), ms.Tensor(labels), weight=T(weight))
    np.testing.assert_allclose(arr(out), (nll * w).sum() / w.sum(), rtol=1e-5)
    out = ops.cross_entropy(T(logits), ms.Tensor(np.array([0, 3, -100, 1], np.int32)))
    keep = [0, 1, 3]
    np.testing.assert_allclose(arr(out), nll[keep].mean(), rtol=1e-5)
    out = ops.cross_entropy(T(logits), ms.Tensor(labels), label_smoothing=0.1)
    smooth = -logp.mean(1)
    np.testing.assert_allclose(arr(out), (0.9 * nll + 0.1 * smooth).mean(), rtol=1e-5)
    probs = np.eye(5, dtype=np.float32)[labels]
    np.testing.assert_allclose(arr(ops.cross_entropy(T(logits), T(probs))), nll.mean(), rtol=1e-5)
    calls.clear()
    out = ops.nll_loss(T(logp), ms.Tensor(labels))
    assert ("nll_loss", {"reduction": "none"}) in calls
    np.testing.assert_allclose(arr(out), nll.mean(), rtol=1e-5)
    out = ops.nll_loss(T(logp), ms.Tensor(labels), reduction="none")
    np.testing.assert_allclose(arr(out), nll, rtol=1e-5)
    x4 = RNG.normal(size=(2, 3, 2, 2)).astype(np.float32)
    t4 = RNG.integers(0, 3, size=(2, 2, 2)).astype(np.int32)
    lp4 = np.log(np.exp(x4) / np.exp(x4).sum(1, keepdims=True))
    ref = -np.take_along_axis(lp4, t4[:, None], 1)[:, 0]
    np.testing.assert_allclose(arr(ops.cross_entropy(T(x4), ms.Tensor(t4), reduction="none")), ref, rtol=1e-5)
    calls.clear()
    out = ops.mse_loss(T(A), T(B), reduction="sum")
    assert calls[0] == ("mse_loss", {"reduction": "sum"})
    np.testing.assert_allclose(arr(out), ((A - B) ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(arr(ops.l1_loss(T(A), T(B))), np.abs(A - B).mean(), rtol=1e-5)
    y = (B > 1).astype(np.float32)
    bce = np.maximum(A, 0) - A * y + np.log1p(np.exp(-np.abs(A)))
    np.testing.assert_allclose(arr(ops.binary_cross_entropy_with_logits(T(A), T(y))), bce.mean(), rtol=1e-5)
    with pytest.raises(ValueError, match="reduction"):
        ops.mse_loss(T(A), T(B), reduction="avg")


def test_loss_primitives(calls):
    logits = RNG.normal(size=(3, 4)).astype(np.float32)
    labels = np.array([1, 0, 3], np.int32)
    logp = _log_softmax(logits.astype(np.float64))
    nll = -logp[np.arange(3), labels]
    loss = ops.SparseSoftmaxCrossEntropyWithLogits()(T(logits), ms.Tensor(labels))
    assert ("sparse_softmax_cross_entropy", {}) in calls and loss.shape == ()
    np.testing.assert_allclose(arr(loss), nll.mean(), rtol=1e-5)
    grad = ops.SparseSoftmaxCrossEntropyWithLogits(is_grad=True)(T(logits), ms.Tensor(labels))
    np.testing.assert_allclose(arr(grad), (np.exp(logp) - np.eye(4)[labels]) / 3, rtol=1e-5, atol=1e-6)
    onehot = np.eye(4, dtype=np.float32)[labels]
    loss, backprop = ops.SoftmaxCrossEntropyWithLogits()(T(logits), T(onehot))
    np.testing.assert_allclose(arr(loss), nll, rtol=1e-5)
    np.testing.assert_allclose(arr(backprop), np.exp(logp) - onehot, rtol=1e-5, atol=1e-6)
    loss, total = ops.NLLLoss()(T(logp), ms.Tensor(labels), T(np.ones(4)))
    np.testing.assert_allclose(arr(loss), nll.mean(), rtol=1e-5)
    np.testing.assert_allclose(arr(total), 3.0)


def test_in_place_functions_and_optimizer_primitives(calls):
    var = ms.Parameter(T([1.0, 2.0]), name="v")
    out = ops.assign(var, T([3.0, 4.0]))
    assert calls[-1] == ("assign", {}) and out is var
    np.testing.assert_array_equal(arr(var), [3, 4])
    ops.assign_add(var, T([1.0, 1.0]))
    assert calls[-1] == ("assign_add", {})
    ops.assign_sub(var, 0.5)
    np.testing.assert_array_equal(arr(var), [3.5, 4.5])
    ops.Assign()(var, T([0.0, 0.0]))
    ops.AssignAdd()(var, T([2.0, 2.0]))
    ops.AssignSub()(var, T([1.0, 1.0]))
    np.testing.assert_array_equal(arr(var), [1, 1])

    accum = ms.Parameter(T([0.5, 0.5]), name="accum")
    grad = T([1.0, 2.0])
    ops.ApplyMomentum()(var, accum, 0.1, grad, 0.9)
    assert calls[-1] == ("apply_momentum", {"use_nesterov": False})
    new_accum = 0.5 * 0.9 + np.array([1.0, 2.0])
    np.testing.assert_allclose(arr(accum), new_accum, rtol=1e-6)
    np.testing.assert_allclose(arr(var), 1 - 0.1 * new_accum, rtol=1e-6)
    ops.ApplyMomentum(use_nesterov=True)(var, accum, T(0.1), grad, T(0.9))
    assert calls[-1] == ("apply_momentum", {"use_nesterov": True})
    before = arr(var).copy()
    ops.ApplyGradientDescent()(var, 0.5, grad)
    assert calls[-1] == ("apply_gradient_descent", {})
    np.testing.assert_allclose(arr(var), before - 0.5 * np.array([1.0, 2.0]), rtol=1e-6)
    m = ms.Parameter(T([0.0, 0.0]), name="m")
    v = ms.Parameter(T([0.0, 0.0]), name="vv")
    outs = ops.Adam()(var, m, v, 0.9, 0.999, 0.01, 0.9, 0.999, 1e-8, grad)
    assert calls[-1] == ("adam", {"use_nesterov": False}) and outs[0] is var
    np.testing.assert_allclose(arr(m), 0.1 * np.array([1.0, 2.0]), rtol=1e-5)
    ops.AdamWeightDecay()(var, m, v, 0.01, 0.9, 0.999, 1e-8, 0.0, grad)
    assert calls[-1] == ("adam_weight_decay", {})


def test_helpers():
    x = T(A)
    assert ops.depend(x, T(B)) is x
    assert ops.shape(x) == (2, 3) and ops.rank(x) == 2 and ops.size(x) == 6 and ops.dtype(x) == ms.float32
    assert ops.Shape()(x) == (2, 3) and ops.Rank()(x) == 2 and ops.DType()(x) == ms.float32
    assert ops.is_tensor(x) and not ops.is_tensor(A)
    s = ops.stop_gradient(x)
    np.testing.assert_array_equal(arr(s), A)
    assert ops.ScalarToTensor()(2, ms.int32).dtype == ms.int32
    assert ops.TupleToArray()((1.0, 2.0)).shape == (2,)
    assert ops.Depend()(x, None) is x


def test_primitive_classes_mirror_mindspore():
    add = ops.Add()
    assert isinstance(add, ops.Primitive) and add.name == "Add"
    np.testing.assert_allclose(arr(add(T(A), T(B))), A + B)
    np.testing.assert_allclose(arr(ops.Sub()(T(A), 1.0)), A - 1)
    np.testing.assert_allclose(arr(ops.Mul()(T(A), T(B))), A * B)
    np.testing.assert_allclose(arr(ops.RealDiv()(T(A), T(B))), A / B, rtol=1e-6)
    np.testing.assert_allclose(arr(ops.ReLU()(T(A - 1))), np.maximum(A - 1, 0))
    np.testing.assert_allclose(arr(ops.ReduceSum(keep_dims=True)(T(A), 1)), A.sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(arr(ops.ReduceMean()(T(A))), A.mean(), rtol=1e-6)
    np.testing.assert_allclose(arr(ops.ReduceMax()(T(A), (0,))), A.max(0))
    np.testing.assert_allclose(arr(ops.Reshape()(T(A), (3, 2))), A.reshape(3, 2))
    np.testing.assert_allclose(arr(ops.Transpose()(T(A), (1, 0))), A.T)
    np.testing.assert_array_equal(arr(ops.Argmax()(T(A))), A.argmax(-1))
    assert ops.Argmax(output_type=ms.int64)(T(A)).dtype == ms.int64
    index, value = ops.ArgMaxWithValue(axis=1)(T(A))
    np.testing.assert_array_equal(arr(index), A.argmax(1))
    np.testing.assert_allclose(arr(value), A.max(1))
    np.testing.assert_allclose(arr(ops.Cast()(T(A), ms.float16)), A.astype(np.float16))
    np.testing.assert_allclose(arr(ops.Select()(T(A > 1, np.bool_), T(A), T(B))), np.where(A > 1, A, B))
    assert ops.ExpandDims()(T(A), 0).shape == (1, 2, 3)
    with pytest.raises(TypeError, match="keep_dims"):
        ops.ReduceSum(keep_dims=1)

    class Custom(ops.Primitive):
        @ops.prim_attr_register
        def __init__(self, alpha=1.0):
            pass

    c = Custom(2.0)
    assert c.attrs == {"alpha": 2.0} and c.name == "Custom"
    assert ops.constexpr(lambda: 3)() == 3


def test_op_errors_pass_through(calls):
    with pytest.raises(TypeError, match="every input must be a Tensor"):
        ops._op("add", T(A), 1.0)
    with pytest.raises(ValueError, match="matmul"):
        ops.matmul(T(A), T(A))


def test_older_names_and_clipping():
    x, y = T(A), T(B)
    np.testing.assert_allclose(arr(ops.functional.tensor_add(x, y)), A + B)
    np.testing.assert_allclose(arr(ops.functional.tensor_mul(x, y)), A * B)
    np.testing.assert_array_equal(arr(ops.functional.tensor_lt(x, y)), A < B)
    np.testing.assert_allclose(arr(ops.clip_by_value(x, 0.8, 1.2)), np.clip(A, 0.8, 1.2))
    grads = (T(np.full((2,), 3.0)), T(np.full((2,), 4.0)))  # global norm sqrt(18 + 32) = sqrt(50)
    clipped = ops.clip_by_global_norm(grads, 1.0)
    scale = 1.0 / np.sqrt(50.0)
    np.testing.assert_allclose(arr(clipped[0]), np.full(2, 3.0) * scale, rtol=1e-6)
    unchanged = ops.clip_by_global_norm(grads, 100.0)
    np.testing.assert_allclose(arr(unchanged[1]), np.full(2, 4.0), rtol=1e-6)
    np.testing.assert_allclose(arr(ops.L2Loss()(x)), (A ** 2).sum() / 2, rtol=1e-6)
    label = (B > 1).astype(np.float32)
    out = ops.SigmoidCrossEntropyWithLogits()(x, T(label))
    np.testing.assert_allclose(arr(out), np.maximum(A, 0) - A * label + np.log1p(np.exp(-np.abs(A))), rtol=1e-5)
    assert ops.functional.partial(ops.add, x)(y).shape == (2, 3)
    np.testing.assert_array_equal(arr(ms.Tensor.from_numpy(A)), A)
