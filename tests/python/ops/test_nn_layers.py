"""Parity tests of the layer ops (layer_norm, group_norm, embedding, prelu,
mish, pixel_shuffle, adaptive pooling, interpolate, rnn_layer) against NumPy
references, finite-difference gradients in float64, and their errors."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, ops

from .harness import check_grad, covers, gradients, run_op

covers("layer_norm", "layer_norm_grad", "layer_norm_ext", "group_norm", "embedding", "prelu", "mish", "pixel_shuffle",
       "pixel_unshuffle", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
       "interpolate", "rnn_layer", "multi_head_attention")

RNG = np.random.default_rng(3)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def layer_norm_ref(x, gamma, beta, begin_norm, begin_params, eps):
    axes = tuple(range(begin_norm, x.ndim))
    x64 = x.astype(np.float64)
    mean = x64.mean(axes, keepdims=True)
    var = x64.var(axes, keepdims=True)
    return (x64 - mean) / np.sqrt(var + eps) * gamma + beta, mean, var


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12), (np.float16, 2e-3)])
@pytest.mark.parametrize("shape, begin_norm, begin_params",
                         [((4, 7), 1, 1), ((2, 3, 5), 1, 2), ((2, 3, 5), -1, -1), ((3, 2, 4), 2, 1), ((0, 4), 1, 1)])
def test_layer_norm(dtype, tol, shape, begin_norm, begin_params):
    x = rand(*shape, dtype=dtype)
    pshape = shape[begin_params % len(shape):]
    gamma, beta = rand(*pshape, dtype=dtype), rand(*pshape, dtype=dtype)
    attrs = {"begin_norm_axis": begin_norm, "begin_params_axis": begin_params, "epsilon": 1e-5}
    y, mean, var = run_op("layer_norm", [x, gamma, beta], attrs)
    want_y, want_mean, want_var = layer_norm_ref(x, gamma, beta, begin_norm % len(shape), None, 1e-5)
    assert y.dtype == dtype and mean.shape == want_mean.shape
    np.testing.assert_allclose(y, want_y, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(mean, want_mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(var, want_var, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("begin_norm, begin_params", [(1, 1), (2, 2), (1, 2), (2, 1)])
@pytest.mark.parametrize("output_index", [0, 1, 2])
def test_layer_norm_gradients(begin_norm, begin_params, output_index):
    x = rand(2, 3, 4)
    pshape = x.shape[begin_params:]
    attrs = {"begin_norm_axis": begin_norm, "begin_params_axis": begin_params, "epsilon": 1e-3}
    check_grad("layer_norm", [x, rand(*pshape), rand(*pshape)], attrs, wrt=(0, 1, 2) if output_index == 0 else (0,),
               output_index=output_index)


def layer_norm_grad_ref(dy, x, gamma, begin_norm, begin_params, eps):
    """(dx, dgamma, dbeta) by PyTorch's autograd through the formula (any begin_params_axis)."""
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tg = torch.tensor(gamma, dtype=torch.float64, requires_grad=True)
    tb = torch.zeros(gamma.shape, dtype=torch.float64, requires_grad=True)
    axes = tuple(range(begin_norm, x.ndim))
    mean = tx.mean(axes, keepdim=True)
    var = ((tx - mean) ** 2).mean(axes, keepdim=True)
    y = (tx - mean) / torch.sqrt(var + eps) * tg + tb
    y.backward(torch.tensor(dy, dtype=torch.float64))
    return tx.grad.numpy(), tg.grad.numpy(), tb.grad.numpy()


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-5), (np.float64, 1e-12), (np.float16, 4e-3)])
@pytest.mark.parametrize("shape, begin_norm, begin_params",
                         [((4, 7), 1, 1), ((2, 3, 5), 1, 2), ((2, 3, 5), -1, -1), ((3, 2, 4), 2, 1), ((0, 4), 1, 1),
                          ((300, 257), 1, 1), ((64, 3, 4), 1, 1), ((5, 0), 1, 1)])
def test_layer_norm_grad_matches_torch(dtype, tol, shape, begin_norm, begin_params):
    x = rand(*shape).astype(dtype)
    pshape = shape[begin_params % len(shape):]
    gamma, beta, dy = rand(*pshape).astype(dtype), rand(*pshape).astype(dtype), rand(*shape).astype(dtype)
    attrs = {"begin_norm_axis": begin_norm, "begin_params_axis": begin_params, "epsilon": 1e-5}
    _, mean, var = run_op("layer_norm", [x, gamma, beta], attrs)
    dx, dgamma, dbeta = run_op("layer_norm_grad", [dy, x, gamma, mean, var], attrs)
    assert dx.dtype == dtype and dx.shape == x.shape and dgamma.shape == dbeta.shape == gamma.shape
    want = layer_norm_grad_ref(dy, x, gamma, begin_norm % len(shape), begin_params % len(shape), 1e-5)
    scale = max(1.0, float(np.sqrt(np.prod(shape[:begin_norm % len(shape)] or [1]))))  # summed over rows
    for name, got, ref in zip(("dx", "dgamma", "dbeta"), (dx, dgamma, dbeta), want):
        np.testing.assert_allclose(got, ref, rtol=tol * 10, atol=tol * 10 * scale, err_msg=name)
    # layer_norm's gradient rule is this one kernel
    grads = gradients("layer_norm", [x, gamma, beta], attrs, wrt=(0, 1, 2), sens=dy)
    for got, ref in zip(grads, (dx, dgamma, dbeta)):
        np.testing.assert_array_equal(got, ref)


def test_layer_norm_grad_errors():
    x, g = rand(2, 3), rand(3)
    mean = var = rand(2, 1)
    with pytest.raises(ValueError, match=r"\[layer_norm_grad\] input 'dy' must have shape \(2, 3\)"):
        run_op("layer_norm_grad", [rand(3, 2), x, g, mean, var])
    with pytest.raises(ValueError, match=r"\[layer_norm_grad\] input 'variance' must have shape \(2, 1\)"):
        run_op("layer_norm_grad", [x, x, g, mean, rand(2)])
    with pytest.raises(ValueError, match=r"'gamma' must have the shape"):
        run_op("layer_norm_grad", [x, x, rand(2), mean, var])
    with pytest.raises(TypeError, match=r"\[layer_norm_grad\]"):
        run_op("layer_norm_grad", [x.astype(np.float32), x, g, mean, var])


def test_layer_norm_errors():
    x, g = rand(2, 3), rand(3)
    with pytest.raises(ValueError, match=r"\[layer_norm\].*'begin_norm_axis' must be in \[-2, 2\)"):
        run_op("layer_norm", [x, g, g], {"begin_norm_axis": 2})
    with pytest.raises(ValueError, match=r"'gamma' must have the shape.*expected \(3,\), but got \(2,\)"):
        run_op("layer_norm", [x, rand(2), g], {"begin_params_axis": -1})
    with pytest.raises(TypeError):
        run_op("layer_norm", [np.ones((2, 3), np.int32), g, g])
    with pytest.raises(ValueError, match="epsilon"):
        ops.LayerNorm(epsilon=0.0)
    with pytest.raises(ValueError, match="normalized_shape"):
        ops.layer_norm(Tensor(x), (2,))


def test_functional_layer_norm():
    x, w, b = rand(2, 3, 4), rand(3, 4), rand(3, 4)
    (y,) = run_op("layer_norm_ext", [x, w, b], {"normalized_shape": [3, 4], "epsilon": 1e-5})
    np.testing.assert_allclose(y, layer_norm_ref(x, w, b, 1, 1, 1e-5)[0], rtol=1e-12, atol=1e-12)
    check_grad("layer_norm_ext", [x, w, b], {"normalized_shape": [3, 4]}, wrt=(0, 1, 2))
    plain = ops.layer_norm(Tensor(x), (4,)).asnumpy()
    np.testing.assert_allclose(plain, layer_norm_ref(x, 1.0, 0.0, 2, 2, 1e-5)[0], rtol=1e-12, atol=1e-12)


def group_norm_ref(x, groups, w, b, eps):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + eps)).reshape(x.shape)
    along = (1, c) + (1,) * (x.ndim - 2)
    return y * w.reshape(along) + b.reshape(along)


@pytest.mark.parametrize("shape, groups", [((2, 6, 3, 3), 3), ((3, 4), 2), ((2, 4, 5), 4), ((1, 6, 2, 2, 2), 1)])
def test_group_norm(shape, groups):
    x, w, b = rand(*shape), rand(shape[1]), rand(shape[1])
    (y,) = run_op("group_norm", [x, w, b], {"num_groups": groups, "epsilon": 1e-5})
    np.testing.assert_allclose(y, group_norm_ref(x, groups, w, b, 1e-5), rtol=1e-10, atol=1e-10)
    check_grad("group_norm", [x, w, b], {"num_groups": groups, "epsilon": 1e-3}, wrt=(0, 1, 2))
    plain = ops.group_norm(Tensor(x), groups).asnumpy()
    np.testing.assert_allclose(plain, group_norm_ref(x, groups, np.ones(shape[1]), np.zeros(shape[1]), 1e-5),
                               rtol=1e-10, atol=1e-10)


def test_group_norm_errors():
    with pytest.raises(ValueError, match=r"channels \(6\) must be divisible by 'num_groups'"):
        ops.group_norm(Tensor(rand(2, 6, 2)), 4)
    with pytest.raises(ValueError, match="num_groups"):
        ops.group_norm(Tensor(rand(2, 6, 2)), 0)
    with pytest.raises(ValueError, match="rank 2 or more"):
        ops.group_norm(Tensor(rand(6)), 1)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_embedding(index_dtype):
    table = rand(7, 3)
    ids = np.array([[0, 6, 2], [2, 2, 1]], index_dtype)
    (y,) = run_op("embedding", [ids, table])
    np.testing.assert_array_equal(y, table[ids])
    check_grad("embedding", [ids, table], wrt=(1,))
    np.testing.assert_array_equal(ops.embedding(Tensor(ids), Tensor(table)).asnumpy(), table[ids])
    with pytest.raises(NotImplementedError):
        ops.embedding(Tensor(ids), Tensor(table), max_norm=1.0)
    with pytest.raises(TypeError, match="'input'"):
        run_op("embedding", [rand(2), table])
    with pytest.raises(IndexError):
        run_op("embedding", [np.array([7], index_dtype), table])


@pytest.mark.parametrize("shape, wshape", [((2, 3, 4), (3,)), ((5, 3), (1,)), ((4,), (1,)), ((2, 3, 2, 2), (3,))])
def test_prelu(shape, wshape):
    x, w = rand(*shape), RNG.uniform(0.1, 0.5, wshape)
    (y,) = run_op("prelu", [x, w])
    wb = w.reshape((1, -1) + (1,) * (len(shape) - 2)) if wshape[0] > 1 else w
    np.testing.assert_allclose(y, np.where(x > 0, x, wb * x), rtol=1e-12)
    check_grad("prelu", [x, w], wrt=(0, 1))
    with pytest.raises(ValueError, match="'weight' must be 1-D"):
        run_op("prelu", [x, rand(2, 2)])


def test_mish():
    x = np.concatenate([rand(20) * 3, [-100.0, 100.0, 0.0]])
    (y,) = run_op("mish", [x])
    np.testing.assert_allclose(y, x * np.tanh(np.logaddexp(0, x)), rtol=1e-12, atol=1e-12)
    check_grad("mish", [rand(3, 4)])
    (y32,) = run_op("mish", [x.astype(np.float32)])
    assert y32.dtype == np.float32 and np.isfinite(y32).all()


def test_pixel_shuffle():
    x = rand(2, 8, 3, 2)
    (y,) = run_op("pixel_shuffle", [x], {"upscale_factor": 2})
    want = x.reshape(2, 2, 2, 2, 3, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 4)
    np.testing.assert_array_equal(y, want)
    check_grad("pixel_shuffle", [rand(1, 4, 2, 2)], {"upscale_factor": 2})
    (unbatched,) = run_op("pixel_shuffle", [x[0]], {"upscale_factor": 2})
    np.testing.assert_array_equal(unbatched, want[0])


def test_pixel_unshuffle():
    x = rand(2, 2, 6, 4)
    (y,) = run_op("pixel_unshuffle", [x], {"downscale_factor": 2})
    want = x.reshape(2, 2, 3, 2, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(2, 8, 3, 2)
    np.testing.assert_array_equal(y, want)
    (back,) = run_op("pixel_shuffle", [y], {"upscale_factor": 2})
    np.testing.assert_array_equal(back, x)
    check_grad("pixel_unshuffle", [rand(1, 1, 4, 6)], {"downscale_factor": 2})
    (unbatched,) = run_op("pixel_unshuffle", [x[0]], {"downscale_factor": 2})
    np.testing.assert_array_equal(unbatched, want[0])
    np.testing.assert_array_equal(ops.pixel_unshuffle(Tensor(x), 2).asnumpy(), want)
    with pytest.raises(ValueError, match=r"\(\*, C, H \* r, W \* r\)"):
        run_op("pixel_unshuffle", [rand(1, 2, 5, 4)], {"downscale_factor": 2})
    with pytest.raises(ValueError, match="downscale_factor"):
        run_op("pixel_unshuffle", [x], {"downscale_factor": 0})


def adaptive_ref(x, sizes, reduce):
    out = x
    for axis, m in zip(range(x.ndim - len(sizes), x.ndim), sizes):
        n = out.shape[axis]
        cells = [reduce(np.take(out, range(i * n // m, -(-(i + 1) * n // m)), axis), axis) for i in range(m)]
        out = np.stack(cells, axis)
    return out


@pytest.mark.parametrize("name, sizes, reduce", [("adaptive_avg_pool1d", 3, np.mean),
                                                 ("adaptive_avg_pool1d", 7, np.mean),
                                                 ("adaptive_avg_pool2d", (3, 2), np.mean),
                                                 ("adaptive_avg_pool2d", (1, 1), np.mean),
                                                 ("adaptive_max_pool1d", 3, np.max),
                                                 ("adaptive_max_pool1d", 7, np.max),
                                                 ("adaptive_max_pool2d", (2, 4), np.max),
                                                 ("adaptive_max_pool2d", 3, np.max)])
def test_adaptive_pools(name, sizes, reduce):
    axes = 1 if name.endswith("1d") else 2
    x = rand(2, 3, 7) if axes == 1 else rand(2, 3, 7, 5)
    (y,) = run_op(name, [x], {"output_size": sizes})
    want = adaptive_ref(x, [sizes] * axes if isinstance(sizes, int) else sizes, reduce)
    np.testing.assert_allclose(y, want, rtol=1e-12)
    check_grad(name, [rand(*x.shape[1:])], {"output_size": sizes})


def test_adaptive_pool_errors():
    with pytest.raises(ValueError, match="'output_size' must be a positive int or 2"):
        run_op("adaptive_avg_pool2d", [rand(1, 4, 4)], {"output_size": (2, 2, 2)})
    with pytest.raises(ValueError, match="rank 3 or 4"):
        run_op("adaptive_max_pool2d", [rand(4, 4)], {"output_size": 2})
    with pytest.raises(ValueError, match="empty"):
        run_op("adaptive_avg_pool1d", [rand(1, 0, 4)], {"output_size": 2})
    with pytest.raises(NotImplementedError):
        ops.adaptive_max_pool2d(Tensor(rand(1, 4, 4)), 2, return_indices=True)
    np.testing.assert_allclose(ops.adaptive_avg_pool2d(Tensor(rand(1, 4, 4)), (None, 2)).shape, (1, 4, 2))


def interpolate_ref(x, sizes, scales, linear, align):
    out = x
    for i, m in enumerate(sizes):
        axis = 2 + i
        n = out.shape[axis]
        d = np.arange(m, dtype=np.float64)
        if not linear:
            out = np.take(out, np.minimum(np.floor(d * scales[i]).astype(int), n - 1), axis)
            continue
        if align:
            src = d * (n - 1) / (m - 1) if m > 1 else np.zeros(m)
        else:
            src = np.maximum((d + 0.5) * scales[i] - 0.5, 0)
        lo = np.minimum(np.floor(src).astype(int), n - 1)
        hi = np.minimum(lo + 1, n - 1)
        frac = (src - lo).reshape([-1 if k == axis else 1 for k in range(out.ndim)])
        out = np.take(out, lo, axis) * (1 - frac) + np.take(out, hi, axis) * frac
    return out


@pytest.mark.parametrize("shape, attrs, sizes, scales", [
    ((1, 2, 3, 4), {"size": [5, 7], "mode": "bilinear", "align_corners": True}, (5, 7), None),
    ((1, 2, 3, 4), {"size": [5, 7], "mode": "bilinear"}, (5, 7), (3 / 5, 4 / 7)),
    ((1, 2, 4, 4), {"scale_factor": 0.5, "mode": "bilinear"}, (2, 2), (2.0, 2.0)),
    ((2, 1, 5), {"size": 8, "mode": "linear", "align_corners": True}, (8,), None),
    ((2, 1, 5), {"scale_factor": 2.0, "mode": "nearest"}, (10,), (0.5,)),
    ((1, 1, 3, 2), {"size": [4, 5], "mode": "nearest"}, (4, 5), (3 / 4, 2 / 5)),
])
def test_interpolate(shape, attrs, sizes, scales):
    x = rand(*shape)
    (y,) = run_op("interpolate", [x], attrs)
    linear = attrs["mode"] != "nearest"
    want = interpolate_ref(x, sizes, scales or (None,) * len(sizes), linear, attrs.get("align_corners", False))
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    check_grad("interpolate", [x], attrs)


def test_interpolate_errors():
    x = rand(1, 1, 3, 3)
    with pytest.raises(ValueError, match="exactly one of"):
        run_op("interpolate", [x], {"size": [2, 2], "scale_factor": 2.0})
    with pytest.raises(ValueError, match="'size' must have one entry per spatial axis; expected 2"):
        run_op("interpolate", [x], {"size": [2, 2, 2]})
    with pytest.raises(TypeError, match="align_corners"):
        run_op("interpolate", [x], {"size": 2, "mode": "bilinear", "align_corners": 1})
    with pytest.raises(NotImplementedError, match="'bicubic'"):
        ops.interpolate(Tensor(x), size=(2, 2), mode="bicubic")
    with pytest.raises(ValueError, match="'scale_factor' must be positive"):
        run_op("interpolate", [x], {"scale_factor": -1.0})


def rnn_ref(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, reverse):
    def sig(v):
        return 1 / (1 + np.exp(-v))

    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    ys = [None] * x.shape[0]
    for t in steps:
        gx = x[t] @ w_ih.T + b_ih
        gh = h @ w_hh.T + b_hh
        if mode == "LSTM":
            i, f, g, o = np.split(gx + gh, 4, axis=1)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        elif mode == "GRU":
            xr, xz, xn = np.split(gx, 3, axis=1)
            hr, hz, hn = np.split(gh, 3, axis=1)
            r, z = sig(xr + hr), sig(xz + hz)
            n = np.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(gx + gh) if mode == "RNN_TANH" else np.maximum(gx + gh, 0)
        ys[t] = h
    return np.stack(ys), h, c if mode == "LSTM" else h


@pytest.mark.parametrize("mode", ["RNN_TANH", "RNN_RELU", "GRU", "LSTM"])
@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_layer(mode, reverse):
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    steps, batch, inp, hid = 4, 2, 3, 2
    inputs = [rand(steps, batch, inp), rand(batch, hid), rand(batch, hid) if mode == "LSTM" else None,
              rand(gates * hid, inp), rand(gates * hid, hid), rand(gates * hid), rand(gates * hid)]
    attrs = {"mode": mode, "reverse": reverse}
    outs = run_op("rnn_layer", inputs + [None], attrs)
    want = rnn_ref(mode, *[np.zeros(1) if a is None else a for a in inputs], reverse)
    for got, expected in zip(outs, want):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    wrt = (0, 1, 2, 3, 4, 5, 6) if mode == "LSTM" else (0, 1, 3, 4, 5, 6)
    check_grad("rnn_layer", inputs + [None], attrs, wrt=wrt)


@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_layer_with_sequence_lengths(reverse):
    steps, batch, hid = 5, 3, 2
    x, h0, c0 = rand(steps, batch, 3), rand(batch, hid), rand(batch, hid)
    w_ih, w_hh, b_ih, b_hh = rand(4 * hid, 3), rand(4 * hid, hid), rand(4 * hid), rand(4 * hid)
    lengths = np.array([5, 2, 3], np.int32)
    inputs = [x, h0, c0, w_ih, w_hh, b_ih, b_hh, lengths]
    y, h, c = run_op("rnn_layer", inputs, {"mode": "LSTM", "reverse": reverse})
    for n, length in enumerate(lengths):  # each sequence alone, cut at its length
        want_y, want_h, want_c = rnn_ref("LSTM", x[:length, n:n + 1], h0[n:n + 1], c0[n:n + 1], w_ih, w_hh, b_ih,
                                         b_hh, reverse)
        np.testing.assert_allclose(y[:length, n:n + 1], want_y, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(y[length:, n], 0)
        np.testing.assert_allclose(h[n:n + 1], want_h, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(c[n:n + 1], want_c, rtol=1e-12, atol=1e-12)
    check_grad("rnn_layer", inputs, {"mode": "LSTM", "reverse": reverse}, wrt=(0, 1, 2, 3))
    with pytest.raises(ValueError, match=r"'seq_length' must have shape \(N,\) = \(3,\)"):
        run_op("rnn_layer", inputs[:7] + [np.array([1, 2], np.int32)], {"mode": "LSTM"})
    with pytest.raises(TypeError, match="seq_length"):
        run_op("rnn_layer", inputs[:7] + [np.ones(3)], {"mode": "LSTM"})


def test_rnn_layer_gradients_without_bias_and_errors():
    x, h, w_ih, w_hh = rand(3, 2, 3), rand(2, 2), rand(6, 3), rand(6, 2)
    ts = [ms._C.TensorBase(a, None) if a is not None else None for a in [x, h, None, w_ih, w_hh, None, None, None]]
    y = ms._C.call("rnn_layer", ts, {"mode": "GRU"})[0].asnumpy()
    want = rnn_ref("GRU", x, h, None, w_ih, w_hh, np.zeros(6), np.zeros(6), False)[0]
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"'w_ih' must have shape \(6, 3\)"):
        ms._C.call("rnn_layer", [ts[0], ts[1], None, ms._C.TensorBase(rand(6, 4), None), ts[4], None, None,
                                 None],
                   {"mode": "GRU"})
    with pytest.raises(ValueError, match="c0"):
        ms._C.call("rnn_layer", [ts[0], ts[1], None, ts[3], ts[4], None, None, None], {"mode": "LSTM"})
    with pytest.raises(ValueError, match="mode"):
        ms._C.call("rnn_layer", ts, {"mode": "lstm"})


def attention_ref(q, k, v, wq, wk, wv, b, wo, bo, heads, mask=None, padding=None):
    tgt, batch, embed = q.shape
    src = k.shape[0]
    d = embed // heads
    bq, bk, bv = np.split(b, 3)

    def proj(x, w, bias):
        return (x @ w.T + bias).reshape(x.shape[0], batch * heads, d).transpose(1, 0, 2)

    qh, kh, vh = proj(q, wq, bq) / np.sqrt(d), proj(k, wk, bk), proj(v, wv, bv)
    scores = qh @ kh.transpose(0, 2, 1)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores) if mask.dtype == bool else scores + mask
    if padding is not None:
        scores = np.where(padding.reshape(batch, 1, 1, src), -np.inf,
                          scores.reshape(batch, heads, tgt, src)).reshape(scores.shape)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ vh).transpose(1, 0, 2).reshape(tgt * batch, embed) @ wo.T + bo
    return out.reshape(tgt, batch, embed), w.reshape(batch, heads, tgt, src)


@pytest.mark.parametrize("masked", [False, True])
def test_multi_head_attention(masked):
    tgt, src, batch, embed, heads = 3, 4, 2, 6, 3
    q, k, v = rand(tgt, batch, embed), rand(src, batch, 5), rand(src, batch, 4)
    wq, wk, wv = rand(embed, embed), rand(embed, 5), rand(embed, 4)
    b, wo, bo = rand(3 * embed), rand(embed, embed), rand(embed)
    mask = rand(tgt, src) if masked else None
    padding = np.array([[False, False, False, True], [False, True, False, False]]) if masked else None
    inputs = [q, k, v, wq, wk, wv, b, wo, bo, mask, padding]
    ts = [None if a is None else ms._C.TensorBase(np.ascontiguousarray(a), None) for a in inputs]
    for average in (True, False):
        attrs = {"num_heads": heads, "average_attn_weights": average}
        out, weights = [o.asnumpy() for o in ms._C.call("multi_head_attention", ts, attrs)]
        want_out, want_w = attention_ref(q, k, v, wq, wk, wv, b, wo, bo, heads, mask, padding)
        np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(weights, want_w.mean(1) if average else want_w, rtol=1e-12, atol=1e-12)
    if not masked:
        check_grad("multi_head_attention", inputs, {"num_heads": heads}, wrt=tuple(range(9)))
        check_grad("multi_head_attention", inputs, {"num_heads": heads, "average_attn_weights": False}, wrt=(0, 3),
                   output_index=1)


def test_multi_head_attention_errors():
    q = ms._C.TensorBase(rand(3, 2, 6), None)
    w = ms._C.TensorBase(rand(6, 6), None)
    with pytest.raises(ValueError, match=r"embedding size \(6\) must be divisible by 'num_heads'"):
        ms._C.call("multi_head_attention", [q, q, q, w, w, w, None, w, None, None, None], {"num_heads": 4})
    with pytest.raises(ValueError, match="'k_weight' must have shape"):
        ms._C.call("multi_head_attention", [q, q, q, w, ms._C.TensorBase(rand(6, 5), None), w, None, w, None, None,
                                            None], {"num_heads": 2})


def test_huge_sizes_are_refused_before_any_work():
    x = rand(1, 2, 4, 4)
    with pytest.raises(ValueError, match=r"C \* r\^2"):
        run_op("pixel_shuffle", [x], {"upscale_factor": 2**40})
    with pytest.raises(ValueError, match="must not exceed the input's size"):
        run_op("adaptive_avg_pool2d", [x], {"output_size": [2, 2**40]})
    with pytest.raises(ValueError):
        run_op("interpolate", [x], {"size": [2**40, 2**40]})
    with pytest.raises(ValueError, match="beyond int64"):
        run_op("interpolate", [x], {"scale_factor": 1e300})
    with pytest.raises(TypeError, match="'size' must be None, an int or a tuple of ints"):
        run_op("interpolate", [x], {"size": [2.5, 2]})
