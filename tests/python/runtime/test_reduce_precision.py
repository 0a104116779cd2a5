"""enable_reduce_precision: ops whose kernels lack a dtype (float16 pooling
on CPU) compute in float32 and convert back when it is True, and raise
TypeError naming the op and dtype when it is False, in both modes. float16
convolution and matmul have kernels of their own (Note [float16 products])."""
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import ops
from msrt.ops import _op


def _conv_inputs(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    return x, w, ms.Tensor(x).astype(dtype), ms.Tensor(w).astype(dtype)


def _conv(x, w):
    return _op("conv2d", x, w, stride=[1, 1], pad_mode="valid")


def test_float16_conv_computes_through_float32():
    x, w, xh, wh = _conv_inputs(ms.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = _conv(xh, wh)
    assert y.dtype == ms.float16
    # The float32 result of the float16-rounded inputs, rounded to float16.
    ref = _conv(ms.Tensor(x.astype(np.float16).astype(np.float32)),
                ms.Tensor(w.astype(np.float16).astype(np.float32))).asnumpy()
    np.testing.assert_allclose(y.asnumpy().astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def _pool(x):
    return _op("avg_pool2d", x, kernel_size=[2, 2], strides=[2, 2], pad_mode="valid")


def test_false_raises_type_error_naming_op_and_dtype():
    x, _, xh, wh = _conv_inputs(ms.float16)
    ms.set_context(enable_reduce_precision=False)
    with pytest.raises(TypeError, match=r"avg_pool2d.*Float16.*enable_reduce_precision is False"):
        _pool(xh).asnumpy()
    # Ops whose kernels take the dtype are not affected.
    assert (xh + xh).dtype == ms.float16
    assert _conv(xh, wh).dtype == ms.float16
    ms.set_context(enable_reduce_precision=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _pool(xh).asnumpy().astype(np.float32)
    want = x.astype(np.float16).astype(np.float32).reshape(2, 3, 4, 2, 4, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_graph_mode_selects_the_converting_kernel_or_raises():
    _, _, xh, wh = _conv_inputs(ms.float16)

    @ms.jit
    def f(x, w):
        return ops.relu(_pool(_conv(x, w)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = ops.relu(_pool(_conv(xh, wh))).asnumpy()
        got = f(xh, wh)
    assert got.dtype == ms.float16
    np.testing.assert_array_equal(got.asnumpy(), expected)
    ms.set_context(enable_reduce_precision=False)  # a compile-affecting key: the graph is rebuilt
    with pytest.raises(TypeError, match=r"avg_pool2d.*Float16"):
        f(xh, wh)


def test_batch_norm_half_input_updates_float32_running_stats():
    x = np.random.default_rng(1).standard_normal((4, 3, 5, 5)).astype(np.float32) * 2 + 1
    bn = ms.nn.BatchNorm2d(3, momentum=0.5).set_train()
    ref = ms.nn.BatchNorm2d(3, momentum=0.5).set_train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = _op("batch_norm", ms.Tensor(x).astype(ms.float16), bn.gamma.astype(ms.float16),
                bn.beta.astype(ms.float16), bn.moving_mean, bn.moving_variance, is_training=True,
                epsilon=1e-5, momentum=0.5)[0]
    y_ref = ref(ms.Tensor(x.astype(np.float16).astype(np.float32)))
    assert y.dtype == ms.float16 and bn.moving_mean.dtype == ms.float32
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), ref.moving_mean.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(y.asnumpy().astype(np.float32), y_ref.asnumpy(), atol=5e-3)


def test_warning_is_issued_once_per_op_and_dtype(python_subprocess):
    proc = python_subprocess("""
        import numpy as np
        from msrt.ops import _op
        a = ms.Tensor(np.ones((1, 1, 4, 4), np.float16))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):
                _op("avg_pool2d", a, kernel_size=[2, 2], strides=[2, 2], pad_mode="valid").asnumpy()
        print("RESULT=" + json.dumps([str(x.message) for x in w]))
    """)
    assert len(proc.result) == 1, proc.result
    assert "avg_pool2d" in proc.result[0] and "Float16" in proc.result[0] and "Float32" in proc.result[0]
