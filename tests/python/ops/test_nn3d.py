"""Parity tests of the 3-D convolution and pooling ops against PyTorch
(oneDNN for float32, reference loops for float64): forward, the backward ops
and the gradients of x and weight, finite-difference checks of the gradient
rules (float64), the functional and Primitive forms in PYNATIVE and GRAPH
mode, and MindSpore's errors for bad arguments."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, ops

from .harness import _C, check_grad, covers, gradients, run_op

torch = pytest.importorskip("torch")
F = torch.nn.functional

covers("conv3d", "conv3d_backprop_input", "conv3d_backprop_filter", "conv3d_ext", "conv3d_transpose",
       "max_pool3d", "max_pool3d_grad", "avg_pool3d", "avg_pool3d_grad", "max_pool3d_ext", "avg_pool3d_ext")

FLOATS = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-4, atol=2e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}
RNG = np.random.default_rng(5)


def rand(shape, dtype=np.float64):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(dtype)


def pads(sizes, kernel, stride, dilation, pad_mode, pad):
    """(front, back, top, bottom, left, right) padding, MindSpore's rules (Note [Same padding])."""
    if pad_mode == "valid":
        return (0,) * 6
    if pad_mode == "pad":
        return tuple(pad)
    out = []
    for size, k, s, d in zip(sizes, kernel, stride, dilation):
        need = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
        out += [need // 2, need - need // 2]
    return tuple(out)


def torch_conv3d(x, w, stride, pad_mode, pad, dilation, group, requires_grad=False):
    p = pads(x.shape[2:], w.shape[2:], stride, dilation, pad_mode, pad)
    xt = torch.tensor(x, requires_grad=requires_grad)
    wt = torch.tensor(w, requires_grad=requires_grad)
    # F.pad lists the last axis first.
    y = F.conv3d(F.pad(xt, (p[4], p[5], p[2], p[3], p[0], p[1])), wt, stride=stride, dilation=dilation, groups=group)
    return xt, wt, y


# x shape, weight shape, attrs
CONVS = [
    ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), dict(stride=[1, 1, 1], pad_mode="same", pad=[0] * 6, dilation=[1, 1, 1])),
    ((1, 4, 6, 5, 8), (6, 2, 2, 3, 2), dict(stride=[2, 1, 3], pad_mode="valid", pad=[0] * 6, dilation=[1, 1, 1],
                                            group=2)),
    ((2, 2, 7, 6, 5), (3, 2, 3, 2, 2), dict(stride=[1, 2, 1], pad_mode="pad", pad=[1, 0, 2, 1, 0, 1],
                                            dilation=[2, 1, 2])),
    ((1, 6, 5, 5, 5), (6, 1, 3, 3, 3), dict(stride=[2, 2, 2], pad_mode="same", pad=[0] * 6, dilation=[1, 2, 1],
                                            group=6)),
    ((3, 1, 4, 4, 4), (2, 1, 1, 1, 1), dict(stride=[1, 1, 1], pad_mode="pad", pad=[1, 1, 1, 1, 1, 1],
                                            dilation=[1, 1, 1])),
]


def conv_args(attrs):
    return (attrs["stride"], attrs["pad_mode"], attrs["pad"], attrs["dilation"], attrs.get("group", 1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape, w_shape, attrs", CONVS)
def test_conv3d_family_matches_torch(dtype, x_shape, w_shape, attrs):
    x, w = rand(x_shape, dtype), rand(w_shape, dtype)
    xt, wt, yt = torch_conv3d(x, w, *conv_args(attrs), requires_grad=True)
    (y,) = run_op("conv3d", [x, w], attrs)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL[dtype])
    dy = rand(y.shape, dtype)
    yt.backward(torch.tensor(dy))
    (dx,) = run_op("conv3d_backprop_input", [dy, w], dict(attrs, input_shape=list(x_shape)))
    np.testing.assert_allclose(dx, xt.grad.numpy(), **TOL[dtype])
    (dw,) = run_op("conv3d_backprop_filter", [dy, x], dict(attrs, filter_shape=list(w_shape)))
    np.testing.assert_allclose(dw, wt.grad.numpy(), **TOL[dtype])
    # The same through conv3d's gradient rule.
    gx, gw = gradients("conv3d", [x, w], attrs, wrt=(0, 1), sens=dy)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **TOL[dtype])
    np.testing.assert_allclose(gw, wt.grad.numpy(), **TOL[dtype])


def test_conv3d_kernels_are_onednn_then_reference():
    for name in ("max_pool3d", "avg_pool3d", "avg_pool3d_grad"):
        assert _C.op_info(name)["kernels"] == ["CPU:onednn", "CPU:reference"], name
    for name in ("conv3d", "conv3d_backprop_input"):  # float16 first: Note [float16 convolutions] in onednn_conv.cc
        assert _C.op_info(name)["kernels"] == ["CPU:onednn float32 slices", "CPU:onednn", "CPU:reference"], name
    # half types first: Note [bfloat16 backward weights] in onednn_conv.cc
    assert _C.op_info("conv3d_backprop_filter")["kernels"] == ["CPU:onednn float32 slices", "CPU:onednn",
                                                               "CPU:reference"]
    assert _C.op_info("max_pool3d_grad")["kernels"] == ["CPU:reference"]


def test_conv3d_gradient_rules_by_finite_differences():
    x, w = rand((1, 2, 3, 4, 3)), rand((2, 1, 2, 2, 2))
    attrs = dict(stride=[1, 2, 1], pad_mode="pad", pad=[1, 0, 0, 1, 1, 1], dilation=[1, 1, 2], group=2)
    check_grad("conv3d", [x, w], attrs, wrt=(0, 1))
    dy = rand(run_op("conv3d", [x, w], attrs)[0].shape)
    check_grad("conv3d_backprop_input", [dy, w], dict(attrs, input_shape=list(x.shape)), wrt=(0, 1))
    check_grad("conv3d_backprop_filter", [dy, x], dict(attrs, filter_shape=list(w.shape)), wrt=(0, 1))


# --- pooling --------------------------------------------------------------------------------------------
# x shape, kernel, strides, pad_mode, pad, ceil_mode
POOLS = [
    ((2, 3, 6, 7, 8), [2, 2, 2], [2, 2, 2], "valid", [0] * 6, False),
    ((1, 2, 5, 6, 7), [3, 2, 3], [1, 2, 2], "same", [0] * 6, False),
    ((2, 2, 7, 5, 6), [3, 3, 2], [2, 2, 1], "pad", [1, 1, 1, 0, 0, 1], False),
    ((1, 3, 6, 7, 5), [3, 3, 3], [2, 2, 2], "pad", [1, 1, 1, 1, 1, 1], True),
    ((1, 1, 5, 6, 8), [2, 3, 2], [2, 2, 3], "pad", [1, 1, 1, 1, 0, 0], True),
]


def torch_pool(kind, x, kernel, strides, pad_mode, pad, ceil, count_include_pad, requires_grad=False):
    """PyTorch's pooling; 'same' and uneven padding pad explicitly (with -inf for max)."""
    xt = torch.tensor(x, requires_grad=requires_grad)
    p = pads(x.shape[2:], kernel, strides, (1, 1, 1), pad_mode, pad)
    if p[0::2] == p[1::2]:  # even: PyTorch pads itself
        if kind == "max":
            return xt, F.max_pool3d(xt, kernel, strides, p[0::2], ceil_mode=ceil)
        return xt, F.avg_pool3d(xt, kernel, strides, p[0::2], ceil_mode=ceil, count_include_pad=count_include_pad)
    assert not ceil
    if kind == "max":
        padded = F.pad(xt, (p[4], p[5], p[2], p[3], p[0], p[1]), value=-np.inf)
        return xt, F.max_pool3d(padded, kernel, strides)
    padded = F.pad(xt, (p[4], p[5], p[2], p[3], p[0], p[1]))
    total = F.avg_pool3d(padded, kernel, strides) * float(np.prod(kernel))
    if count_include_pad:
        return xt, total / float(np.prod(kernel))
    ones = F.pad(torch.ones_like(xt), (p[4], p[5], p[2], p[3], p[0], p[1]))
    return xt, total / (F.avg_pool3d(ones, kernel, strides) * float(np.prod(kernel)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape, kernel, strides, pad_mode, pad, ceil", POOLS)
@pytest.mark.parametrize("kind, count_include_pad", [("max", None), ("avg", True), ("avg", False)])
def test_pool3d_family_matches_torch(dtype, x_shape, kernel, strides, pad_mode, pad, ceil, kind, count_include_pad):
    x = rand(x_shape, dtype)
    attrs = dict(kernel_size=kernel, strides=strides, pad_mode=pad_mode, pad=pad, ceil_mode=ceil)
    if kind == "avg":
        attrs["count_include_pad"] = count_include_pad
    xt, yt = torch_pool(kind, x, kernel, strides, pad_mode, pad, ceil, count_include_pad, requires_grad=True)
    (y,) = run_op(f"{kind}_pool3d", [x], attrs)
    np.testing.assert_allclose(y, yt.detach().numpy(), **TOL[dtype])
    dy = rand(y.shape, dtype)
    yt.backward(torch.tensor(dy))
    inputs = [x, y, dy] if kind == "max" else [x, dy]
    (dx,) = run_op(f"{kind}_pool3d_grad", inputs, attrs)
    np.testing.assert_allclose(dx, xt.grad.numpy(), **TOL[dtype])
    (gx,) = gradients(f"{kind}_pool3d", [x], attrs, sens=dy)
    np.testing.assert_allclose(gx, xt.grad.numpy(), **TOL[dtype])


def test_avg_pool3d_grad_rule_by_finite_differences():
    x = rand((1, 2, 4, 5, 3))
    for include in (True, False):
        attrs = dict(kernel_size=[2, 3, 2], strides=[2, 2, 1], pad_mode="pad", pad=[1, 1, 1, 0, 0, 1], ceil_mode=True,
                     count_include_pad=include)
        check_grad("avg_pool3d", [x], attrs)
        dy = rand(run_op("avg_pool3d", [x], attrs)[0].shape)
        check_grad("avg_pool3d_grad", [x, dy], attrs, wrt=(1,))


# --- the Python forms, in both modes --------------------------------------------------------------------
@pytest.fixture(params=[ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
def mode(request):
    ms.set_context(mode=request.param)
    yield request.param
    ms.set_context(mode=ms.PYNATIVE_MODE)


def run_in_mode(mode, fn, *args):
    """fn(*args) eagerly, or compiled (ms.jit) in GRAPH_MODE; with the gradients of the sum of its output."""
    def objective(*xs):
        return fn(*xs).sum()

    call = ms.jit(fn) if mode == ms.GRAPH_MODE else fn
    grad = ms.grad(ms.jit(objective) if mode == ms.GRAPH_MODE else objective, grad_position=tuple(range(len(args))))
    tensors = [Tensor(a) for a in args]
    return call(*tensors).asnumpy(), [g.asnumpy() for g in grad(*tensors)]


def test_functional_conv3d(mode):
    x, w, b = rand((2, 4, 5, 6, 5), np.float32), rand((6, 2, 3, 2, 3), np.float32), rand((6,), np.float32)
    y, (gx, gw, gb) = run_in_mode(
        mode, lambda x, w, b: ops.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1, 1, 2, 0), dilation=(2, 1, 1),
                                         groups=2), x, w, b)
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    yt = F.conv3d(F.pad(xt, (2, 0, 1, 1, 1, 0)), wt, bt, stride=(1, 2, 1), dilation=(2, 1, 1), groups=2)
    yt.sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-4, atol=1e-4)
    for got, want in ((gx, xt), (gw, wt), (gb, bt)):
        np.testing.assert_allclose(got, want.grad.numpy(), rtol=1e-4, atol=1e-4)
    # padding per axis, and pad_mode 'same'
    y, _ = run_in_mode(mode, lambda x, w: ops.conv3d(x, w, padding=(1, 0, 1), groups=2), x, w)
    np.testing.assert_allclose(y, F.conv3d(torch.tensor(x), torch.tensor(w), padding=(1, 0, 1), groups=2).numpy(),
                               rtol=1e-4, atol=1e-4)
    y, _ = run_in_mode(mode, lambda x, w: ops.conv3d(x, w, pad_mode="same", groups=2), x, w)
    _, _, want = torch_conv3d(x, w, (1, 1, 1), "same", None, (1, 1, 1), 2)
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-4, atol=1e-4)


def test_conv3d_primitive(mode):
    x, w = rand((1, 3, 6, 5, 4), np.float32), rand((4, 3, 2, 2, 2), np.float32)
    conv = ops.Conv3D(out_channel=4, kernel_size=2, pad_mode="pad", pad=(1, 0, 0, 1, 1, 1), stride=(1, 1, 2, 1, 1))
    y, (gx, gw) = run_in_mode(mode, conv, x, w)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yt = F.conv3d(F.pad(xt, (1, 1, 0, 1, 1, 0)), wt, stride=(2, 1, 1))
    yt.sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, wt.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert ops.Conv3D in vars(ms.ops.operations.nn_ops).values()


def test_conv3d_transpose_primitive(mode):
    x, w = rand((2, 4, 3, 4, 3), np.float32), rand((4, 3, 3, 2, 3), np.float32)
    deconv = ops.Conv3DTranspose(4, 6, (3, 2, 3), stride=(2, 1, 2), pad_mode="pad", pad=1, output_padding=(1, 0, 0),
                                 group=2)
    y, (gx, gw) = run_in_mode(mode, deconv, x, w)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    yt = F.conv_transpose3d(xt, wt, stride=(2, 1, 2), padding=1, output_padding=(1, 0, 0), groups=2)
    yt.sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, wt.grad.numpy(), rtol=1e-4, atol=1e-4)
    # 'valid' is PyTorch's padding 0; 'same' gives in * stride
    valid = ops.Conv3DTranspose(4, 3, 3, stride=2)(Tensor(x), Tensor(w[:, :, :, :1, :]))
    want = F.conv_transpose3d(torch.tensor(x), torch.tensor(w[:, :, :, :1, :]), stride=2)
    np.testing.assert_allclose(valid.asnumpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    assert ops.Conv3DTranspose(4, 3, 3, stride=2, pad_mode="same")(Tensor(x), Tensor(w)).shape == (2, 3, 6, 8, 6)


def test_conv3d_transpose_errors():
    with pytest.raises(ValueError, match="output_padding"):
        ops.Conv3DTranspose(4, 6, 3, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="output_padding"):
        ops.Conv3DTranspose(4, 6, 3, output_padding=(1, 1))
    with pytest.raises(ValueError, match="'pad' must be zero"):
        ops.Conv3DTranspose(4, 6, 3, pad=1)
    with pytest.raises(ValueError, match="5-D"):
        ops.Conv3DTranspose(4, 6, 3)(Tensor(rand((1, 4, 3, 3), np.float32)), Tensor(rand((4, 6, 3, 3, 3), np.float32)))


def test_functional_and_primitive_pools(mode):
    x = rand((2, 3, 7, 6, 5), np.float32)
    cases = [
        (lambda x: ops.max_pool3d(x, 3, 2, 1, ceil_mode=True),
         lambda t: F.max_pool3d(t, 3, 2, 1, ceil_mode=True)),
        (lambda x: ops.max_pool3d(x, (2, 3, 2)),
         lambda t: F.max_pool3d(t, (2, 3, 2))),
        (lambda x: ops.avg_pool3d(x, 3, 2, (1, 0, 1), ceil_mode=True, count_include_pad=False),
         lambda t: F.avg_pool3d(t, 3, 2, (1, 0, 1), ceil_mode=True, count_include_pad=False)),
        (lambda x: ops.avg_pool3d(x, (2, 2, 3), 1, 1),
         lambda t: F.avg_pool3d(t, (2, 2, 3), 1, 1)),
        (ops.MaxPool3D(kernel_size=2, strides=(1, 2, 1), pad_mode="pad", pad_list=1),
         lambda t: F.max_pool3d(t, 2, (1, 2, 1), 1)),
        (ops.AvgPool3D(kernel_size=3, strides=2, pad_mode="pad", pad=1, ceil_mode=True, count_include_pad=True),
         lambda t: F.avg_pool3d(t, 3, 2, 1, ceil_mode=True, count_include_pad=True)),
        (ops.MaxPool3D(kernel_size=(1, 3, 3), strides=2, pad_mode="SAME"), None),
    ]
    for fn, reference in cases:
        y, (gx,) = run_in_mode(mode, fn, x)
        if reference is None:  # 'same': the same as explicit padding (0, 0, 0, 1, 1, 1), with -inf
            xt = torch.tensor(x, requires_grad=True)
            yt = F.max_pool3d(F.pad(xt, (1, 1, 0, 1, 0, 0), value=-np.inf), (1, 3, 3), 2)
        else:
            xt = torch.tensor(x, requires_grad=True)
            yt = reference(xt)
        yt.sum().backward()
        np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-5, atol=1e-6)


# --- errors ---------------------------------------------------------------------------------------------
def test_conv3d_errors():
    x, w = Tensor(rand((1, 2, 4, 4, 4), np.float32)), Tensor(rand((3, 2, 2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="5-D"):
        ops.conv3d(Tensor(rand((2, 4, 4, 4), np.float32)), w)
    with pytest.raises(ValueError, match="weight must be a 5-D"):
        ops.conv3d(x, Tensor(rand((3, 2, 2, 2), np.float32)))
    with pytest.raises(ValueError, match="pad_mode"):
        ops.conv3d(x, w, pad_mode="full")
    with pytest.raises(ValueError, match="pad_mode"):
        ops.Conv3D(3, 2, pad_mode="reflect")
    with pytest.raises(ValueError, match="'pad' must be zero"):
        ops.Conv3D(3, 2, pad_mode="same", pad=1)
    with pytest.raises(ValueError, match="stride"):
        ops.conv3d(x, w, stride=(1, 2))
    with pytest.raises(ValueError, match="stride"):
        ops.Conv3D(3, 2, stride=(2, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="stride"):
        ops.conv3d(x, w, stride=0)
    with pytest.raises(TypeError, match="stride"):
        ops.conv3d(x, w, stride=1.5)
    with pytest.raises(ValueError, match="padding"):
        ops.conv3d(x, w, padding=(1, 1, 1, 1))
    with pytest.raises(ValueError, match="padding"):
        ops.conv3d(x, w, padding=-1)
    with pytest.raises(ValueError, match="data_format"):
        ops.Conv3D(3, 2, data_format="NDHWC")
    with pytest.raises(ValueError, match="group"):
        ops.conv3d(x, w, groups=2)
    with pytest.raises(ValueError, match="smaller than the"):
        ops.conv3d(x, Tensor(rand((3, 2, 5, 2, 2), np.float32)))
    with pytest.raises(TypeError, match="Float32"):
        ops.conv3d(Tensor(np.ones((1, 2, 4, 4, 4), np.int32)), w)


def test_pool3d_errors():
    x = Tensor(rand((1, 2, 4, 4, 4), np.float32))
    with pytest.raises(ValueError, match="5-D"):
        ops.max_pool3d(Tensor(rand((2, 4, 4, 4), np.float32)), 2)
    with pytest.raises(ValueError, match="pad_mode"):
        ops.MaxPool3D(kernel_size=2, pad_mode="full")
    with pytest.raises(ValueError, match="'pad' must be zero"):
        ops.AvgPool3D(kernel_size=2, pad_mode="valid", pad=1)
    with pytest.raises(ValueError, match="smaller than the window"):
        ops.avg_pool3d(x, 2, padding=2)
    with pytest.raises(ValueError, match="kernel_size"):
        ops.max_pool3d(x, (2, 2))
    with pytest.raises(ValueError, match="smaller than the"):
        ops.max_pool3d(x, 5)
    with pytest.raises(TypeError, match="ceil_mode"):
        ops.avg_pool3d(x, 2, ceil_mode=1)
    with pytest.raises(NotImplementedError, match="dilation"):
        ops.max_pool3d(x, 2, dilation=2)
    with pytest.raises(NotImplementedError, match="return_indices"):
        ops.max_pool3d(x, 2, return_indices=True)
    with pytest.raises(NotImplementedError, match="divisor_override"):
        ops.avg_pool3d(x, 2, divisor_override=3)
    with pytest.raises(NotImplementedError, match="divisor_override"):
        ops.AvgPool3D(kernel_size=2, divisor_override=3)
