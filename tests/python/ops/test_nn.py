"""Parity tests of the NN ops (oneDNN for float32, reference loops for
float64) against straightforward NumPy references, finite-difference
gradient checks (float64), and the ops' error messages."""
import inspect
import itertools
import warnings

import numpy as np
import pytest

import msrt

from .harness import _C, check_grad, covers, gradients, run_op, tensor

covers("matmul", "batch_matmul", "bias_add", "bias_add_grad", "dense", "conv2d", "conv2d_backprop_input",
       "conv2d_backprop_filter", "max_pool2d", "max_pool2d_grad", "avg_pool2d", "avg_pool2d_grad", "batch_norm",
       "batch_norm_grad", "leaky_relu", "conv2d_bias")

FLOATS = [np.float32, np.float64]
# float32 runs through oneDNN (reorders, blocked layouts, its own summation order).
TOL = {np.float32: dict(rtol=2e-4, atol=2e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


def rand(rng, shape, dtype=np.float64, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def needs_ops(*names):
    """Skips a test whose gradient rules call ops another family provides."""
    missing = sorted(set(names) - set(_C.op_names()))
    return pytest.mark.skipif(bool(missing), reason=f"needs ops not registered yet: {missing}")


# ---------------------------------------------------------------------------
# NumPy references

def window(size, kernel, stride, dilation, mode, pad_before=0, pad_after=0):
    """(out, pad_before, pad_after) along one axis, MindSpore's rules."""
    dk = (kernel - 1) * dilation + 1
    if mode == "same":
        out = -(-size // stride)
        need = max(0, (out - 1) * stride + dk - size)
        return out, need // 2, need - need // 2
    if mode == "valid":
        return (size - dk) // stride + 1, 0, 0
    return (size + pad_before + pad_after - dk) // stride + 1, pad_before, pad_after


def conv_plan(x_shape, w_shape, stride=(1, 1), pad_mode="same", pad=(0, 0, 0, 0), dilation=(1, 1), group=1):
    _, _, h, w = x_shape
    _, _, kh, kw = w_shape
    oh, pt, pb = window(h, kh, stride[0], dilation[0], pad_mode, pad[0], pad[1])
    ow, pl, pr = window(w, kw, stride[1], dilation[1], pad_mode, pad[2], pad[3])
    return oh, ow, (pt, pb, pl, pr)


def conv_taps(x_shape, w_shape, stride, dilation, oh, ow):
    """(kh, kw, row slice, column slice) of the padded input each tap reads."""
    _, _, kh, kw = w_shape
    for i, j in itertools.product(range(kh), range(kw)):
        rows = slice(i * dilation[0], i * dilation[0] + stride[0] * (oh - 1) + 1, stride[0])
        cols = slice(j * dilation[1], j * dilation[1] + stride[1] * (ow - 1) + 1, stride[1])
        yield i, j, rows, cols


def np_conv2d(x, w, stride=(1, 1), pad_mode="same", pad=(0, 0, 0, 0), dilation=(1, 1), group=1):
    n, c, _, _ = x.shape
    o, cg, _, _ = w.shape
    oh, ow, (pt, pb, pl, pr) = conv_plan(x.shape, w.shape, stride, pad_mode, pad, dilation)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    out = np.zeros((n, o, oh, ow))
    og = o // group
    for g in range(group):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og].astype(np.float64)
        for i, j, rows, cols in conv_taps(x.shape, w.shape, stride, dilation, oh, ow):
            out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", xs[:, :, rows, cols], ws[:, :, i, j])
    return out


def np_conv2d_backprop_input(dy, w, input_shape, stride=(1, 1), pad_mode="same", pad=(0, 0, 0, 0), dilation=(1, 1),
                             group=1):
    n, c, h, wd = input_shape
    o, cg, _, _ = w.shape
    oh, ow, (pt, pb, pl, pr) = conv_plan(input_shape, w.shape, stride, pad_mode, pad, dilation)
    dxp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    og = o // group
    for g in range(group):
        ws = w[g * og:(g + 1) * og].astype(np.float64)
        for i, j, rows, cols in conv_taps(input_shape, w.shape, stride, dilation, oh, ow):
            dxp[:, g * cg:(g + 1) * cg, rows, cols] += np.einsum("nohw,oc->nchw", dy[:, g * og:(g + 1) * og],
                                                                 ws[:, :, i, j])
    return dxp[:, :, pt:pt + h, pl:pl + wd]


def np_conv2d_backprop_filter(dy, x, filter_shape, stride=(1, 1), pad_mode="same", pad=(0, 0, 0, 0),
                              dilation=(1, 1), group=1):
    o, cg, _, _ = filter_shape
    oh, ow, (pt, pb, pl, pr) = conv_plan(x.shape, filter_shape, stride, pad_mode, pad, dilation)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    dw = np.zeros(filter_shape)
    og = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i, j, rows, cols in conv_taps(x.shape, filter_shape, stride, dilation, oh, ow):
            dw[g * og:(g + 1) * og, :, i, j] = np.einsum("nohw,nchw->oc", dy[:, g * og:(g + 1) * og],
                                                         xs[:, :, rows, cols])
    return dw


def pool_plan(x_shape, kernel, strides, pad_mode):
    oh, pt, pb = window(x_shape[2], kernel[0], strides[0], 1, pad_mode)
    ow, pl, pr = window(x_shape[3], kernel[1], strides[1], 1, pad_mode)
    return oh, ow, (pt, pb, pl, pr)


def pool_windows(x_shape, kernel, strides, pad_mode):
    """(oh, ow, row slice, column slice) of each window in the padded input."""
    oh, ow, _ = pool_plan(x_shape, kernel, strides, pad_mode)
    for i, j in itertools.product(range(oh), range(ow)):
        yield i, j, slice(i * strides[0], i * strides[0] + kernel[0]), slice(j * strides[1], j * strides[1] + kernel[1])


def padded(x, pads, value):
    pt, pb, pl, pr = pads
    return np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=value)


def np_max_pool2d(x, kernel, strides, pad_mode="valid"):
    oh, ow, pads = pool_plan(x.shape, kernel, strides, pad_mode)
    xp = padded(x, pads, -np.inf)
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i, j, rows, cols in pool_windows(x.shape, kernel, strides, pad_mode):
        out[:, :, i, j] = xp[:, :, rows, cols].max(axis=(2, 3))
    return out


def np_avg_pool2d(x, kernel, strides, pad_mode="valid"):
    oh, ow, pads = pool_plan(x.shape, kernel, strides, pad_mode)
    xp, ones = padded(x, pads, 0.0), padded(np.ones_like(x), pads, 0.0)
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i, j, rows, cols in pool_windows(x.shape, kernel, strides, pad_mode):
        out[:, :, i, j] = xp[:, :, rows, cols].sum(axis=(2, 3)) / ones[:, :, rows, cols].sum(axis=(2, 3))
    return out


def np_max_pool2d_grad(x, dy, kernel, strides, pad_mode="valid"):
    _, _, pads = pool_plan(x.shape, kernel, strides, pad_mode)
    xp = padded(x, pads, -np.inf)
    dxp = np.zeros(xp.shape)
    n, c = x.shape[:2]
    nn_, cc = np.meshgrid(np.arange(n), np.arange(c), indexing="ij")
    for i, j, rows, cols in pool_windows(x.shape, kernel, strides, pad_mode):
        first = xp[:, :, rows, cols].reshape(n, c, -1).argmax(axis=2)  # the first maximum
        np.add.at(dxp, (nn_, cc, rows.start + first // kernel[1], cols.start + first % kernel[1]), dy[:, :, i, j])
    pt, pb, pl, pr = pads
    return dxp[:, :, pt:pt + x.shape[2], pl:pl + x.shape[3]]


def np_avg_pool2d_grad(x, dy, kernel, strides, pad_mode="valid"):
    _, _, pads = pool_plan(x.shape, kernel, strides, pad_mode)
    ones = padded(np.ones_like(x), pads, 0.0)
    dxp = np.zeros(ones.shape)
    for i, j, rows, cols in pool_windows(x.shape, kernel, strides, pad_mode):
        count = ones[:, :, rows, cols].sum(axis=(2, 3))
        dxp[:, :, rows, cols] += (dy[:, :, i, j] / count)[:, :, None, None] * ones[:, :, rows, cols]
    pt, pb, pl, pr = pads
    return dxp[:, :, pt:pt + x.shape[2], pl:pl + x.shape[3]]


def channel_axes(x):
    return (0,) + tuple(range(2, x.ndim))


def along_channels(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def np_batch_norm_train(x, scale, bias, eps):
    axes = channel_axes(x)
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    inv = 1 / np.sqrt(var + eps)
    y = (x - along_channels(mean, x)) * along_channels(inv * scale, x) + along_channels(bias, x)
    return y, mean, var, inv


def np_batch_norm_grad(dy, x, scale, mean, inv):
    axes = channel_axes(x)
    count = x.size // x.shape[1]
    x_hat = (x - along_channels(mean, x)) * along_channels(inv, x)
    dbias = dy.sum(axis=axes)
    dscale = (dy * x_hat).sum(axis=axes)
    dx = along_channels(scale * inv / count, x) * (count * dy - along_channels(dbias, x) -
                                                   x_hat * along_channels(dscale, x))
    return dx, dscale, dbias


# ---------------------------------------------------------------------------
# Kernels


@pytest.mark.parametrize("name", ["matmul", "batch_matmul", "bias_add", "dense", "conv2d", "conv2d_bias",
                                  "conv2d_backprop_input",
                                  "conv2d_backprop_filter", "max_pool2d", "max_pool2d_grad", "avg_pool2d",
                                  "avg_pool2d_grad", "batch_norm", "batch_norm_grad"])
def test_kernels_are_onednn_then_reference(name):
    kernels = _C.op_info(name)["kernels"]
    if name == "max_pool2d_grad":  # Note [max_pool2d_grad without oneDNN] in onednn_pool.cc
        assert kernels == ["CPU:vectorized", "CPU:reference"]  # the 2x2 stride-2 loop first (pool_2x2.cc)
    elif name == "max_pool2d":
        assert kernels == ["CPU:vectorized", "CPU:onednn", "CPU:reference"]
    elif name in ("matmul", "batch_matmul"):  # float16 first: Note [float16 products]; complex: onednn_matmul.cc
        assert kernels == ["CPU:onednn float32 slices", "CPU:onednn", "CPU:blocked complex", "CPU:reference"]
    elif name in ("dense", "conv2d", "conv2d_bias", "conv2d_backprop_input"):  # float16 first: Note [float16 products]
        assert kernels == ["CPU:onednn float32 slices", "CPU:onednn", "CPU:reference"]
    elif name in ("batch_norm", "batch_norm_grad"):  # Note [batch_norm without oneDNN] in batch_norm.cc
        assert kernels == ["CPU:vectorized", "CPU:reference"]
    elif name == "conv2d_backprop_filter":  # half types first: Note [bfloat16 backward weights] in onednn_conv.cc
        assert kernels == ["CPU:onednn float32 slices", "CPU:onednn", "CPU:reference"]
    else:
        assert kernels == ["CPU:onednn", "CPU:reference"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
# odd sizes drop the last row/column; rows of 20, 17 and 13 windows and 6, 17 and 33 channels take full and partial
# 16-lane vectors (Note [2x2 pooling in AVX-512])
@pytest.mark.parametrize("shape", [(2, 3, 6, 8), (1, 2, 7, 5), (2, 17, 12, 10), (1, 6, 4, 40), (2, 33, 4, 34),
                                   (1, 6, 2, 26)])
def test_max_pool_2x2_fast_path_matches_numpy_with_ties(dtype, shape):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, shape).astype(dtype)  # many ties: the first maximum takes the gradient
    dy = rng.standard_normal((shape[0], shape[1], shape[2] // 2, shape[3] // 2)).astype(dtype)
    attrs = dict(kernel_size=[2, 2], strides=[2, 2], pad_mode="valid")
    (y,) = run_op("max_pool2d", [x], attrs)
    (dx,) = run_op("max_pool2d_grad", [x, y, dy], attrs)
    h, w = shape[2] // 2, shape[3] // 2
    windows = x[:, :, :2 * h, :2 * w].reshape(shape[0], shape[1], h, 2, w, 2).transpose(0, 1, 2, 4, 3, 5)
    windows = windows.reshape(shape[0], shape[1], h, w, 4)
    np.testing.assert_array_equal(np.asarray(y), windows.max(-1))
    first = windows.argmax(-1)  # numpy's argmax is the first maximum too
    expected = np.zeros_like(x)
    for n, c, i, j in np.ndindex(shape[0], shape[1], h, w):
        k = first[n, c, i, j]
        expected[n, c, 2 * i + k // 2, 2 * j + k % 2] = dy[n, c, i, j]
    np.testing.assert_array_equal(np.asarray(dx), expected)
    channels_last = dict(attrs, data_format="NHWC")  # the same loops over channels-last tensors
    (y,) = run_op("max_pool2d", [nhwc(x)], channels_last)
    (dx,) = run_op("max_pool2d_grad", [nhwc(x), y, nhwc(dy)], channels_last)
    np.testing.assert_array_equal(nchw(y), windows.max(-1))
    np.testing.assert_array_equal(nchw(dx), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 6, 8), (1, 6, 4, 40), (2, 33, 4, 34)])
def test_max_pool_2x2_fast_path_nan_wins_where_it_comes_first(dtype, shape):
    """A NaN in the first place of a comparison wins it (pool_2x2.cc's Max4 and Route, as in the general loops):
    the maximum is (a < b ? b : a), (c < d ? d : c), then the same between the two; dy goes to b, c or d only where
    it is greater than every element before it."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, shape).astype(dtype)
    x[rng.random(shape) < 0.2] = np.nan
    dy = rng.standard_normal((shape[0], shape[1], shape[2] // 2, shape[3] // 2)).astype(dtype)
    h, w = shape[2] // 2, shape[3] // 2
    win = x[:, :, :2 * h, :2 * w].reshape(shape[0], shape[1], h, 2, w, 2)
    a, b, c, d = win[:, :, :, 0, :, 0], win[:, :, :, 0, :, 1], win[:, :, :, 1, :, 0], win[:, :, :, 1, :, 1]
    with np.errstate(invalid="ignore"):
        top, bottom = np.where(a < b, b, a), np.where(c < d, d, c)
        y_expected = np.where(top < bottom, bottom, top)
        to_b = b > a
        high = np.where(to_b, b, a)
        to_c = c > high
        to_d = d > np.where(to_c, c, high)
    routed = np.zeros(win.shape, dtype)
    routed[:, :, :, 1, :, 1] = np.where(to_d, dy, 0)
    routed[:, :, :, 1, :, 0] = np.where(to_c & ~to_d, dy, 0)
    routed[:, :, :, 0, :, 1] = np.where(to_b & ~to_c & ~to_d, dy, 0)
    routed[:, :, :, 0, :, 0] = np.where(~to_b & ~to_c & ~to_d, dy, 0)
    dx_expected = np.zeros_like(x)
    dx_expected[:, :, :2 * h, :2 * w] = routed.reshape(shape[0], shape[1], 2 * h, 2 * w)
    attrs = dict(kernel_size=[2, 2], strides=[2, 2], pad_mode="valid")
    for fmt, to, back in (("NCHW", np.asarray, np.asarray), ("NHWC", nhwc, nchw)):
        (y,) = run_op("max_pool2d", [to(x)], dict(attrs, data_format=fmt))
        (dx,) = run_op("max_pool2d_grad", [to(x), y, to(dy)], dict(attrs, data_format=fmt))
        np.testing.assert_array_equal(back(y), y_expected)
        np.testing.assert_array_equal(back(dx), dx_expected)


# ---------------------------------------------------------------------------
# matmul, batch_matmul, dense, bias_add


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ta,tb", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (1, 7, 1), (17, 33, 9), (64, 128, 32)])
def test_matmul(dtype, ta, tb, m, k, n):
    rng = np.random.default_rng(m * k + n)
    a = rand(rng, (k, m) if ta else (m, k), dtype)
    b = rand(rng, (n, k) if tb else (k, n), dtype)
    expected = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    (out,) = run_op("matmul", [a, b], {"transpose_a": ta, "transpose_b": tb})
    assert out.dtype == dtype and out.shape == (m, n)
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a_shape,b_shape", [
    ((2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (6, 4, 5)),        # broadcast a
    ((6, 3, 4), (1, 4, 5)),        # broadcast b
    ((2, 1, 3, 4), (5, 4, 2)),     # different ranks
    ((2, 1, 3, 4), (1, 3, 4, 2)),  # both broadcast
    ((1, 1, 1), (1, 1, 1)),
])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul(dtype, a_shape, b_shape, ta, tb):
    rng = np.random.default_rng(0)
    a = rand(rng, a_shape, dtype)
    b = rand(rng, b_shape, dtype)
    if ta:
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    if tb:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    opa = np.swapaxes(a, -1, -2) if ta else a
    opb = np.swapaxes(b, -1, -2) if tb else b
    expected = np.matmul(opa.astype(np.float64), opb.astype(np.float64))
    (out,) = run_op("batch_matmul", [a, b], {"transpose_a": ta, "transpose_b": tb})
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, **TOL[dtype])


def test_matmul_with_an_empty_inner_dimension_is_zero():
    (out,) = run_op("matmul", [np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32)])
    np.testing.assert_array_equal(out, np.zeros((3, 2)))
    (out,) = run_op("dense", [np.zeros((3, 0)), np.zeros((2, 0)), np.array([1.0, 2.0])])
    np.testing.assert_array_equal(out, [[1, 2]] * 3)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5), (1, 6, 2, 3, 2)])
def test_bias_add(dtype, shape):
    rng = np.random.default_rng(1)
    x = rand(rng, shape, dtype)
    b = rand(rng, (shape[1],), dtype)
    (out,) = run_op("bias_add", [x, b])
    np.testing.assert_allclose(out, x + along_channels(b, x), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 4, 3), (3, 2, 2, 2, 7), (1, 1, 1, 1)])
def test_bias_add_channels_last(dtype, shape):
    rng = np.random.default_rng(21)
    x = rand(rng, shape, dtype)
    b = rand(rng, (shape[-1],), dtype)
    (out,) = run_op("bias_add", [x, b], {"data_format": "NHWC"})
    np.testing.assert_allclose(out, x + b, **TOL[dtype])


@pytest.mark.filterwarnings("error")  # float16 and bfloat16 have a kernel of their own
@pytest.mark.parametrize("dtype", FLOATS + [np.float16])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4, 5), (2, 6, 3, 1, 2), (1, 64, 7, 7)])
def test_bias_add_grad_sums_all_but_the_channel_axis(dtype, data_format, shape):
    rng = np.random.default_rng(22)
    dy = rand(rng, shape, dtype)
    axis = 1 if data_format == "NCHW" else len(shape) - 1
    (out,) = run_op("bias_add_grad", [dy], {"data_format": data_format})
    expected = dy.astype(np.float64).sum(axis=tuple(a for a in range(len(shape)) if a != axis))
    assert out.dtype == dtype and out.shape == (shape[axis],)
    tol = dict(rtol=2e-3, atol=2e-2) if dtype == np.float16 else TOL[dtype]
    np.testing.assert_allclose(out.astype(np.float64), expected, **tol)


def test_bias_add_grad_refuses_what_it_cannot_sum():
    with pytest.raises(ValueError, match=r"\[bias_add_grad\] input 'dy' must have rank 2 or more"):
        run_op("bias_add_grad", [np.ones(3)])
    with pytest.raises(TypeError, match=r"\[bias_add_grad\]"):
        run_op("bias_add_grad", [np.ones((2, 3), np.int32)])
    with pytest.raises(ValueError, match=r"\[bias_add_grad\] 'data_format' must be 'NCHW' or 'NHWC'"):
        run_op("bias_add_grad", [np.ones((2, 3))], {"data_format": "CHWN"})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,out_features", [((5,), 3), ((4, 5), 3), ((2, 3, 7), 4), ((32, 120), 84)])
def test_dense(dtype, x_shape, out_features):
    rng = np.random.default_rng(2)
    x = rand(rng, x_shape, dtype)
    w = rand(rng, (out_features, x_shape[-1]), dtype)
    b = rand(rng, (out_features,), dtype)
    (out,) = run_op("dense", [x, w, b])
    np.testing.assert_allclose(out, x.astype(np.float64) @ w.T.astype(np.float64) + b, **TOL[dtype])


# ---------------------------------------------------------------------------
# conv2d family

CONV_CASES = [
    # x shape, w shape, attrs
    ((2, 3, 7, 7), (4, 3, 3, 3), {}),
    ((1, 1, 5, 5), (2, 1, 3, 3), {"pad_mode": "valid"}),
    ((2, 3, 8, 9), (5, 3, 3, 2), {"stride": [2, 2]}),
    ((2, 3, 9, 8), (5, 3, 3, 3), {"stride": [2, 3], "pad_mode": "valid"}),
    ((1, 2, 6, 7), (3, 2, 4, 4), {"pad_mode": "same", "stride": 2}),  # even kernel: the extra pad goes bottom/right
    ((2, 2, 7, 6), (3, 2, 3, 3), {"pad_mode": "pad", "pad": [1, 2, 0, 3]}),
    ((1, 3, 8, 8), (2, 3, 3, 3), {"pad_mode": "pad", "pad": 1, "stride": [3, 3]}),  # floor drops rows
    ((2, 2, 9, 9), (3, 2, 3, 3), {"dilation": [2, 2]}),
    ((1, 2, 11, 10), (2, 2, 3, 2), {"dilation": [3, 2], "pad_mode": "valid", "stride": [2, 1]}),
    ((2, 4, 6, 6), (6, 2, 3, 3), {"group": 2}),
    ((1, 6, 7, 5), (6, 1, 3, 3), {"group": 6, "pad_mode": "pad", "pad": [1, 1, 1, 1]}),  # depthwise
    ((1, 8, 5, 5), (4, 4, 1, 1), {"group": 2, "stride": [1, 1, 2, 2]}),
    ((3, 1, 32, 32), (6, 1, 5, 5), {"pad_mode": "valid"}),  # LeNet conv1
    ((3, 6, 14, 14), (16, 6, 5, 5), {"pad_mode": "valid"}),  # LeNet conv2
    ((1, 16, 6, 6), (32, 16, 3, 3), {}),  # blocked layouts on AVX2
]


def conv_kwargs(attrs):
    """The NumPy reference's arguments for op attributes."""
    def pair(v):
        v = [v, v] if isinstance(v, int) else list(v)
        return tuple(v[-2:])
    pad = attrs.get("pad", 0)
    return dict(stride=pair(attrs.get("stride", 1)), pad_mode=attrs.get("pad_mode", "same"),
                pad=tuple([pad] * 4 if isinstance(pad, int) else pad), dilation=pair(attrs.get("dilation", 1)),
                group=attrs.get("group", 1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_CASES)
def test_conv2d(dtype, x_shape, w_shape, attrs):
    rng = np.random.default_rng(3)
    x = rand(rng, x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    expected = np_conv2d(x, w, **conv_kwargs(attrs))
    (out,) = run_op("conv2d", [x, w], attrs)
    assert out.dtype == dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_CASES)
def test_conv2d_backprop_input_and_filter(dtype, x_shape, w_shape, attrs):
    rng = np.random.default_rng(4)
    x = rand(rng, x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    kw = conv_kwargs(attrs)
    y_shape = np_conv2d(x, w, **kw).shape
    dy = rand(rng, y_shape, dtype)
    (dx,) = run_op("conv2d_backprop_input", [dy, w], dict(attrs, input_shape=list(x_shape)))
    np.testing.assert_allclose(dx, np_conv2d_backprop_input(dy, w, x_shape, **kw), **TOL[dtype])
    (dw,) = run_op("conv2d_backprop_filter", [dy, x], dict(attrs, filter_shape=list(w_shape)))
    np.testing.assert_allclose(dw, np_conv2d_backprop_filter(dy, x, w_shape, **kw), **TOL[dtype])


@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_CASES[:12])
def test_conv2d_float32_gradients_match_numpy(x_shape, w_shape, attrs):
    """The oneDNN backward kernels reached through conv2d's gradient rule."""
    rng = np.random.default_rng(5)
    x = rand(rng, x_shape, np.float32)
    w = rand(rng, w_shape, np.float32)
    kw = conv_kwargs(attrs)
    dy = rand(rng, np_conv2d(x, w, **kw).shape, np.float32)
    dx, dw = gradients("conv2d", [x, w], attrs, wrt=(0, 1), sens=dy)
    np.testing.assert_allclose(dx, np_conv2d_backprop_input(dy, w, x_shape, **kw), **TOL[np.float32])
    np.testing.assert_allclose(dw, np_conv2d_backprop_filter(dy, x, w_shape, **kw), **TOL[np.float32])


def nhwc(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))


def nchw(a):
    return np.asarray(a).transpose(0, 3, 1, 2)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_CASES)
def test_conv2d_family_on_nhwc_matches_nchw(dtype, x_shape, w_shape, attrs):
    """data_format="NHWC": x, y, dy and dx channels-last, weights as they are (oneDNN without reorders for
    float32, the reference loops' NHWC indexing for float64)."""
    rng = np.random.default_rng(7)
    x = rand(rng, x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    (y,) = run_op("conv2d", [x, w], attrs)
    channels_last = dict(attrs, data_format="NHWC")
    (y_nhwc,) = run_op("conv2d", [nhwc(x), w], channels_last)
    assert y_nhwc.shape == nhwc(y).shape
    np.testing.assert_allclose(nchw(y_nhwc), y, **TOL[dtype])
    dy = rand(rng, np.asarray(y).shape, dtype)
    (dx,) = run_op("conv2d_backprop_input", [dy, w], dict(attrs, input_shape=list(x_shape)))
    nhwc_shape = [x_shape[0], x_shape[2], x_shape[3], x_shape[1]]
    (dx_nhwc,) = run_op("conv2d_backprop_input", [nhwc(dy), w], dict(channels_last, input_shape=nhwc_shape))
    np.testing.assert_allclose(nchw(dx_nhwc), dx, **TOL[dtype])
    (dw,) = run_op("conv2d_backprop_filter", [dy, x], dict(attrs, filter_shape=list(w_shape)))
    (dw_nhwc,) = run_op("conv2d_backprop_filter", [nhwc(dy), nhwc(x)], dict(channels_last, filter_shape=list(w_shape)))
    np.testing.assert_allclose(dw_nhwc, dw, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_CASES)
def test_conv2d_bias_is_conv2d_then_bias_add(dtype, data_format, x_shape, w_shape, attrs):
    """conv2d_bias (what a graph runs for conv2d followed by bias_add): the bias in oneDNN's primitive for float32,
    added to the reference loops' sums for float64, on the channel axis of either layout."""
    rng = np.random.default_rng(12)
    x = rand(rng, x_shape, dtype)
    w = rand(rng, w_shape, dtype)
    b = rand(rng, (w_shape[0],), dtype, low=-3.0, high=3.0)
    expected = np_conv2d(x, w, **conv_kwargs(attrs)) + b[None, :, None, None]
    if data_format == "NHWC":
        x, expected = nhwc(x), nhwc(expected)
    (out,) = run_op("conv2d_bias", [x, w, b], dict(attrs, data_format=data_format))
    assert out.dtype == dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("x_shape,w_shape,attrs", [CONV_CASES[2], CONV_CASES[9]])
def test_conv2d_bias_gradients(data_format, x_shape, w_shape, attrs):
    rng = np.random.default_rng(13)
    x = rand(rng, x_shape)
    if data_format == "NHWC":
        x = nhwc(x)
    w, b = rand(rng, w_shape), rand(rng, (w_shape[0],))
    check_grad("conv2d_bias", [x, w, b], dict(attrs, data_format=data_format), wrt=(0, 1, 2))


def test_conv2d_bias_checks_the_bias_shape():
    x, w = np.ones((1, 2, 4, 4), np.float32), np.ones((3, 2, 1, 1), np.float32)
    with pytest.raises(ValueError, match=r"\[conv2d_bias\] input 'bias' must have shape \(out_channels,\); "
                                         r"expected \(3,\), but got \(2,\)"):
        run_op("conv2d_bias", [x, w, np.ones(2, np.float32)])
    with pytest.raises(TypeError, match=r"\[conv2d_bias\] input 'bias' must have the dtype of 'x'"):
        run_op("conv2d_bias", [x, w, np.ones(3, np.float64)])


def test_conv2d_gradients_on_nhwc_follow_the_data_format():
    rng = np.random.default_rng(8)
    x = rand(rng, (2, 6, 6, 3), np.float64)  # NHWC
    w = rand(rng, (4, 3, 3, 3), np.float64)
    check_grad("conv2d", [x, w], {"data_format": "NHWC", "pad_mode": "valid"}, wrt=(0, 1))


@pytest.mark.parametrize("op", ["conv2d", "max_pool2d"])
def test_an_unknown_data_format_is_a_value_error(op):
    x = np.ones((1, 2, 4, 4), np.float32)
    inputs = [x, np.ones((2, 2, 1, 1), np.float32)] if op == "conv2d" else [x]
    with pytest.raises(ValueError, match=r"'data_format' must be 'NCHW' or 'NHWC'; but got 'NCWH'"):
        run_op(op, inputs, {"data_format": "NCWH"})


def test_conv2d_same_padding_puts_the_extra_row_at_the_bottom():
    # 4x4 input, 2x2 kernel of ones, stride 1, "same": pads 1 in total, at the bottom/right.
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    (out,) = run_op("conv2d", [x, np.ones((1, 1, 2, 2), np.float32)], {"pad_mode": "same"})
    assert out.shape == (1, 1, 4, 4)
    assert out[0, 0, 0, 0] == 0 + 1 + 4 + 5
    assert out[0, 0, 3, 3] == 15


# ---------------------------------------------------------------------------
# pooling

POOL_CASES = [
    ((2, 3, 6, 6), [2, 2], [2, 2], "valid"),
    ((1, 2, 7, 7), [3, 3], [2, 2], "valid"),
    ((2, 2, 7, 5), [3, 3], [2, 2], "same"),
    ((1, 3, 5, 8), [2, 3], [1, 2], "same"),
    ((1, 1, 4, 4), 2, 1, "same"),
    ((3, 6, 28, 28), [2, 2], [2, 2], "valid"),  # LeNet
    ((1, 4, 9, 9), [3, 3], [3, 3], "same"),
    ((2, 3, 5, 5), [1, 1, 3, 3], [1, 1, 2, 2], "VALID"),
]


def pool_args(kernel, strides):
    def pair(v):
        v = [v, v] if isinstance(v, int) else list(v)
        return tuple(v[-2:])
    return pair(kernel), pair(strides)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,kernel,strides,pad_mode", POOL_CASES)
def test_pooling(dtype, shape, kernel, strides, pad_mode):
    rng = np.random.default_rng(6)
    x = rand(rng, shape, dtype)
    attrs = {"kernel_size": kernel, "strides": strides, "pad_mode": pad_mode}
    k, s = pool_args(kernel, strides)
    mode = pad_mode.lower()
    (y_max,) = run_op("max_pool2d", [x], attrs)
    np.testing.assert_allclose(y_max, np_max_pool2d(x, k, s, mode), **TOL[dtype])
    (y_avg,) = run_op("avg_pool2d", [x], attrs)
    np.testing.assert_allclose(y_avg, np_avg_pool2d(x, k, s, mode), **TOL[dtype])
    dy = rand(rng, y_max.shape, dtype)
    (dx,) = run_op("max_pool2d_grad", [x, y_max, dy], attrs)
    np.testing.assert_allclose(dx, np_max_pool2d_grad(x, dy, k, s, mode), **TOL[dtype])
    (dx,) = run_op("avg_pool2d_grad", [x, dy], attrs)
    np.testing.assert_allclose(dx, np_avg_pool2d_grad(x, dy, k, s, mode), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,kernel,strides,pad_mode", POOL_CASES)
def test_pooling_on_nhwc_matches_nchw(dtype, shape, kernel, strides, pad_mode):
    rng = np.random.default_rng(9)
    x = rng.integers(0, 4, shape).astype(dtype)  # ties: both layouts route dy to the same first maximum
    attrs = {"kernel_size": kernel, "strides": strides, "pad_mode": pad_mode}
    channels_last = dict(attrs, data_format="NHWC")
    for forward in ("max_pool2d", "avg_pool2d"):
        (y,) = run_op(forward, [x], attrs)
        (y_nhwc,) = run_op(forward, [nhwc(x)], channels_last)
        np.testing.assert_allclose(nchw(y_nhwc), y, **TOL[dtype])
    dy = rand(rng, np.asarray(y).shape, dtype)
    (dx,) = run_op("max_pool2d_grad", [x, run_op("max_pool2d", [x], attrs)[0], dy], attrs)
    (y_nhwc,) = run_op("max_pool2d", [nhwc(x)], channels_last)
    (dx_nhwc,) = run_op("max_pool2d_grad", [nhwc(x), y_nhwc, nhwc(dy)], channels_last)
    np.testing.assert_array_equal(nchw(dx_nhwc), dx)
    (dx,) = run_op("avg_pool2d_grad", [x, dy], attrs)
    (dx_nhwc,) = run_op("avg_pool2d_grad", [nhwc(x), nhwc(dy)], channels_last)
    np.testing.assert_allclose(nchw(dx_nhwc), dx, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_pool2d_grad_routes_ties_to_the_first_maximum(dtype):
    x = np.ones((1, 1, 4, 4), dtype)
    attrs = {"kernel_size": 2, "strides": 2}
    (y,) = run_op("max_pool2d", [x], attrs)
    (dx,) = run_op("max_pool2d_grad", [x, y, np.full(y.shape, 3, dtype)], attrs)
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 3
    np.testing.assert_array_equal(dx[0, 0], expected)


def test_avg_pool2d_same_excludes_padding_from_the_count():
    x = np.ones((1, 1, 3, 3), np.float32)
    (y,) = run_op("avg_pool2d", [x], {"kernel_size": 2, "strides": 2, "pad_mode": "same"})
    np.testing.assert_array_equal(y, np.ones((1, 1, 2, 2)))


# ---------------------------------------------------------------------------
# batch_norm


def bn_inputs(rng, shape, dtype):
    c = shape[1]
    return (rand(rng, shape, dtype, -2, 3), rand(rng, (c,), dtype, 0.5, 1.5), rand(rng, (c,), dtype),
            rand(rng, (c,), dtype), rand(rng, (c,), dtype, 0.5, 2.0))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5, 5), (1, 2, 3, 4), (3, 4, 5), (2, 2, 2, 3, 2), (32, 6, 28, 28)])
def test_batch_norm_training_and_running_stats(dtype, shape):
    rng = np.random.default_rng(7)
    x, scale, bias, running_mean, running_var = bn_inputs(rng, shape, dtype)
    attrs = {"is_training": True, "epsilon": 1e-3, "momentum": 0.2}
    ts = [tensor(a) for a in (x, scale, bias, running_mean, running_var)]
    y, saved_mean, saved_inv_std = [o.asnumpy() for o in _C.call("batch_norm", ts, attrs)]
    ey, mean, var, inv = np_batch_norm_train(x.astype(np.float64), scale, bias, 1e-3)
    np.testing.assert_allclose(y, ey, **TOL[dtype])
    np.testing.assert_allclose(saved_mean, mean, **TOL[dtype])
    np.testing.assert_allclose(saved_inv_std, inv, **TOL[dtype])
    # The running statistics were updated in place, with the unbiased variance.
    count = x.size // x.shape[1]
    np.testing.assert_allclose(ts[3].asnumpy(), 0.8 * running_mean + 0.2 * mean, **TOL[dtype])
    np.testing.assert_allclose(ts[4].asnumpy(), 0.8 * running_var + 0.2 * var * count / (count - 1), **TOL[dtype])
    # The inputs the op reads are untouched.
    np.testing.assert_array_equal(ts[0].asnumpy(), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5, 5)])
def test_batch_norm_inference_uses_and_keeps_running_stats(dtype, shape):
    rng = np.random.default_rng(8)
    x, scale, bias, running_mean, running_var = bn_inputs(rng, shape, dtype)
    ts = [tensor(a) for a in (x, scale, bias, running_mean, running_var)]
    y, saved_mean, saved_inv_std = [o.asnumpy() for o in _C.call("batch_norm", ts, {"is_training": False})]
    inv = 1 / np.sqrt(running_var.astype(np.float64) + 1e-5)
    expected = (x - along_channels(running_mean, x)) * along_channels(inv * scale, x) + along_channels(bias, x)
    np.testing.assert_allclose(y, expected, **TOL[dtype])
    np.testing.assert_allclose(saved_mean, running_mean, **TOL[dtype])
    np.testing.assert_allclose(saved_inv_std, inv, **TOL[dtype])
    np.testing.assert_array_equal(ts[3].asnumpy(), running_mean)
    np.testing.assert_array_equal(ts[4].asnumpy(), running_var)


def test_batch_norm_running_stats_accumulate_over_calls():
    rng = np.random.default_rng(9)
    x, scale, bias, _, _ = bn_inputs(rng, (8, 2, 3, 3), np.float32)
    running_mean, running_var = tensor(np.zeros(2, np.float32)), tensor(np.ones(2, np.float32))
    expected_mean, expected_var = np.zeros(2), np.ones(2)
    for _ in range(3):
        _C.call("batch_norm", [tensor(x), tensor(scale), tensor(bias), running_mean, running_var],
                {"is_training": True})
        expected_mean = 0.9 * expected_mean + 0.1 * x.mean(axis=(0, 2, 3))
        expected_var = 0.9 * expected_var + 0.1 * x.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(running_mean.asnumpy(), expected_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(running_var.asnumpy(), expected_var, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5, 5), (3, 4, 5), (32, 6, 14, 14)])
def test_batch_norm_grad(dtype, shape):
    rng = np.random.default_rng(10)
    x, scale, bias, _, _ = bn_inputs(rng, shape, dtype)
    _, mean, _, inv = np_batch_norm_train(x.astype(np.float64), scale, bias, 1e-5)
    dy = rand(rng, shape, dtype)
    dx, dscale, dbias = run_op("batch_norm_grad", [dy, x, scale, mean.astype(dtype), inv.astype(dtype)])
    edx, edscale, edbias = np_batch_norm_grad(dy.astype(np.float64), x.astype(np.float64), scale, mean, inv)
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == np.float32 else TOL[dtype]
    np.testing.assert_allclose(dx, edx, **tol)
    np.testing.assert_allclose(dscale, edscale, **tol)
    np.testing.assert_allclose(dbias, edbias, **tol)


def to_nhwc(a):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (32, 16, 8, 8), (1, 2, 1, 1), (4, 70, 3, 2)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_channels_last_is_nchw_transposed(dtype, shape, training):
    """data_format 'NHWC' normalizes the last axis: the NCHW results, transposed; the running statistics
    and saved ones are the same."""
    rng = np.random.default_rng(22)
    x, scale, bias, running_mean, running_var = bn_inputs(rng, shape, dtype)
    x = x + dtype(3.0)  # a mean well away from 0
    attrs = {"is_training": training, "epsilon": 1e-3, "momentum": 0.3}
    plain = [tensor(a) for a in (x, scale, bias, running_mean, running_var)]
    nhwc = [tensor(a) for a in (to_nhwc(x), scale, bias, running_mean, running_var)]
    want = [o.asnumpy() for o in _C.call("batch_norm", plain, attrs)]
    got = [o.asnumpy() for o in _C.call("batch_norm", nhwc, dict(attrs, data_format="NHWC"))]
    np.testing.assert_allclose(got[0], to_nhwc(want[0]), **TOL[dtype])
    for g, w in zip(got[1:] + [nhwc[3].asnumpy(), nhwc[4].asnumpy()], want[1:] + [plain[3].asnumpy(),
                                                                                  plain[4].asnumpy()]):
        np.testing.assert_allclose(g, w, **TOL[dtype])
    if training:  # against NumPy too
        ey, mean, var, inv = np_batch_norm_train(x.astype(np.float64), scale, bias, 1e-3)
        np.testing.assert_allclose(got[0], to_nhwc(ey), **TOL[dtype])
        count = x.size // x.shape[1]
        np.testing.assert_allclose(nhwc[4].asnumpy(), 0.7 * running_var + 0.3 * var * count / max(count - 1, 1),
                                   **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(2, 3, 5, 5), (32, 16, 8, 8), (4, 70, 3, 2)])
def test_batch_norm_grad_channels_last(dtype, shape):
    rng = np.random.default_rng(23)
    x, scale, bias, _, _ = bn_inputs(rng, shape, dtype)
    _, mean, _, inv = np_batch_norm_train(x.astype(np.float64), scale, bias, 1e-5)
    dy = rand(rng, shape, dtype)
    dx, dscale, dbias = run_op("batch_norm_grad", [to_nhwc(dy), to_nhwc(x), scale, mean.astype(dtype),
                                                   inv.astype(dtype)], {"data_format": "NHWC"})
    edx, edscale, edbias = np_batch_norm_grad(dy.astype(np.float64), x.astype(np.float64), scale, mean, inv)
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == np.float32 else TOL[dtype]
    np.testing.assert_allclose(dx, to_nhwc(edx), **tol)
    np.testing.assert_allclose(dscale, edscale, **tol)
    np.testing.assert_allclose(dbias, edbias, **tol)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_channels_last_gradient(training):
    rng = np.random.default_rng(24)
    x, scale, bias, running_mean, running_var = bn_inputs(rng, (3, 4, 2, 2), np.float64)
    check_grad("batch_norm", [to_nhwc(x), scale, bias, running_mean, running_var],
               {"is_training": training, "data_format": "NHWC"}, wrt=(0, 1, 2), rtol=1e-4, atol=1e-6)


def test_batch_norm_keeps_a_large_mean_exact():
    """The statistics are sums of x minus each channel's first element, in double: a mean 1e4 times the
    spread still gives the variance to float32 precision."""
    rng = np.random.default_rng(25)
    x = (1e4 + rng.standard_normal((16, 3, 6, 6))).astype(np.float32)
    ones, zeros = np.ones(3, np.float32), np.zeros(3, np.float32)
    for fmt, data in (("NCHW", x), ("NHWC", to_nhwc(x))):
        _, mean, inv = run_op("batch_norm", [data, ones, zeros, zeros, ones],
                              {"is_training": True, "data_format": fmt})
        var = x.astype(np.float64).var(axis=(0, 2, 3))
        np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=(0, 2, 3)), rtol=1e-7)
        np.testing.assert_allclose(inv, 1 / np.sqrt(var + 1e-5), rtol=1e-3)


# ---------------------------------------------------------------------------
# Threads: oneDNN's OpenMP team follows runtime_num_threads.


def test_results_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(11)
    x = rand(rng, (4, 3, 12, 12), np.float32)
    w = rand(rng, (8, 3, 3, 3), np.float32)
    outs = []
    for inter_op in (0, 2):  # 2, then 3 threads (Note [Thread plan])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # oversubscribes small machines, on purpose
            msrt.set_context(runtime_num_threads=2, inter_op_parallel_num=inter_op)
        outs.append(run_op("conv2d", [x, w])[0])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[0], np_conv2d(x, w), **TOL[np.float32])


# Note [float32 backward weights] in onednn_conv.cc: with more than one thread, at least one image per thread and
# at least 16 M FLOP, float32 backward weights runs one-thread primitives on batch slices and sums their partials.
SPLIT_FILTER_CASES = [  # x shape (N, C, H, W), filter shape; 2 N C H W O 9 FLOP >= 16 M
    ((8, 16, 32, 32), (16, 16, 3, 3), dict(pad_mode="pad", pad=1)),
    ((4, 16, 32, 32), (64, 16, 3, 3), dict(pad_mode="pad", pad=1, stride=2)),  # 4 images on 3 threads: 2 slices of 2
]


def split_filter_inputs(x_shape, w_shape, attrs, data_format):
    rng = np.random.default_rng(31)
    x = rand(rng, x_shape, np.float32)
    dy = rand(rng, np_conv2d(x, rand(rng, w_shape, np.float32), **conv_kwargs(attrs)).shape, np.float32)
    args = dict(attrs, filter_shape=list(w_shape))
    if data_format == "NHWC":
        return x, dy, [nhwc(dy), nhwc(x)], dict(args, data_format="NHWC")
    return x, dy, [dy, x], args


def with_threads(threads, deterministic="OFF"):
    """1, 2 or 3 kernel threads (3: runtime_num_threads 2 and one more loop thread, Note [Thread plan])."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oversubscribes small machines, on purpose
        msrt.set_context(runtime_num_threads=min(threads, 2), inter_op_parallel_num=2 if threads == 3 else 0,
                         deterministic=deterministic)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("x_shape,w_shape,attrs", SPLIT_FILTER_CASES)
def test_conv2d_backprop_filter_float32_batch_slices(x_shape, w_shape, attrs, data_format, threads):
    """The slices' partial weights cover every image once, whatever the thread count, and a second run gives the
    same bits (the partials are summed in slice order). Tolerance: each weight is a float32 sum of
    N * OH * OW products; summed in any order its error is at most (terms added in sequence) * 2^-24 * sum |terms|,
    and oneDNN and the slices add far fewer than 160 in sequence, so 1e-5 * sum |terms| holds; an image left out
    or counted twice moves a weight by about sum |terms| / N, 1e4 times that."""
    x, dy, inputs, args = split_filter_inputs(x_shape, w_shape, attrs, data_format)
    with_threads(threads)
    (dw,) = run_op("conv2d_backprop_filter", inputs, args)
    (again,) = run_op("conv2d_backprop_filter", inputs, args)
    kw = conv_kwargs(attrs)
    want = np_conv2d_backprop_filter(dy.astype(np.float64), x.astype(np.float64), w_shape, **kw)
    magnitude = np_conv2d_backprop_filter(np.abs(dy).astype(np.float64), np.abs(x).astype(np.float64), w_shape, **kw)
    assert dw.dtype == np.float32 and dw.shape == w_shape
    assert np.all(np.abs(dw - want) <= 1e-5 * magnitude), np.max(np.abs(dw - want) / magnitude)
    np.testing.assert_array_equal(again, dw)


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_conv2d_backprop_filter_float32_deterministic_is_bit_identical_across_thread_counts(data_format):
    """deterministic="ON" promises the same bits whatever runtime_num_threads is: no batch slices then."""
    x_shape, w_shape, attrs = SPLIT_FILTER_CASES[1]
    _, _, inputs, args = split_filter_inputs(x_shape, w_shape, attrs, data_format)
    outs = []
    for threads in (1, 2, 3):
        with_threads(threads, deterministic="ON")
        outs.append(run_op("conv2d_backprop_filter", inputs, args)[0])
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(outs[2], outs[0])


# ---------------------------------------------------------------------------
# Gradient checks (float64: reference kernels)


@pytest.mark.parametrize("ta,tb", list(itertools.product([False, True], repeat=2)))
def test_matmul_grad(ta, tb):
    rng = np.random.default_rng(12)
    a = rand(rng, (4, 3) if ta else (3, 4))
    b = rand(rng, (5, 4) if tb else (4, 5))
    check_grad("matmul", [a, b], {"transpose_a": ta, "transpose_b": tb}, wrt=(0, 1))


@needs_ops("reduce_sum", "reshape")
@pytest.mark.parametrize("a_shape,b_shape,ta,tb", [
    ((2, 3, 4), (2, 4, 2), False, False),
    ((1, 4, 3), (3, 4, 2), True, False),
    ((2, 1, 3, 4), (3, 2, 4), False, True),
])
def test_batch_matmul_grad(a_shape, b_shape, ta, tb):
    rng = np.random.default_rng(13)
    check_grad("batch_matmul", [rand(rng, a_shape), rand(rng, b_shape)], {"transpose_a": ta, "transpose_b": tb},
               wrt=(0, 1))


@needs_ops("reduce_sum", "reshape")
@pytest.mark.parametrize("x_shape", [(3, 4), (2, 2, 4), (4,)])
def test_dense_grad(x_shape):
    rng = np.random.default_rng(14)
    check_grad("dense", [rand(rng, x_shape), rand(rng, (3, 4)), rand(rng, (3,))], wrt=(0, 1, 2))


@needs_ops("reduce_sum")
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2, 2)])
def test_bias_add_grad(shape):
    rng = np.random.default_rng(15)
    check_grad("bias_add", [rand(rng, shape), rand(rng, (shape[1],))], wrt=(0, 1))


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2, 5)])
def test_bias_add_channels_last_grad_and_its_own_grad(shape):
    rng = np.random.default_rng(16)
    nhwc = {"data_format": "NHWC"}
    check_grad("bias_add", [rand(rng, shape), rand(rng, (shape[-1],))], nhwc, wrt=(0, 1))
    check_grad("bias_add_grad", [rand(rng, shape)], nhwc)
    check_grad("bias_add_grad", [rand(rng, shape)], {"data_format": "NCHW"})


@pytest.mark.parametrize("x_shape,w_shape,attrs", [
    ((1, 2, 5, 5), (3, 2, 3, 3), {}),
    ((2, 2, 6, 5), (2, 2, 2, 3), {"stride": 2, "pad_mode": "same"}),
    ((1, 2, 7, 6), (2, 2, 3, 2), {"pad_mode": "pad", "pad": [1, 0, 2, 1], "dilation": [2, 1]}),
    ((1, 4, 5, 5), (4, 2, 3, 3), {"group": 2, "pad_mode": "valid"}),
])
def test_conv2d_grad(x_shape, w_shape, attrs):
    rng = np.random.default_rng(16)
    check_grad("conv2d", [rand(rng, x_shape), rand(rng, w_shape)], attrs, wrt=(0, 1))


def test_conv2d_backprop_grads():
    rng = np.random.default_rng(17)
    attrs = {"stride": 2, "pad_mode": "same", "group": 2}
    x_shape, w_shape = (1, 4, 5, 5), (2, 2, 3, 3)
    dy = rand(rng, (1, 2, 3, 3))
    check_grad("conv2d_backprop_input", [dy, rand(rng, w_shape)], dict(attrs, input_shape=list(x_shape)),
               wrt=(0, 1))
    check_grad("conv2d_backprop_filter", [dy, rand(rng, x_shape)], dict(attrs, filter_shape=list(w_shape)),
               wrt=(0, 1))


@pytest.mark.parametrize("shape,kernel,strides,pad_mode", [
    ((1, 2, 6, 6), [2, 2], [2, 2], "valid"),
    ((2, 1, 5, 7), [3, 3], [2, 2], "same"),
    ((1, 2, 5, 4), [2, 3], [1, 1], "same"),
])
def test_pooling_grads(shape, kernel, strides, pad_mode):
    rng = np.random.default_rng(18)
    x = rng.permutation(np.prod(shape)).reshape(shape) / np.prod(shape)  # distinct values: no ties
    attrs = {"kernel_size": kernel, "strides": strides, "pad_mode": pad_mode}
    check_grad("max_pool2d", [x], attrs)
    check_grad("avg_pool2d", [x], attrs)
    dy = rand(rng, run_op("avg_pool2d", [x], attrs)[0].shape)
    check_grad("avg_pool2d_grad", [x, dy], attrs, wrt=(1,))


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 3, 2)])
def test_batch_norm_training_grad(shape):
    rng = np.random.default_rng(19)
    inputs = list(bn_inputs(rng, shape, np.float64))
    check_grad("batch_norm", inputs, {"is_training": True}, wrt=(0, 1, 2), rtol=1e-4, atol=1e-6)


@needs_ops("mul", "sub", "reshape", "reduce_sum")
def test_batch_norm_inference_grad():
    rng = np.random.default_rng(20)
    inputs = list(bn_inputs(rng, (3, 2, 2, 2), np.float64))
    check_grad("batch_norm", inputs, {"is_training": False}, wrt=(0, 1, 2))


def test_batch_norm_float32_gradient_matches_numpy():
    rng = np.random.default_rng(21)
    x, scale, bias, running_mean, running_var = bn_inputs(rng, (4, 3, 5, 5), np.float32)
    dy = rand(rng, x.shape, np.float32)
    dx, dscale, dbias = gradients("batch_norm", [x, scale, bias, running_mean, running_var], {"is_training": True},
                                  wrt=(0, 1, 2), sens=dy)
    _, mean, _, inv = np_batch_norm_train(x.astype(np.float64), scale, bias, 1e-5)
    edx, edscale, edbias = np_batch_norm_grad(dy.astype(np.float64), x.astype(np.float64), scale, mean, inv)
    np.testing.assert_allclose(dx, edx, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(dscale, edscale, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(dbias, edbias, rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------------------
# Errors


def raises(exc, match, name, inputs, attrs=None):
    with pytest.raises(exc, match=match):
        run_op(name, inputs, attrs)


def f32(*shape):
    return np.zeros(shape, np.float32)


def test_matmul_errors():
    raises(ValueError, r"\[matmul\] the inner dimensions .* expected a's 3 to equal b's, but got 4", "matmul",
           [f32(2, 3), f32(4, 5)])
    raises(ValueError, r"\[matmul\] input 'a' must be 2-D", "matmul", [f32(2, 3, 4), f32(4, 5)])
    raises(TypeError, r"\[matmul\] input 'b' must have the dtype of 'a'", "matmul",
           [f32(2, 3), np.zeros((3, 2))])
    raises(TypeError, r"\[matmul\] input 'a' has an unsupported dtype", "matmul",
           [np.zeros((2, 3), np.int32), np.zeros((3, 2), np.int32)])
    raises(ValueError, r"\[batch_matmul\] input 'a' must have rank 3 or more", "batch_matmul",
           [f32(2, 3), f32(2, 3, 2)])
    raises(ValueError, r"\[batch_matmul\] shapes \(2,\) and \(3,\) can not be broadcast", "batch_matmul",
           [f32(2, 3, 4), f32(3, 4, 2)])
    raises(ValueError, r"\[bias_add\] input 'bias' must be 1-D with x's channels", "bias_add", [f32(2, 3), f32(2)])
    raises(ValueError, r"\[dense\] x's last dim must equal weight's in_channels", "dense",
           [f32(2, 3), f32(4, 5), f32(4)])
    raises(ValueError, r"\[dense\] input 'bias' must have shape \(out_channels,\)", "dense",
           [f32(2, 5), f32(4, 5), f32(5)])


def test_conv2d_errors():
    raises(ValueError, r"\[conv2d\] x must be a 4-D tensor", "conv2d", [f32(3, 5, 5), f32(2, 3, 3, 3)])
    raises(ValueError, r"\[conv2d\] x's channels must equal weight.shape\[1\] \* group; expected 4 \(2 \* 2\), "
           r"but got 3", "conv2d", [f32(1, 3, 5, 5), f32(2, 2, 3, 3)], {"group": 2})
    raises(ValueError, r"divisible by group 2; but got 3", "conv2d", [f32(1, 4, 5, 5), f32(3, 2, 3, 3)],
           {"group": 2})
    raises(ValueError, r"'pad_mode' must be one of 'same', 'valid' or 'pad'; but got 'full'", "conv2d",
           [f32(1, 1, 5, 5), f32(1, 1, 3, 3)], {"pad_mode": "full"})
    raises(ValueError, r"'pad' must be zero when 'pad_mode' is not 'pad'", "conv2d",
           [f32(1, 1, 5, 5), f32(1, 1, 3, 3)], {"pad": 1})
    raises(ValueError, r"'pad' must be a non-negative int or a list of 4", "conv2d",
           [f32(1, 1, 5, 5), f32(1, 1, 3, 3)], {"pad_mode": "pad", "pad": [1, 2]})
    raises(ValueError, r"'stride' must be a positive int", "conv2d", [f32(1, 1, 5, 5), f32(1, 1, 3, 3)],
           {"stride": [0, 1]})
    raises(ValueError, r"'dilation' must be a positive int", "conv2d", [f32(1, 1, 5, 5), f32(1, 1, 3, 3)],
           {"dilation": [1, 2, 3]})
    raises(ValueError, r"the height of the input .* smaller than the \(dilated\) window; expected at least 5, but "
           r"got 4", "conv2d", [f32(1, 1, 4, 9), f32(1, 1, 3, 3)], {"pad_mode": "valid", "dilation": 2})
    raises(TypeError, r"\[conv2d\] input 'weight' must have the dtype of 'x'", "conv2d",
           [f32(1, 1, 5, 5), np.zeros((1, 1, 3, 3))])
    raises(TypeError, r"\[conv2d\] got an unknown attribute 'padding'", "conv2d",
           [f32(1, 1, 5, 5), f32(1, 1, 3, 3)], {"padding": 1})
    raises(ValueError, r"\[conv2d_backprop_input\] input 'dy' must have conv2d's output shape; expected "
           r"\(1, 2, 5, 5\), but got \(1, 2, 4, 4\)", "conv2d_backprop_input", [f32(1, 2, 4, 4), f32(2, 1, 3, 3)],
           {"input_shape": [1, 1, 5, 5]})
    raises(TypeError, r"\[conv2d_backprop_filter\] missing the required attribute 'filter_shape'",
           "conv2d_backprop_filter", [f32(1, 2, 5, 5), f32(1, 1, 5, 5)])
    raises(ValueError, r"'filter_shape' must list 4 positive sizes", "conv2d_backprop_filter",
           [f32(1, 2, 5, 5), f32(1, 1, 5, 5)], {"filter_shape": [2, 1, 3]})


def test_pooling_errors():
    raises(ValueError, r"\[max_pool2d\] x must be a 4-D tensor", "max_pool2d", [f32(1, 5, 5)],
           {"kernel_size": 2, "strides": 2})
    raises(ValueError, r"\[avg_pool2d\] 'pad_mode' must be one of 'same' or 'valid'; but got 'pad'",
           "avg_pool2d", [f32(1, 1, 5, 5)], {"kernel_size": 2, "strides": 2, "pad_mode": "pad"})
    raises(ValueError, r"'kernel_size' must be a positive int", "max_pool2d", [f32(1, 1, 5, 5)],
           {"kernel_size": [0, 2], "strides": 1})
    raises(ValueError, r"smaller than the \(dilated\) window; expected at least 6, but got 5", "max_pool2d",
           [f32(1, 1, 5, 5)], {"kernel_size": 6, "strides": 1})
    raises(ValueError, r"\[max_pool2d_grad\] input 'dy' must have the pooling's output shape; expected "
           r"\(1, 1, 2, 2\)", "max_pool2d_grad", [f32(1, 1, 5, 5), f32(1, 1, 2, 2), f32(1, 1, 3, 3)],
           {"kernel_size": 2, "strides": 2})


def test_batch_norm_errors():
    raises(ValueError, r"\[batch_norm\] input 'running_var' must have shape \(C,\) with x's channels; expected "
           r"\(3,\), but got \(2,\)", "batch_norm", [f32(2, 3), f32(3), f32(3), f32(3), f32(2)])
    raises(ValueError, r"\[batch_norm\] input 'x' must have rank 2 or more", "batch_norm",
           [f32(3), f32(3), f32(3), f32(3), f32(3)])
    raises(TypeError, r"\[batch_norm\] input 'scale' must have the dtype of 'x'", "batch_norm",
           [f32(2, 3), np.zeros(3), f32(3), f32(3), f32(3)])
    raises(ValueError, r"'epsilon' must be positive", "batch_norm", [f32(2, 3)] + [f32(3)] * 4, {"epsilon": 0.0})
    raises(ValueError, r"\[batch_norm_grad\] input 'dy' must have x's shape", "batch_norm_grad",
           [f32(2, 4), f32(2, 3), f32(3), f32(3), f32(3)])
    raises(ValueError, r"\[batch_norm\] input 'x' must have rank 4 with data_format 'NHWC'; but got shape "
           r"\(2, 3\)", "batch_norm", [f32(2, 3)] + [f32(3)] * 4, {"data_format": "NHWC"})
    raises(ValueError, r"\[batch_norm\] input 'scale' must have shape \(C,\) with x's channels; expected \(5,\)",
           "batch_norm", [f32(2, 3, 4, 5)] + [f32(3)] * 4, {"data_format": "NHWC"})
    raises(ValueError, r"data_format", "batch_norm", [f32(2, 3)] + [f32(3)] * 4, {"data_format": "NDHWC"})


# ---------------------------------------------------------------------------
# leaky_relu (a composite: select(x > 0, x, alpha * x))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5])
def test_leaky_relu_matches_numpy_and_torch(dtype, alpha):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(30)
    x = rand(rng, (3, 4, 5), dtype)
    x[0, 0, :2] = 0.0  # x = 0 takes the alpha branch, as torch's does
    (out,) = run_op("leaky_relu", [x], {"alpha": alpha})
    np.testing.assert_allclose(out, np.where(x > 0, x, alpha * x), **TOL[dtype])
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.leaky_relu(tx, negative_slope=alpha)
    np.testing.assert_allclose(out, ty.detach().numpy(), **TOL[dtype])
    sens = rand(rng, x.shape, dtype)
    ty.backward(torch.tensor(sens))
    (dx,) = gradients("leaky_relu", [x], {"alpha": alpha}, sens=sens)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **TOL[dtype])
    np.testing.assert_allclose(dx, np.where(x > 0, sens, alpha * sens), **TOL[dtype])


def test_leaky_relu_gradient_and_function_form():
    rng = np.random.default_rng(31)
    x = rand(rng, (4, 3))
    x[np.abs(x) < 0.05] = 0.5  # away from the kink at 0
    check_grad("leaky_relu", [x], {"alpha": 0.3})
    y = msrt.ops.leaky_relu(msrt.Tensor(x), 0.3)
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.3 * x))
    np.testing.assert_allclose(msrt.ops.leaky_relu(msrt.Tensor(x)).asnumpy(), np.where(x > 0, x, 0.2 * x))
    with pytest.raises(TypeError, match=r"\[leaky_relu\] attribute 'alpha' must be a float"):
        msrt.ops.leaky_relu(msrt.Tensor(x), "a")


# ---------------------------------------------------------------------------
# Attribute forms: parsed once (AttrType), checked together (attrs_check)


def test_nn_attributes_take_one_canonical_form():
    check = _C.check_attrs
    assert check("conv2d", {"stride": 2, "dilation": (1, 1, 3, 2), "pad": 1, "pad_mode": "PAD"}) == {
        "stride": [2, 2], "dilation": [3, 2], "pad": [1, 1, 1, 1], "pad_mode": "pad"}
    expected = {"kernel_size": [2, 3], "pad_mode": "same"}
    assert check("max_pool2d", {"kernel_size": (2, 3), "pad_mode": "Same"}) == expected
    assert check("batch_norm", {"epsilon": 1, "momentum": 0}) == {"epsilon": 1.0, "momentum": 0.0}
    with pytest.raises(ValueError, match=r"\[conv2d\] 'pad' must be zero when 'pad_mode' is not 'pad'"):
        check("conv2d", {"pad_mode": "same", "pad": [0, 1, 0, 0]})
    with pytest.raises(ValueError, match=r"\[max_pool2d\] 'pad_mode' must be one of 'same' or 'valid'"):
        check("max_pool2d", {"pad_mode": "PAD"})
    with pytest.raises(ValueError, match=r"'momentum' must be in \[0, 1\]"):
        check("batch_norm", {"momentum": 1.5})
    with pytest.raises(TypeError, match=r"\[matmul\] attribute 'transpose_a' must be a bool"):
        check("matmul", {"transpose_a": 1})
    with pytest.raises(ValueError, match=r"'group' must be at least 1"):
        check("conv2d", {"group": 0})


def test_declared_nn_primitives_record_mindspore_parameters():
    x = msrt.Tensor(np.ones((1, 2, 5, 5), np.float32))
    w = msrt.Tensor(np.ones((4, 2, 3, 3), np.float32))
    conv = msrt.ops.Conv2D(4, (3, 3), pad_mode="pad", pad=1)
    # out_channel, kernel_size and mode (p->~) are recorded, not passed to the op.
    assert conv.attrs["out_channel"] == 4 and conv.attrs["kernel_size"] == (3, 3) and conv.attrs["mode"] == 1
    assert conv(x, w).shape == (1, 4, 5, 5)
    with pytest.raises(TypeError, match="out_channel"):
        msrt.ops.Conv2D(kernel_size=3)
    with pytest.raises(ValueError, match="'pad' must be a non-negative int or a list of 4"):
        msrt.ops.Conv2D(4, 3, pad_mode="pad", pad=(1, 2))
    with pytest.raises(ValueError, match="'pad_mode' must be one of 'same' or 'valid'"):
        msrt.ops.MaxPool(2, 2, pad_mode="pad")
    drop = msrt.ops.Dropout(keep_prob=0.5, Seed0=3, Seed1=4)
    assert drop.attrs == {"keep_prob": 0.5, "Seed0": 3, "Seed1": 4}
    out, mask = drop(x)
    assert out.shape == mask.shape == (1, 2, 5, 5)
    with pytest.raises(ValueError, match=r"\[dropout\] attribute 'keep_prob' must be in \(0, 1\]"):
        msrt.ops.Dropout(keep_prob=0.0)
    eye, ones = np.eye(2, dtype=np.float32), np.ones((2, 2), np.float32)
    np.testing.assert_allclose(msrt.ops.mm(msrt.Tensor(eye), msrt.Tensor(ones)).asnumpy(), ones)


# ---------------------------------------------------------------------------
# MindSpore's functional forms (composites over the ops above): ops.matmul,
# dense, bias_add, conv2d, max_pool2d, avg_pool2d, batch_norm, gelu, softmax
# and dropout, and the BatchNorm primitive's five outputs.

covers("matmul_ext", "dense_ext", "bias_add_ext", "conv2d_ext", "max_pool2d_ext", "avg_pool2d_ext", "batch_norm_ext",
       "batch_norm_stats", "gelu_ext", "softmax_ext", "dropout_ext")


def ms_grads(fn, args, sens, positions):
    """Gradients of sum(sens * fn(*args)) w.r.t. args[positions], through msrt.grad."""
    s = msrt.Tensor(sens)
    grads = msrt.grad(lambda *a: (fn(*a) * s).sum(), grad_position=positions)(*args)
    return [g.asnumpy() for g in (grads if isinstance(grads, tuple) else (grads,))]


def torch_backward(torch, out, sens):
    out.backward(torch.tensor(sens))
    return out.detach().numpy()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
    ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,))])
def test_matmul_ext_matches_numpy_and_torch(dtype, a_shape, b_shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(40)
    a, b = rand(rng, a_shape, dtype), rand(rng, b_shape, dtype)
    (out,) = run_op("matmul_ext", [a, b])
    np.testing.assert_allclose(out, np.matmul(a.astype(np.float64), b), **TOL[dtype])
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ty = torch.matmul(ta, tb)
    sens = np.asarray(rand(rng, tuple(ty.shape), dtype))
    np.testing.assert_allclose(out, torch_backward(torch, ty, sens), **TOL[dtype])
    da, db = gradients("matmul_ext", [a, b], wrt=(0, 1), sens=sens)
    np.testing.assert_allclose(da, ta.grad.numpy(), **TOL[dtype])
    np.testing.assert_allclose(db, tb.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape", [(2, 3), (2, 5, 3), (3,)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_dense_ext_matches_torch_linear(dtype, x_shape, with_bias):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(41)
    arrays = [rand(rng, x_shape, dtype), rand(rng, (4, 3), dtype)] + ([rand(rng, (4,), dtype)] if with_bias else [])
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ty = torch.nn.functional.linear(*ts)
    sens = np.asarray(rand(rng, tuple(ty.shape), dtype))
    expected = torch_backward(torch, ty, sens)
    args = [msrt.Tensor(a) for a in arrays]
    np.testing.assert_allclose(msrt.ops.dense(*args).asnumpy(), expected, **TOL[dtype])
    grads = ms_grads(msrt.ops.dense, args, sens, tuple(range(len(args))))
    for got, t in zip(grads, ts):
        np.testing.assert_allclose(got, t.grad.numpy(), **TOL[dtype])


def test_dense_primitive_without_bias_ignores_one_given():
    rng = np.random.default_rng(42)
    x, w, b = rand(rng, (2, 3)), rand(rng, (4, 3)), rand(rng, (4,))
    args = [msrt.Tensor(a) for a in (x, w, b)]
    np.testing.assert_allclose(msrt.ops.Dense(has_bias=False)(*args).asnumpy(), x @ w.T, rtol=1e-12)
    np.testing.assert_allclose(msrt.ops.Dense()(*args).asnumpy(), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(msrt.ops.Dense()(*args[:2]).asnumpy(), x @ w.T, rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, data_format", [((2, 3), "NCHW"), ((2, 3, 4, 5), "NCHW"), ((2, 3, 2, 2, 2), "NCDHW")])
def test_bias_add_ext_matches_torch(dtype, shape, data_format):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(43)
    x, b = rand(rng, shape, dtype), rand(rng, (3,), dtype)
    attrs = {"data_format": data_format}
    (out,) = run_op("bias_add_ext", [x, b], attrs)
    tx, tb = torch.tensor(x, requires_grad=True), torch.tensor(b, requires_grad=True)
    ty = tx + tb.reshape((1, 3) + (1,) * (len(shape) - 2))
    sens = rand(rng, shape, dtype)
    np.testing.assert_allclose(out, torch_backward(torch, ty, sens), **TOL[dtype])
    dx, db = gradients("bias_add_ext", [x, b], attrs, wrt=(0, 1), sens=sens)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **TOL[dtype])
    np.testing.assert_allclose(db, tb.grad.numpy(), **TOL[dtype])


# (ops.conv2d keywords, stride, dilation, (top, bottom, left, right) padding) for x (2, 4, 7, 6) and 3x3 weights.
CONV_EXT_CASES = [
    ({}, 1, 1, (0, 0, 0, 0)),
    ({"stride": 2, "padding": 1}, 2, 1, (1, 1, 1, 1)),
    ({"padding": (1, 2)}, 1, 1, (1, 1, 2, 2)),
    ({"padding": (0, 1, 2, 1), "dilation": 2}, 1, 2, (0, 1, 2, 1)),
    ({"padding": "same"}, 1, 1, (1, 1, 1, 1)),
    ({"pad_mode": "same", "stride": 2}, 2, 1, (1, 1, 0, 1)),  # the odd pixel at the bottom and right
    ({"pad_mode": "pad", "padding": 1, "groups": 2}, 1, 1, (1, 1, 1, 1)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs, stride, dilation, pads", CONV_EXT_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv2d_ext_matches_torch(dtype, kwargs, stride, dilation, pads, with_bias):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(44)
    groups = kwargs.get("groups", 1)
    arrays = [rand(rng, (2, 4, 7, 6), dtype), rand(rng, (6, 4 // groups, 3, 3), dtype)]
    arrays += [rand(rng, (6,), dtype)] if with_bias else []
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    top, bottom, left, right = pads
    padded = torch.nn.functional.pad(ts[0], (left, right, top, bottom))
    ty = torch.nn.functional.conv2d(padded, ts[1], ts[2] if with_bias else None, stride=stride, dilation=dilation,
                                    groups=groups)
    sens = rand(rng, tuple(ty.shape), dtype)
    expected = torch_backward(torch, ty, sens)

    def conv(x, w, b=None):
        return msrt.ops.conv2d(x, w, b, **kwargs)

    args = [msrt.Tensor(a) for a in arrays]
    np.testing.assert_allclose(conv(*args).asnumpy(), expected, **TOL[dtype])
    for got, t in zip(ms_grads(conv, args, sens, tuple(range(len(args)))), ts):
        np.testing.assert_allclose(got, t.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kernel, stride", [(2, None), (3, 1), ((2, 3), (1, 2)), (3, 2)])
def test_pool2d_ext_matches_torch(dtype, kind, kernel, stride):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(45)
    x = rand(rng, (2, 3, 7, 8), dtype)
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, f"{kind}_pool2d")(tx, kernel, stride)
    sens = rand(rng, tuple(ty.shape), dtype)
    expected = torch_backward(torch, ty, sens)
    fn = getattr(msrt.ops, f"{kind}_pool2d")

    def pool(t):
        return fn(t, kernel, stride)

    np.testing.assert_allclose(pool(msrt.Tensor(x)).asnumpy(), expected, **TOL[dtype])
    (dx,) = ms_grads(pool, [msrt.Tensor(x)], sens, 0)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **TOL[dtype])
    (out,) = run_op(f"{kind}_pool2d_ext", [x], {"kernel_size": kernel, "strides": stride})
    np.testing.assert_allclose(out, expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_ext_matches_torch(dtype, training):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(46)
    x, scale, bias, running_mean, running_var = bn_inputs(rng, (4, 3, 5, 5), dtype)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, scale, bias))
    trm, trv = torch.tensor(running_mean), torch.tensor(running_var)
    ty = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, training=training, momentum=0.2, eps=1e-3)
    sens = rand(rng, x.shape, dtype)
    expected = torch_backward(torch, ty, sens)
    stats = [msrt.Tensor(running_mean.copy()), msrt.Tensor(running_var.copy())]

    def bn(xm, wm, bm):
        return msrt.ops.batch_norm(xm, stats[0], stats[1], wm, bm, training=training, momentum=0.2, eps=1e-3)

    args = [msrt.Tensor(a) for a in (x, scale, bias)]
    np.testing.assert_allclose(bn(*args).asnumpy(), expected, **TOL[dtype])
    # The running statistics were updated in place as torch's were (once: gradients start again from copies).
    np.testing.assert_allclose(stats[0].asnumpy(), trm.numpy(), **TOL[dtype])
    np.testing.assert_allclose(stats[1].asnumpy(), trv.numpy(), **TOL[dtype])
    stats[:] = [msrt.Tensor(running_mean.copy()), msrt.Tensor(running_var.copy())]
    for got, t in zip(ms_grads(bn, args, sens, (0, 1, 2)), (tx, tw, tb)):
        np.testing.assert_allclose(got, t.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_stats_gives_mindspores_five_outputs(dtype, training):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(47)
    inputs = bn_inputs(rng, (4, 3, 2, 5), dtype)
    x, scale, bias, running_mean, running_var = inputs
    attrs = {"is_training": training, "epsilon": 1e-3, "momentum": 0.2}
    outs = run_op("batch_norm_stats", list(inputs), attrs)
    if training:
        y, mean, var, inv = np_batch_norm_train(x.astype(np.float64), scale, bias, 1e-3)
        expected = [y, mean, var, mean, inv]
    else:
        inv = 1 / np.sqrt(running_var.astype(np.float64) + 1e-3)
        y = (x - along_channels(running_mean, x)) * along_channels(inv * scale, x) + along_channels(bias, x)
        expected = [y, running_mean, running_var, running_mean, running_var]
    assert len(outs) == 5
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got, want, **TOL[dtype])
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, scale, bias))
    ty = torch.nn.functional.batch_norm(tx, torch.tensor(running_mean), torch.tensor(running_var), tw, tb,
                                        training=training, momentum=0.2, eps=1e-3)
    sens = rand(rng, x.shape, dtype)
    np.testing.assert_allclose(outs[0], torch_backward(torch, ty, sens), **TOL[dtype])
    grads = gradients("batch_norm_stats", list(inputs), attrs, wrt=(0, 1, 2), sens=sens)
    for got, t in zip(grads, (tx, tw, tb)):
        np.testing.assert_allclose(got, t.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_ext_matches_torch(dtype, approximate):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(48)
    x = rand(rng, (3, 4, 5), dtype, -3, 3)
    (out,) = run_op("gelu_ext", [x], {"approximate": approximate})
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.gelu(tx, approximate=approximate)
    sens = rand(rng, x.shape, dtype)
    np.testing.assert_allclose(out, torch_backward(torch, ty, sens), **TOL[dtype])
    (dx,) = gradients("gelu_ext", [x], {"approximate": approximate}, sens=sens)
    np.testing.assert_allclose(dx, tx.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype, cast", [(np.float32, None), (np.float64, None), (np.float32, "float64")])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_ext_matches_torch(dtype, cast, axis):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(49)
    x = rand(rng, (3, 4, 5), dtype, -3, 3)
    attrs = {"axis": axis} if cast is None else {"axis": axis, "dtype": cast}
    (out,) = run_op("softmax_ext", [x], attrs)
    assert out.dtype == (dtype if cast is None else np.float64)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.softmax(tx if cast is None else tx.double(), dim=axis)
    sens = rand(rng, x.shape, out.dtype)
    np.testing.assert_allclose(out, torch_backward(torch, ty, sens), **TOL[dtype])
    (dx,) = gradients("softmax_ext", [x], attrs, sens=sens)
    assert dx.dtype == dtype
    np.testing.assert_allclose(dx, tx.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_ext_scales_what_it_keeps_and_its_gradient_is_the_mask(dtype):
    rng = np.random.default_rng(50)
    x = rand(rng, (200, 50), dtype, 0.5, 1.5)
    sens = rand(rng, x.shape, dtype)
    t = tensor(x)
    t.requires_grad = True
    tape = _C.GradTape()
    try:
        (y,) = _C.call("dropout_ext", [t], {"p": 0.25})
        (dx,) = tape.gradient([y], [tensor(sens)], [t])
    finally:
        tape.end()
    y, dx = y.asnumpy(), dx.asnumpy()
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y, np.where(kept, x / dtype(0.75), 0), **TOL[dtype])
    np.testing.assert_allclose(dx, np.where(kept, sens / dtype(0.75), 0), **TOL[dtype])
    # Nothing dropped: x itself (and its gradient is sens); everything dropped: zeros.
    for attrs in ({"p": 0.0}, {"p": 0.6, "training": False}):
        np.testing.assert_array_equal(run_op("dropout_ext", [x], attrs)[0], x)
        np.testing.assert_array_equal(gradients("dropout_ext", [x], attrs, sens=sens)[0], sens)
    np.testing.assert_array_equal(run_op("dropout_ext", [x], {"p": 1.0})[0], np.zeros_like(x))


def test_functional_forms_have_mindspores_signatures():
    ops = msrt.ops
    signatures = {
        ops.matmul: "(input, other)",
        msrt.Tensor.matmul: "(self, other)",
        ops.dense: "(input, weight, bias=None)",
        ops.bias_add: "(input_x, bias, data_format='NCHW')",
        ops.conv2d: "(input, weight, bias=None, stride=1, pad_mode='valid', padding=0, dilation=1, groups=1)",
        ops.max_pool2d: "(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)",
        ops.avg_pool2d: "(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True, "
                        "divisor_override=None)",
        ops.batch_norm: "(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1, eps=1e-05)",
        ops.gelu: "(input_x, approximate='none')",
        ops.softmax: "(input, axis=-1, *, dtype=None)",
        ops.dropout: "(input, p=0.5, training=True, seed=None)",
        ops.Dense: "(has_bias=True)",
        ops.Dense.__call__: "(self, x, w, b=None)",
        ops.BiasAdd: "(data_format='NCHW')",
        ops.BiasAdd.__call__: "(self, input_x, bias)",
        ops.BatchNorm: "(is_training=False, epsilon=1e-05, momentum=0.1, data_format='NCHW')",
        ops.BatchNorm.__call__: "(self, input_x, scale, bias, mean, variance)",
        ops.GeLU: "()",
        ops.GELU: "()",
        ops.Flatten: "()",
        ops.Flatten.__call__: "(self, input_x)",
    }
    for fn, expected in signatures.items():
        assert str(inspect.signature(fn)) == expected, fn


def test_functional_forms_check_their_arguments_in_the_ops():
    ops = msrt.ops
    x = msrt.Tensor(np.ones((1, 2, 6, 6), np.float32))
    w = msrt.Tensor(np.ones((3, 2, 3, 3), np.float32))
    with pytest.raises(ValueError, match=r"\[matmul_ext\] the inputs must have rank 1 or more"):
        ops.matmul(msrt.Tensor(1.0), msrt.Tensor(2.0))
    with pytest.raises(ValueError, match=r"\[bias_add_ext\] attribute 'data_format' must be one of 'NCHW', 'NHWC' or "
                                         r"'NCDHW'"):
        ops.bias_add(x, msrt.Tensor(np.ones(2, np.float32)), data_format="NDHWC")
    with pytest.raises(ValueError, match=r"\[bias_add_ext\] attribute 'data_format'"):
        ops.BiasAdd(data_format="CHWN")  # when the primitive is built
    # NHWC: channels on the last axis, which (6) the bias (2) does not match.
    with pytest.raises(ValueError, match=r"\[bias_add\] input 'bias' must be 1-D with x's channels \(axis 3\); "
                                         r"expected shape \(6,\)"):
        ops.bias_add(x, msrt.Tensor(np.ones(2, np.float32)), data_format="NHWC")
    assert ops.bias_add(x, msrt.Tensor(np.ones(6, np.float32)), "NHWC").shape == (1, 2, 6, 6)
    assert ops.bias_add(x, msrt.Tensor(np.ones(2, np.float32)), "NCDHW").shape == (1, 2, 6, 6)
    with pytest.raises(ValueError, match=r"\[conv2d_ext\] 'padding' must be one of 'same', 'valid' or 'pad'"):
        ops.conv2d(x, w, padding="full")
    with pytest.raises(ValueError, match=r"\[conv2d_ext\] attribute 'padding' must be a non-negative int"):
        ops.conv2d(x, w, padding=(1, 2, 3))
    with pytest.raises(ValueError, match=r"\[conv2d\] 'pad' must be zero when 'pad_mode' is not 'pad'"):
        ops.conv2d(x, w, pad_mode="same", padding=1)
    for kwargs in ({"padding": 1}, {"dilation": 2}, {"return_indices": True}, {"ceil_mode": True}):
        with pytest.raises(NotImplementedError, match=f"'{next(iter(kwargs))}'"):
            ops.max_pool2d(x, 2, **kwargs)
    with pytest.raises(NotImplementedError, match="'divisor_override'"):
        ops.avg_pool2d(x, 2, divisor_override=3)
    assert ops.avg_pool2d(x, 2, 2, count_include_pad=False).shape == (1, 2, 3, 3)
    with pytest.raises(TypeError, match=r"\[max_pool2d_ext\] missing the required attribute 'kernel_size'"):
        _C.call("max_pool2d_ext", [x._t], {})
    scale = msrt.Tensor(np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"\[batch_norm_ext\] 'momentum' must be in \[0, 1\]"):
        ops.batch_norm(x, scale, scale, scale, scale, momentum=2.0)
    with pytest.raises(ValueError, match=r"\[batch_norm_stats\] 'data_format' must be 'NCHW'"):
        ops.BatchNorm(data_format="NHWC")
    with pytest.raises(ValueError, match=r"\[gelu_ext\] attribute 'approximate' must be one of 'none' or 'tanh'"):
        ops.gelu(x, approximate="fast")
    assert ops.softmax(x, dtype=msrt.float64).dtype == msrt.float64
    with pytest.raises(TypeError, match="'dtype'"):
        ops.softmax(x, dtype="float7")
    for training in (True, False):  # p is checked even when nothing is dropped
        with pytest.raises(ValueError, match=r"\[dropout_ext\] 'p' must be in \[0, 1\]"):
            ops.dropout(x, p=1.5, training=training)
    assert ops.dropout(x, p=np.float32(0.0)) is x and ops.dropout(x, training=False) is x


def test_a_product_takes_its_onednn_scratchpad_from_the_pool_for_the_call():
    # Note [Matmul scratchpads]: a weight gradient's product (1024x512 by 512x784, its reduction split over two
    # threads) needs a scratchpad for the threads' partial sumsrt. It is the call's, from the pool, given back after
    # (one product at a time holds one), not kept by each cached primitive.
    msrt.set_context(mode=msrt.PYNATIVE_MODE, runtime_num_threads=2)
    if msrt.runtime.thread_info()["intra_op_threads"] < 2:
        pytest.skip("one thread: oneDNN splits no reduction")
    rng = np.random.default_rng(0)
    dy = msrt.Tensor(rng.standard_normal((512, 1024)).astype(np.float32))
    x = msrt.Tensor(rng.standard_normal((512, 784)).astype(np.float32))
    product = msrt.ops.MatMul(transpose_a=True)
    expected = dy.asnumpy().astype(np.float64).T @ x.asnumpy()
    np.testing.assert_allclose(product(dy, x).asnumpy(), expected, rtol=1e-4, atol=1e-3)
    msrt.runtime.synchronize()
    msrt.runtime.reset_peak_memory_stats()
    before = msrt.runtime.memory_allocated()
    out = product(dy, x)
    out.asnumpy()
    msrt.runtime.synchronize()
    out_bytes = 1024 * 784 * 4
    assert msrt.runtime.max_memory_allocated() - before >= out_bytes + (256 << 10)
    assert msrt.runtime.memory_allocated() - before == out_bytes


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiny_products_match_numpy_to_rounding(dtype):
    # Note [Tiny products]: up to 4096 multiply-adds run on the calling thread;
    # the same results as NumPy's product to the dtype's rounding, over
    # shapes, transposes, batches and 1-D operands.
    ms, ops = msrt, msrt.ops
    rng = np.random.default_rng(7)
    tol = 1e-6 if dtype is np.float32 else 1e-13
    for m, k, n in [(1, 1, 1), (4, 4, 4), (3, 5, 2), (16, 16, 16), (1, 64, 1), (2, 0, 3)]:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        want = a.astype(np.float64) @ b.astype(np.float64)
        got = ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy()
        assert got.dtype == dtype and got.shape == (m, n)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        got_t = ops.MatMul(transpose_a=True, transpose_b=True)(ms.Tensor(a.T.copy()), ms.Tensor(b.T.copy()))
        np.testing.assert_allclose(got_t.asnumpy(), want, rtol=tol, atol=tol)
    a = rng.standard_normal((3, 2, 4)).astype(dtype)
    b = rng.standard_normal((4, 5)).astype(dtype)
    np.testing.assert_allclose(ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy(), a @ b, rtol=tol, atol=tol)
    v = rng.standard_normal(4).astype(dtype)
    np.testing.assert_allclose(ops.matmul(ms.Tensor(v), ms.Tensor(b)).asnumpy(), v @ b, rtol=tol, atol=tol)


def _as(t, dtype):
    return _C.call("cast", [t], {"dtype": dtype})[0]


def _float32_bits(t):
    return _as(t, "float32").asnumpy().view(np.uint32)


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape,data_format", [((2, 3, 5, 5), "NCHW"), ((4, 70, 3, 2), "NCHW"), ((2, 5, 5, 3), "NHWC"),
                                               ((32, 8, 8, 16), "NHWC"), ((3, 4, 4, 70), "NHWC")])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_half_x_with_float32_parameters_is_the_float32_result_rounded(half, shape, data_format, training):
    """float16/bfloat16 x with float32 scale, bias and running statistics computes in float32 and rounds y once
    (OpProperties::mixed_precision): y is cast(batch_norm(cast(x, float32)), half) bit for bit, the statistics
    are float32 and the same."""
    rng = np.random.default_rng(31)
    c = shape[-1] if data_format == "NHWC" else shape[1]
    x = rand(rng, shape, np.float32, -2, 3) + np.float32(5)
    scale, bias = rand(rng, (c,), np.float32, 0.5, 1.5), rand(rng, (c,), np.float32)
    running = [rand(rng, (c,), np.float32), rand(rng, (c,), np.float32, 0.5, 2.0)]
    attrs = {"is_training": training, "epsilon": 1e-3, "momentum": 0.3, "data_format": data_format}
    x_half = _as(tensor(x), half)
    widened = [_as(x_half, "float32"), tensor(scale), tensor(bias)] + [tensor(r) for r in running]
    mixed = [x_half, tensor(scale), tensor(bias)] + [tensor(r) for r in running]
    want = _C.call("batch_norm", widened, attrs)
    got = _C.call("batch_norm", mixed, attrs)
    assert got[0].dtype_name == x_half.dtype_name and got[1].dtype_name == want[1].dtype_name == "float32"
    np.testing.assert_array_equal(_float32_bits(got[0]), _float32_bits(_as(want[0], half)))
    for g, w in zip(got[1:] + mixed[3:], want[1:] + widened[3:]):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape,data_format", [((2, 3, 5, 5), "NCHW"), ((2, 5, 5, 3), "NHWC"),
                                               ((32, 8, 8, 16), "NHWC"), ((3, 4, 4, 70), "NHWC")])
def test_batch_norm_grad_half_dy_and_x_with_float32_statistics_is_the_float32_result_rounded(
        half, shape, data_format):
    rng = np.random.default_rng(32)
    c = shape[-1] if data_format == "NHWC" else shape[1]
    x_half = _as(tensor(rand(rng, shape, np.float32, -2, 3)), half)
    dy_half = _as(tensor(rand(rng, shape, np.float32)), half)
    stats = [tensor(rand(rng, (c,), np.float32, 0.5, 1.5)), tensor(rand(rng, (c,), np.float32)),
             tensor(rand(rng, (c,), np.float32, 0.5, 2.0))]
    attrs = {"data_format": data_format}
    want = _C.call("batch_norm_grad", [_as(dy_half, "float32"), _as(x_half, "float32")] + stats, attrs)
    got = _C.call("batch_norm_grad", [dy_half, x_half] + stats, attrs)
    assert got[0].dtype_name == x_half.dtype_name and got[1].dtype_name == "float32"
    np.testing.assert_array_equal(_float32_bits(got[0]), _float32_bits(_as(want[0], half)))
    np.testing.assert_array_equal(got[1].asnumpy(), want[1].asnumpy())
    np.testing.assert_array_equal(got[2].asnumpy(), want[2].asnumpy())


def test_batch_norm_half_x_needs_scale_and_bias_of_one_dtype():
    x = _as(tensor(np.ones((2, 3, 2, 2), np.float32)), "bfloat16")
    vec32, vec16 = tensor(np.ones(3, np.float32)), _as(tensor(np.ones(3, np.float32)), "bfloat16")
    with pytest.raises(TypeError, match="'scale'"):
        _C.call("batch_norm", [x, vec32, vec16, vec32, vec32], {"is_training": True})
    with pytest.raises(TypeError, match="saved_mean"):
        _C.call("batch_norm_grad", [x, x, vec16, vec32, vec32], {})


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradients_of_half_x_with_float32_parameters_take_their_inputs_dtypes(training):
    """The gradient rule gives dx in x's dtype and dscale, dbias in float32 (inference mode computes them from
    float32 statistics, which would make dx float32 without the casts)."""
    rng = np.random.default_rng(33)
    x = _as(tensor(rand(rng, (4, 3, 2, 2), np.float32)), "bfloat16")
    params = [tensor(rand(rng, (3,), np.float32, 0.5, 1.5)), tensor(rand(rng, (3,), np.float32)),
              tensor(np.zeros(3, np.float32)), tensor(np.ones(3, np.float32))]
    for t in [x] + params[:2]:
        t.requires_grad = True
    tape = _C.GradTape()
    try:
        y = _C.call("batch_norm", [x] + params, {"is_training": training})[0]
        sens = _as(tensor(np.ones((4, 3, 2, 2), np.float32)), "bfloat16")
        grads = tape.gradient([y], [sens], [x] + params[:2])
    finally:
        tape.end()
    assert [g.dtype_name for g in grads] == ["bfloat16", "float32", "float32"]
    # d(sum y)/d bias is the count of elements per channel.
    np.testing.assert_array_equal(grads[2].asnumpy(), np.full(3, 16, np.float32))


def test_tiny_float32_products_are_float64_sums_in_order():
    # Note [Tiny products]: each output is the float64 sum of its k terms,
    # taken in order, rounded once to float32 (a float32 product is exact in
    # float64, so a fused multiply-add gives the same sum): bit for bit, over
    # narrow and wide rows, transposed or not, with a bias (dense).
    ms, ops = msrt, msrt.ops
    rng = np.random.default_rng(11)
    for m, k, n in [(1, 1, 1), (4, 4, 4), (3, 7, 5), (2, 30, 64), (2, 20, 65), (5, 3, 100)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        sums = np.zeros((m, n), np.float64)
        for q in range(k):
            sums += a[:, q:q + 1].astype(np.float64) * b[q:q + 1, :].astype(np.float64)
        want = sums.astype(np.float32)
        np.testing.assert_array_equal(ops.matmul(ms.Tensor(a), ms.Tensor(b)).asnumpy(), want)
        got_t = ops.MatMul(transpose_a=True, transpose_b=True)(ms.Tensor(a.T.copy()), ms.Tensor(b.T.copy()))
        np.testing.assert_array_equal(got_t.asnumpy(), want)
        with_bias = bias.astype(np.float64)[None, :]
        for q in range(k):
            with_bias = with_bias + a[:, q:q + 1].astype(np.float64) * b[q:q + 1, :].astype(np.float64)
        got_dense = ops.dense(ms.Tensor(a), ms.Tensor(b.T.copy()), ms.Tensor(bias))
        np.testing.assert_array_equal(got_dense.asnumpy(), with_bias.astype(np.float32))
