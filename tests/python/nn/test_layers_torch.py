"""Layers against PyTorch: weights copied across, forward outputs and the
gradients of a weighted sum of the outputs with respect to the input and every
parameter, in PYNATIVE and, for some, GRAPH_MODE; and MindSpore's errors for
bad arguments."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn

torch = pytest.importorskip("torch")
tnn = torch.nn

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _seed():
    ms.set_seed(0)
    torch.manual_seed(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def copy_params(net, pairs):
    """Copies PyTorch tensors into msrt parameters: pairs of (msrt Parameter, torch tensor)."""
    for param, value in pairs:
        param.set_data(Tensor(value.detach().numpy().reshape(param.shape).astype(np.float32)))


def msrt_grads(net, inputs, sens, mode=ms.PYNATIVE_MODE, grad_inputs=(0,)):
    """Outputs of net(*inputs) and the gradients of sum(sens[i] * output[i]) w.r.t. the inputs
    (positions grad_inputs) and net's trainable parameters."""
    ms.set_context(mode=mode)
    params = net.trainable_params()

    def objective(*xs):
        outs = net(*xs)
        outs = _flatten(outs)
        total = None
        for out, s in zip(outs, sens):
            term = (out * Tensor(s)).sum()
            total = term if total is None else total + term
        return total

    tensors = [Tensor(x) for x in inputs]
    outs = [o.asnumpy() for o in _flatten(net(*tensors))]
    position = grad_inputs[0] if len(grad_inputs) == 1 else grad_inputs
    gx, gw = ms.grad(objective, grad_position=position, weights=params)(*tensors)
    gx = [gx] if len(grad_inputs) == 1 else list(gx)
    return outs, [g.asnumpy() for g in gx], {p.name: g.asnumpy() for p, g in zip(params, gw)}


def torch_grads(module, inputs, sens, params):
    """PyTorch's outputs and gradients for the same objective; params: name -> torch parameter."""
    xs = [torch.tensor(x, requires_grad=True) for x in inputs]
    outs = _flatten(module(*xs))
    total = sum((o * torch.tensor(s)).sum() for o, s in zip(outs, sens))
    total.backward()
    return ([o.detach().numpy() for o in outs], [x.grad.numpy() for x in xs],
            {name: p.grad.numpy() for name, p in params.items()})


def _flatten(outs):
    if isinstance(outs, (tuple, list)):
        flat = []
        for o in outs:
            flat.extend(_flatten(o))
        return flat
    return [outs]


def compare(net, module, inputs, params, mode=ms.PYNATIVE_MODE, rtol=1e-4, atol=1e-5, grad_inputs=(0,)):
    """params: msrt parameter name -> (torch parameter, reshape for msrt's layout or None)."""
    with torch.no_grad():
        copy_params(net, [(dict((p.name, p) for p in net.get_parameters())[name], tp) for name, tp in params.items()])
    want_outs = _flatten(module(*[torch.tensor(x) for x in inputs]))
    sens = [RNG.uniform(0.5, 1.5, size=o.shape).astype(np.float32) for o in want_outs]
    outs, gx, gw = msrt_grads(net, inputs, sens, mode, grad_inputs)
    t_outs, t_gx, t_gw = torch_grads(module, inputs, sens, params)
    assert len(outs) == len(t_outs)
    for o, t in zip(outs, t_outs):
        np.testing.assert_allclose(o, t, rtol=rtol, atol=atol)
    for i, g in zip(grad_inputs, gx):
        np.testing.assert_allclose(g, t_gx[i], rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")
    assert set(gw) == set(params), (sorted(gw), sorted(params))
    for name, g in gw.items():
        np.testing.assert_allclose(g, t_gw[name].reshape(g.shape), rtol=rtol, atol=atol, err_msg=f"gradient of {name}")


MODES = [ms.PYNATIVE_MODE, ms.GRAPH_MODE]


# --- Normalization -------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_layer_norm(mode):
    net = nn.LayerNorm((6,), epsilon=1e-5)
    module = tnn.LayerNorm(6, eps=1e-5)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    compare(net, module, [rand(3, 4, 6)], {"gamma": module.weight, "beta": module.bias}, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape, normalized", [((8, 64), (64,)), ((2, 5, 3, 40), (3, 40)), ((4, 1000), (1000,)),
                                               ((7, 3), (3,)), ((3, 2, 24), (2, 24))])
def test_layer_norm_shapes_against_torch(mode, shape, normalized):
    """The layer_norm kernel and its one-kernel gradient (layer_norm_grad) against PyTorch, forward and
    the gradients of x, gamma and beta."""
    axis = len(shape) - len(normalized)
    net = nn.LayerNorm(normalized, begin_norm_axis=axis, begin_params_axis=axis, epsilon=1e-5)
    module = tnn.LayerNorm(normalized, eps=1e-5)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    x = rand(*shape) * 3 + 1
    compare(net, module, [x], {"gamma": module.weight, "beta": module.bias}, mode, rtol=2e-4, atol=2e-5)


def test_layer_norm_over_two_axes_and_defaults():
    net = nn.LayerNorm((4, 6), begin_norm_axis=1, begin_params_axis=1)
    assert net.epsilon == 1e-7 and net.gamma.name == "gamma" and net.beta.name == "beta"
    np.testing.assert_array_equal(net.gamma.asnumpy(), np.ones((4, 6)))
    module = tnn.LayerNorm((4, 6), eps=1e-7)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
    compare(net, module, [rand(3, 4, 6)], {"gamma": module.weight, "beta": module.bias})


def test_layer_norm_primitive_outputs_mean_and_variance():
    x = rand(2, 3, 5)
    gamma, beta = rand(3, 5), rand(3, 5)
    y, mean, var = ms.ops.LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(
        Tensor(x), Tensor(gamma), Tensor(beta))
    assert mean.shape == (2, 1, 1) and var.shape == (2, 1, 1)
    np.testing.assert_allclose(mean.asnumpy(), x.mean((1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), x.var((1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
    want = tnn.functional.layer_norm(torch.tensor(x), (3, 5), torch.tensor(gamma), torch.tensor(beta), 1e-7)
    np.testing.assert_allclose(y.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    functional = ms.ops.layer_norm(Tensor(x), (5,), eps=1e-5)
    want = tnn.functional.layer_norm(torch.tensor(x), (5,), eps=1e-5)
    np.testing.assert_allclose(functional.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_layer_norm_errors():
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.LayerNorm(6)
    with pytest.raises(ValueError, match="begin_norm_axis"):
        ms.ops.LayerNorm(begin_norm_axis=3)(Tensor(rand(2, 3)), Tensor(rand(3)), Tensor(rand(3)))
    with pytest.raises(ValueError, match=r"expected \(4,\), but got \(5,\)"):
        nn.LayerNorm((5,))(Tensor(rand(2, 4)))
    with pytest.raises(ValueError, match="normalized_shape"):
        ms.ops.layer_norm(Tensor(rand(2, 4)), (3,))


@pytest.mark.parametrize("mode", MODES)
def test_group_norm(mode):
    net = nn.GroupNorm(2, 6)
    module = tnn.GroupNorm(2, 6)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    compare(net, module, [rand(2, 6, 3, 4)], {"gamma": module.weight, "beta": module.bias}, mode)


def test_group_norm_errors():
    with pytest.raises(ValueError, match="'num_channels' must be divided by 'num_groups'"):
        nn.GroupNorm(4, 6)
    with pytest.raises(TypeError, match="num_groups"):
        nn.GroupNorm(2.0, 6)
    with pytest.raises(ValueError, match=r"\(N, 6, \.\.\.\)"):
        nn.GroupNorm(2, 6)(Tensor(rand(2, 4, 3)))


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5)])
def test_batch_norm1d_2d_and_3d_input(shape):
    net = nn.BatchNorm1d(3)
    net.set_train()
    module = tnn.BatchNorm1d(3, momentum=0.1)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
    compare(net, module, [rand(*shape)], {"gamma": module.weight, "beta": module.bias})
    np.testing.assert_allclose(net.moving_mean.asnumpy(), module.running_mean.numpy(), rtol=1e-5, atol=1e-6)


def test_batch_norm3d():
    net = nn.BatchNorm3d(2)
    net.set_train()
    module = tnn.BatchNorm3d(2, momentum=0.1)
    compare(net, module, [rand(2, 2, 3, 4, 3)], {"gamma": module.weight, "beta": module.bias})
    np.testing.assert_allclose(net.moving_variance.asnumpy(), module.running_var.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="dimension of input"):
        net(Tensor(rand(2, 2, 3, 4)))


class _MsBasicBlock(nn.Cell):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.norm1 = nn.Conv2d(c, c, 3), nn.BatchNorm2d(c)
        self.conv2, self.norm2 = nn.Conv2d(c, c, 3), nn.BatchNorm2d(c)
        self.relu = nn.ReLU()

    def construct(self, x):
        out = self.relu(self.norm1(self.conv1(x)))
        return self.relu(self.norm2(self.conv2(out)) + x)


class _TorchBasicBlock(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.norm1 = tnn.Conv2d(c, c, 3, padding=1, bias=False), tnn.BatchNorm2d(c, momentum=0.1)
        self.conv2, self.norm2 = tnn.Conv2d(c, c, 3, padding=1, bias=False), tnn.BatchNorm2d(c, momentum=0.1)

    def forward(self, x):
        out = torch.relu(self.norm1(self.conv1(x)))
        return torch.relu(self.norm2(self.conv2(out)) + x)


@pytest.mark.parametrize("mode", MODES)
def test_resnet_basic_block_trains_as_pytorch(mode):
    """A basic block (BatchNorm2d with MindSpore's momentum=0.9, PyTorch's 0.1): outputs, gradients of the
    input and every parameter, and the running statistics after two training-mode calls; GRAPH runs the
    block channels-last."""
    net, module = _MsBasicBlock(6), _TorchBasicBlock(6)
    net.set_train()
    with torch.no_grad():
        for norm in (module.norm1, module.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    params = {"conv1.weight": module.conv1.weight, "conv2.weight": module.conv2.weight,
              "norm1.gamma": module.norm1.weight, "norm1.beta": module.norm1.bias,
              "norm2.gamma": module.norm2.weight, "norm2.beta": module.norm2.bias}
    compare(net, module, [rand(4, 6, 7, 5) + 2.0], params, mode, rtol=2e-4, atol=2e-4)
    for ms_norm, t_norm in ((net.norm1, module.norm1), (net.norm2, module.norm2)):
        np.testing.assert_allclose(ms_norm.moving_mean.asnumpy(), t_norm.running_mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ms_norm.moving_variance.asnumpy(), t_norm.running_var.numpy(), rtol=1e-5,
                                   atol=1e-6)
    net.set_train(False)
    module.eval()
    x = rand(3, 6, 7, 5)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), module(torch.tensor(x)).detach().numpy(), rtol=2e-4,
                               atol=2e-4)


# --- Embedding ------------------------------------------------------------------------
def test_embedding_against_pytorch_and_padding_row():
    net = nn.Embedding(10, 4, padding_idx=2)
    assert net.embedding_table.name == "embedding_table"
    table = net.embedding_table.asnumpy()
    np.testing.assert_array_equal(table[2], 0)
    assert 0 < table.std() < 0.05  # 'normal': Normal(0.01)
    ids = np.array([[1, 2, 9], [2, 0, 1]], np.int32)
    module = tnn.Embedding(10, 4)
    with torch.no_grad():
        module.weight.copy_(torch.tensor(table))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    out = net(Tensor(ids))
    np.testing.assert_array_equal(out.asnumpy(), module(torch.tensor(ids, dtype=torch.long)).detach().numpy())
    sens = rand(2, 3, 4)
    grad = ms.grad(lambda i: (net(i) * Tensor(sens)).sum(), grad_position=None,
                   weights=net.trainable_params())(Tensor(ids))[0]
    (module(torch.tensor(ids, dtype=torch.long)) * torch.tensor(sens)).sum().backward()
    np.testing.assert_allclose(grad.asnumpy(), module.weight.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_embedding_errors():
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(TypeError, match="vocab_size"):
        nn.Embedding(5.0, 2)
    with pytest.raises(TypeError, match="input"):
        nn.Embedding(5, 2)(Tensor(rand(2)))
    with pytest.raises(IndexError):
        nn.Embedding(5, 2)(Tensor(np.array([7], np.int32))).asnumpy()


# --- Activations --------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_prelu_per_channel(mode):
    net = nn.PReLU(3, w=0.25)
    assert net.w.name == "a"
    np.testing.assert_array_equal(net.w.asnumpy(), np.full(3, 0.25, np.float32))
    module = tnn.PReLU(3, init=0.25)
    with torch.no_grad():
        module.weight.copy_(torch.tensor([0.1, 0.2, 0.3]))
    compare(net, module, [rand(2, 3, 4)], {"a": module.weight}, mode)


def test_prelu_single_weight_and_errors():
    net = nn.PReLU()
    module = tnn.PReLU()
    compare(net, module, [rand(2, 3, 4)], {"a": module.weight})
    with pytest.raises(ValueError, match="shape of 'w'"):
        nn.PReLU(3, w=[0.1, 0.2])
    with pytest.raises(TypeError, match="'w'"):
        nn.PReLU(1, w="x")


@pytest.mark.parametrize("net, fn", [(nn.Mish(), torch.nn.functional.mish), (nn.SiLU(), torch.nn.functional.silu),
                                     (nn.GELU(approximate=False), torch.nn.functional.gelu)])
def test_activations(net, fn):
    class Module(tnn.Module):
        def forward(self, x):
            return fn(x)

    compare(net, Module(), [rand(3, 5) * 4], {})


def test_identity_and_flatten():
    x = rand(2, 3, 4)
    assert nn.Identity()(Tensor(x)).shape == (2, 3, 4)
    assert nn.Flatten()(Tensor(x)).shape == (2, 12)
    assert nn.Flatten(0, 1)(Tensor(x)).shape == (6, 4)


# --- Convolutions -----------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_conv1d(mode):
    net = nn.Conv1d(4, 6, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
    assert tuple(net.weight.shape) == (6, 4, 1, 3)
    module = tnn.Conv1d(4, 6, 3, stride=2, padding=1)
    compare(net, module, [rand(2, 4, 9)], {"weight": module.weight, "bias": module.bias}, mode)


def test_conv1d_dilation_and_groups_without_bias():
    net = nn.Conv1d(4, 6, 3, pad_mode="valid", dilation=2, group=2)
    module = tnn.Conv1d(4, 6, 3, dilation=2, groups=2, bias=False)
    compare(net, module, [rand(2, 4, 11)], {"weight": module.weight})


@pytest.mark.parametrize("mode", MODES)
def test_conv2d_transpose(mode):
    net = nn.Conv2dTranspose(4, 6, 3, stride=2, pad_mode="pad", padding=1, output_padding=1, has_bias=True)
    assert tuple(net.weight.shape) == (4, 6, 3, 3)
    module = tnn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
    compare(net, module, [rand(2, 4, 5, 4)], {"weight": module.weight, "bias": module.bias}, mode)


@pytest.mark.parametrize("pad_mode, size", [("same", (10, 8)), ("valid", (11, 9))])
def test_conv2d_transpose_output_sizes(pad_mode, size):
    net = nn.Conv2dTranspose(2, 3, 3, stride=2, pad_mode=pad_mode)
    assert net(Tensor(rand(1, 2, 5, 4))).shape == (1, 3) + size


def test_conv2d_transpose_valid_against_pytorch_with_groups():
    net = nn.Conv2dTranspose(4, 6, 3, stride=2, pad_mode="valid", group=2)
    module = tnn.ConvTranspose2d(4, 6, 3, stride=2, groups=2, bias=False)
    compare(net, module, [rand(2, 4, 3, 4)], {"weight": module.weight})


def test_conv1d_transpose():
    net = nn.Conv1dTranspose(3, 5, 4, stride=2, pad_mode="pad", padding=1, has_bias=True)
    assert tuple(net.weight.shape) == (3, 5, 1, 4)
    module = tnn.ConvTranspose1d(3, 5, 4, stride=2, padding=1)
    compare(net, module, [rand(2, 3, 7)], {"weight": module.weight, "bias": module.bias})


def test_conv_errors():
    with pytest.raises(ValueError, match="'padding' must be zero"):
        nn.Conv1d(2, 2, 3, padding=1)
    with pytest.raises(ValueError, match="divisible by 'group'"):
        nn.Conv1dTranspose(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="output_padding"):
        nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", output_padding=2)
    with pytest.raises(TypeError, match="kernel_size"):
        nn.Conv1d(2, 2, (3, 3))
    with pytest.raises(ValueError, match="3-D"):
        nn.Conv1d(2, 2, 3)(Tensor(rand(1, 2, 3, 3)))


@pytest.mark.parametrize("mode", MODES)
def test_conv3d(mode):
    net = nn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), pad_mode="pad", padding=(1, 1, 0, 0, 2, 2),
                    dilation=(2, 1, 1), group=2, has_bias=True)
    assert tuple(net.weight.shape) == (6, 2, 3, 2, 3) and net.data_format == "NCDHW"
    module = tnn.Conv3d(4, 6, (3, 2, 3), stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2)
    compare(net, module, [rand(2, 4, 6, 7, 5)], {"weight": module.weight, "bias": module.bias}, mode)


@pytest.mark.parametrize("mode", MODES)
def test_conv3d_same_and_valid(mode):
    net = nn.Conv3d(3, 4, 3)  # pad_mode 'same', stride 1: PyTorch's padding 1
    assert net.pad_mode == "same" and net.bias is None
    module = tnn.Conv3d(3, 4, 3, padding=1, bias=False)
    compare(net, module, [rand(2, 3, 5, 4, 6)], {"weight": module.weight}, mode)
    net = nn.Conv3d(3, 4, (2, 3, 1), stride=2, pad_mode="valid")
    module = tnn.Conv3d(3, 4, (2, 3, 1), stride=2, bias=False)
    compare(net, module, [rand(1, 3, 7, 6, 5)], {"weight": module.weight}, mode)


@pytest.mark.parametrize("mode", MODES)
def test_conv3d_transpose(mode):
    net = nn.Conv3dTranspose(4, 6, 3, stride=(2, 1, 2), pad_mode="pad", padding=1, output_padding=(1, 0, 0),
                             group=2, has_bias=True)
    assert tuple(net.weight.shape) == (4, 3, 3, 3, 3)
    module = tnn.ConvTranspose3d(4, 6, 3, stride=(2, 1, 2), padding=1, output_padding=(1, 0, 0), groups=2)
    compare(net, module, [rand(2, 4, 3, 4, 3)], {"weight": module.weight, "bias": module.bias}, mode)


@pytest.mark.parametrize("pad_mode, size", [("same", (6, 8, 10)), ("valid", (7, 9, 11))])
def test_conv3d_transpose_output_sizes(pad_mode, size):
    net = nn.Conv3dTranspose(2, 3, 3, stride=2, pad_mode=pad_mode)
    assert net(Tensor(rand(1, 2, 3, 4, 5))).shape == (1, 3) + size


def test_conv3d_errors():
    with pytest.raises(ValueError, match="'padding' must be zero"):
        nn.Conv3d(2, 2, 3, padding=1)
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv3d(2, 2, 3, pad_mode="full")
    with pytest.raises(TypeError, match="kernel_size"):
        nn.Conv3d(2, 2, (3, 3))
    with pytest.raises(TypeError, match="padding"):
        nn.Conv3d(2, 2, 3, pad_mode="pad", padding=(1, 1, 1, 1))
    with pytest.raises(ValueError, match="stride"):
        nn.Conv3d(2, 2, 3, stride=0)
    with pytest.raises(ValueError, match="divisible by 'group'"):
        nn.Conv3d(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="data_format"):
        nn.Conv3d(2, 2, 3, data_format="NDHWC")
    with pytest.raises(ValueError, match="weight_init"):
        nn.Conv3d(2, 2, 3, weight_init=Tensor(rand(2, 2, 3, 3)))
    with pytest.raises(ValueError, match="5-D"):
        nn.Conv3d(2, 2, 3)(Tensor(rand(1, 2, 3, 3)))
    with pytest.raises(ValueError, match="channels"):
        nn.Conv3d(2, 2, 3)(Tensor(rand(1, 3, 3, 3, 3)))
    with pytest.raises(ValueError, match="output_padding"):
        nn.Conv3dTranspose(2, 2, 3, stride=2, pad_mode="pad", output_padding=2)
    with pytest.raises(ValueError, match="5-D"):
        nn.Conv3dTranspose(2, 2, 3)(Tensor(rand(1, 2, 3, 3)))


# --- Pooling ---------------------------------------------------------------------------
@pytest.mark.parametrize("net, module", [(nn.MaxPool1d(3, 2), tnn.MaxPool1d(3, 2)),
                                         (nn.AvgPool1d(2, 2), tnn.AvgPool1d(2, 2)),
                                         (nn.AdaptiveAvgPool1d(3), tnn.AdaptiveAvgPool1d(3)),
                                         (nn.AdaptiveMaxPool1d(3), tnn.AdaptiveMaxPool1d(3)),
                                         (nn.AdaptiveAvgPool2d((3, 2)), tnn.AdaptiveAvgPool2d((3, 2))),
                                         (nn.AdaptiveAvgPool2d(4), tnn.AdaptiveAvgPool2d(4)),
                                         (nn.AdaptiveMaxPool2d((2, 3)), tnn.AdaptiveMaxPool2d((2, 3)))])
def test_pools(net, module):
    x = rand(2, 3, 7, 5) if "2d" in type(net).__name__ else rand(2, 3, 7)
    compare(net, module, [x], {})


def test_adaptive_pool_none_keeps_axis_and_graph_mode():
    net = nn.AdaptiveAvgPool2d((None, 2))
    assert net(Tensor(rand(1, 2, 5, 6))).shape == (1, 2, 5, 2)
    compare(nn.AdaptiveMaxPool2d(3), tnn.AdaptiveMaxPool2d(3), [rand(1, 2, 7, 8)], {}, ms.GRAPH_MODE)


def test_pool_errors():
    with pytest.raises(ValueError, match="output_size"):
        nn.AdaptiveAvgPool2d(0)
    with pytest.raises(ValueError, match="output_size"):
        nn.AdaptiveAvgPool1d((2, 2))
    with pytest.raises(NotImplementedError):
        nn.AdaptiveMaxPool2d(2, return_indices=True)
    with pytest.raises(TypeError, match="kernel_size"):
        nn.MaxPool1d((2, 2))
    with pytest.raises(ValueError, match="rank 3 or 4"):
        nn.AdaptiveAvgPool2d(2)(Tensor(rand(4, 4)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("net, module", [
    (lambda: nn.MaxPool3d(2, 2), lambda: tnn.MaxPool3d(2, 2)),
    (lambda: nn.MaxPool3d((3, 2, 3), (2, 1, 2), pad_mode="pad", padding=(1, 1, 1), ceil_mode=True),
     lambda: tnn.MaxPool3d((3, 2, 3), (2, 1, 2), padding=(1, 1, 1), ceil_mode=True)),
    (lambda: nn.AvgPool3d(3, 2, pad_mode="pad", padding=1), lambda: tnn.AvgPool3d(3, 2, padding=1)),
    (lambda: nn.AvgPool3d(3, 2, pad_mode="pad", padding=(1, 1, 0, 0, 1, 1), ceil_mode=True,
                          count_include_pad=False),
     lambda: tnn.AvgPool3d(3, 2, padding=(1, 0, 1), ceil_mode=True, count_include_pad=False)),
    (lambda: nn.AvgPool3d((1, 2, 2)), lambda: tnn.AvgPool3d((1, 2, 2), 1)),
])
def test_pools_3d(mode, net, module):
    compare(net(), module(), [rand(2, 3, 7, 6, 5)], {}, mode)


def test_pools_3d_unbatched_and_same():
    x = rand(3, 5, 6, 7)
    y = nn.MaxPool3d(3, 2, pad_mode="same")(Tensor(x))
    # 'same': out = ceil(in / 2); padding (1, 1), (0, 1), (1, 1) with the extra at the end
    want = tnn.functional.max_pool3d(tnn.functional.pad(torch.tensor(x[None]), (1, 1, 0, 1, 1, 1), value=-np.inf),
                                     3, 2)[0]
    assert y.shape == (3, 3, 3, 4)
    np.testing.assert_allclose(y.asnumpy(), want.numpy(), rtol=1e-6)


def test_pool3d_errors():
    with pytest.raises(ValueError, match="pad_mode"):
        nn.MaxPool3d(2, pad_mode="full")
    with pytest.raises(ValueError, match="'padding' must be zero"):
        nn.AvgPool3d(2, padding=1)
    with pytest.raises(TypeError, match="kernel_size"):
        nn.MaxPool3d((2, 2))
    with pytest.raises(ValueError, match="stride"):
        nn.AvgPool3d(2, stride=0)
    with pytest.raises(TypeError, match="ceil_mode"):
        nn.MaxPool3d(2, ceil_mode=1)
    with pytest.raises(NotImplementedError, match="dilation"):
        nn.MaxPool3d(2, dilation=2)
    with pytest.raises(NotImplementedError, match="return_indices"):
        nn.MaxPool3d(2, return_indices=True)
    with pytest.raises(NotImplementedError, match="divisor_override"):
        nn.AvgPool3d(2, divisor_override=2)
    with pytest.raises(ValueError, match=r"\(N, C, D, H, W\)"):
        nn.MaxPool3d(2)(Tensor(rand(4, 4, 4)))
    with pytest.raises(ValueError, match="smaller than the window"):
        nn.AvgPool3d(2, pad_mode="pad", padding=2)(Tensor(rand(1, 1, 4, 4, 4)))


# --- Upsample and PixelShuffle ---------------------------------------------------------------
@pytest.mark.parametrize("kwargs, shape", [
    (dict(scale_factor=2.0, mode="nearest"), (2, 3, 4, 5)),
    (dict(size=(7, 3), mode="nearest"), (2, 3, 4, 5)),
    (dict(scale_factor=2.0, mode="bilinear", align_corners=True), (2, 3, 4, 5)),
    (dict(size=(7, 9), mode="bilinear", align_corners=False), (2, 3, 4, 5)),
    (dict(scale_factor=1.5, mode="bilinear"), (1, 2, 4, 6)),
    (dict(size=9, mode="linear", align_corners=True), (2, 3, 5)),
    (dict(scale_factor=3.0, mode="nearest"), (2, 3, 5)),
])
def test_upsample(kwargs, shape):
    net = nn.Upsample(**kwargs)

    class Module(tnn.Module):
        def forward(self, x):
            return tnn.functional.interpolate(x, **kwargs)

    compare(net, Module(), [rand(*shape)], {})


def test_upsample_graph_mode_and_errors():
    class Module(tnn.Module):
        def forward(self, x):
            return tnn.functional.interpolate(x, size=(6, 6), mode="bilinear", align_corners=True)

    compare(nn.Upsample(size=(6, 6), mode="bilinear", align_corners=True), Module(), [rand(1, 2, 3, 4)], {},
            ms.GRAPH_MODE)
    x = Tensor(rand(1, 1, 3, 3))
    with pytest.raises(ValueError, match="exactly one of 'size' and 'scale_factor'"):
        nn.Upsample()(x)
    with pytest.raises(ValueError, match="'mode' must be one of"):
        nn.Upsample(scale_factor=2.0, mode="cubic")(x)
    with pytest.raises(NotImplementedError, match="bicubic"):
        nn.Upsample(scale_factor=2.0, mode="bicubic")(x)
    with pytest.raises(ValueError, match="4-D"):
        nn.Upsample(scale_factor=2.0, mode="bilinear")(Tensor(rand(1, 1, 3)))
    with pytest.raises(ValueError, match="align_corners"):
        nn.Upsample(scale_factor=2.0, mode="nearest", align_corners=True)(x)


def test_pixel_unshuffle():
    compare(nn.PixelUnshuffle(2), tnn.PixelUnshuffle(2), [rand(2, 3, 6, 4)], {})
    with pytest.raises(ValueError, match=r"H \* r, W \* r"):
        nn.PixelUnshuffle(3)(Tensor(rand(1, 2, 6, 4)))
    with pytest.raises(ValueError, match="downscale_factor"):
        nn.PixelUnshuffle(0)


def test_pixel_shuffle():
    compare(nn.PixelShuffle(2), tnn.PixelShuffle(2), [rand(2, 8, 3, 4)], {})
    with pytest.raises(ValueError, match=r"C \* r\^2"):
        nn.PixelShuffle(3)(Tensor(rand(1, 8, 2, 2)))
    with pytest.raises(ValueError, match="upscale_factor"):
        nn.PixelShuffle(0)


# --- Recurrent layers ------------------------------------------------------------------------
def _rnn_params(net, module):
    """msrt's parameter names are PyTorch's."""
    return {name: p for name, p in module.named_parameters()}


@pytest.mark.parametrize("cls, tcls, kwargs", [
    (nn.LSTM, tnn.LSTM, dict(num_layers=2, bidirectional=True)),
    (nn.LSTM, tnn.LSTM, dict(batch_first=True)),
    (nn.GRU, tnn.GRU, dict(num_layers=2, bidirectional=True, batch_first=True)),
    (nn.GRU, tnn.GRU, dict(has_bias=False)),
    (nn.RNN, tnn.RNN, dict(num_layers=2)),
    (nn.RNN, tnn.RNN, dict(nonlinearity="relu", bidirectional=True)),
])
def test_recurrent_layers(cls, tcls, kwargs):
    net = cls(3, 4, **kwargs)
    tkwargs = dict(kwargs)
    if "has_bias" in tkwargs:
        tkwargs["bias"] = tkwargs.pop("has_bias")
    module = tcls(3, 4, **tkwargs)
    params = _rnn_params(net, module)
    assert sorted(p.name for p in net.get_parameters()) == sorted(params)
    x = rand(2, 5, 3) if kwargs.get("batch_first") else rand(5, 2, 3)
    compare(net, module, [x], params)


@pytest.mark.parametrize("mode", MODES)
def test_lstm_with_initial_state(mode):
    net = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    module = tnn.LSTM(3, 4, num_layers=2, bidirectional=True)
    h0, c0 = rand(4, 2, 4), rand(4, 2, 4)

    class WithState(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lstm = net

        def construct(self, x, h, c):
            return self.lstm(x, (h, c))

    class TorchWithState(tnn.Module):
        def forward(self, x, h, c):
            return module(x, (h, c))

    params = {f"lstm.{name}": p for name, p in module.named_parameters()}
    compare(WithState(), TorchWithState(), [rand(6, 2, 3), h0, c0], params, mode, grad_inputs=(0, 1, 2))


@pytest.mark.parametrize("cls, tcls", [(nn.LSTM, tnn.LSTM), (nn.GRU, tnn.GRU)])
@pytest.mark.parametrize("mode", MODES)
def test_recurrent_layers_with_sequence_lengths_match_packed_sequences(cls, tcls, mode):
    net = cls(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    module = tcls(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    lengths = np.array([5, 2, 4], np.int32)
    rnn_utils = torch.nn.utils.rnn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = net

        def construct(self, x):
            return self.rnn(x, seq_length=Tensor(lengths))

    class Module(tnn.Module):
        def forward(self, x):
            packed = rnn_utils.pack_padded_sequence(x, torch.tensor(lengths, dtype=torch.long), batch_first=True,
                                                    enforce_sorted=False)
            out, state = module(packed)
            return rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=5)[0], state

    params = {f"rnn.{name}": p for name, p in module.named_parameters()}
    compare(Net(), Module(), [rand(3, 5, 3)], params, mode)


def test_gru_with_initial_state_and_init():
    net = nn.GRU(3, 5)
    bound = 1 / np.sqrt(5)
    for p in net.get_parameters():
        assert np.abs(p.asnumpy()).max() <= bound
    module = tnn.GRU(3, 5)
    compare(net, module, [rand(4, 2, 3), rand(1, 2, 5)], _rnn_params(net, module), grad_inputs=(0, 1))


def test_recurrent_errors():
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=1.0)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(TypeError, match="hidden_size"):
        nn.GRU(3, 4.0)
    with pytest.raises(ValueError, match="3 features"):
        nn.GRU(3, 4)(Tensor(rand(2, 2, 5)))
    with pytest.raises(ValueError, match="h_0"):
        nn.GRU(3, 4)(Tensor(rand(2, 2, 3)), Tensor(rand(2, 2, 4)))
    with pytest.raises(TypeError, match=r"\(h_0, c_0\)"):
        nn.LSTM(3, 4)(Tensor(rand(2, 2, 3)), Tensor(rand(1, 2, 4)))


# --- Attention and transformer encoders --------------------------------------------------------
def _attention_params(prefix, module):
    """msrt's names for PyTorch's MultiheadAttention parameters."""
    return {f"{prefix}{name}": p for name, p in module.named_parameters()}


@pytest.mark.parametrize("mode", MODES)
def test_multihead_attention_self_attention(mode):
    net = nn.MultiheadAttention(8, 2)
    module = tnn.MultiheadAttention(8, 2)
    with torch.no_grad():
        module.in_proj_bias.uniform_(-0.5, 0.5)
        module.out_proj.bias.uniform_(-0.5, 0.5)
    params = _attention_params("", module)
    assert sorted(p.name for p in net.get_parameters()) == sorted(params)
    compare(net, module, [rand(4, 3, 8), rand(5, 3, 8), rand(5, 3, 8)], params, mode, grad_inputs=(0, 1, 2))


def test_multihead_attention_masks_batch_first_and_per_head_weights():
    net = nn.MultiheadAttention(6, 3, batch_first=True)
    module = tnn.MultiheadAttention(6, 3, batch_first=True)
    attn_mask = np.triu(np.ones((4, 4), bool), 1)
    padding = np.zeros((2, 4), bool)
    padding[1, 3] = True

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.attn = net

        def construct(self, x):
            return self.attn(x, x, x, key_padding_mask=Tensor(padding), attn_mask=Tensor(attn_mask),
                             average_attn_weights=False)

    class Module(tnn.Module):
        def forward(self, x):
            return module(x, x, x, key_padding_mask=torch.tensor(padding), attn_mask=torch.tensor(attn_mask),
                          average_attn_weights=False)

    compare(Net(), Module(), [rand(2, 4, 6)], _attention_params("attn.", module))


def test_multihead_attention_float_mask_and_kdim():
    net = nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    module = tnn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    mask = rand(2, 3)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.attn = net

        def construct(self, q, k, v):
            return self.attn(q, k, v, attn_mask=Tensor(mask))

    class Module(tnn.Module):
        def forward(self, q, k, v):
            return module(q, k, v, attn_mask=torch.tensor(mask))

    compare(Net(), Module(), [rand(2, 2, 4), rand(3, 2, 3), rand(3, 2, 5)], _attention_params("attn.", module),
            grad_inputs=(0, 1, 2))


def test_multihead_attention_errors():
    with pytest.raises(ValueError, match="divisible by 'num_heads'"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(NotImplementedError):
        nn.MultiheadAttention(4, 2, add_bias_kv=True)
    with pytest.raises(ValueError, match="dropout"):
        nn.MultiheadAttention(4, 2, dropout=1.5)
    x = Tensor(rand(3, 2, 4))
    with pytest.raises(ValueError, match="'attn_mask' must be"):
        nn.MultiheadAttention(4, 2)(x, x, x, attn_mask=Tensor(np.zeros((2, 2), bool)))
    with pytest.raises(ValueError, match="'key_padding_mask' must be"):
        nn.MultiheadAttention(4, 2)(x, x, x, key_padding_mask=Tensor(np.zeros((3, 3), bool)))


def _encoder_params(prefix, module):
    """msrt's names for a PyTorch encoder layer's parameters (LayerNorm's gamma and beta)."""
    out = {}
    for name, p in module.named_parameters():
        name = name.replace("norm1.weight", "norm1.gamma").replace("norm1.bias", "norm1.beta")
        name = name.replace("norm2.weight", "norm2.gamma").replace("norm2.bias", "norm2.beta")
        name = name.replace("norm.weight", "norm.gamma").replace("norm.bias", "norm.beta")
        out[prefix + name] = p
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("norm_first, activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer(mode, norm_first, activation):
    net = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=activation,
                                     norm_first=norm_first)
    module = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=activation,
                                         norm_first=norm_first)
    params = _encoder_params("", module)
    assert sorted(p.name for p in net.get_parameters()) == sorted(params)
    compare(net, module, [rand(5, 2, 8)], params, mode, rtol=2e-4, atol=2e-5)


def test_transformer_encoder_with_masks_and_norm():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, batch_first=True)
    net = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm((8,)))
    tlayer = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, batch_first=True)
    module = tnn.TransformerEncoder(tlayer, 2, norm=tnn.LayerNorm(8, eps=1e-7), enable_nested_tensor=False)
    mask = np.triu(np.full((5, 5), -1e9, np.float32), 1)
    padding = np.zeros((3, 5), bool)
    padding[0, 4] = True

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.encoder = net

        def construct(self, x):
            return self.encoder(x, Tensor(mask), Tensor(padding))

    class Module(tnn.Module):
        def forward(self, x):
            return module(x, torch.tensor(mask), torch.tensor(padding))

    params = _encoder_params("encoder.", module)
    assert sorted(p.name for p in Net().get_parameters()) == sorted(params)
    compare(Net(), Module(), [rand(3, 5, 8)], params, rtol=2e-4, atol=2e-5)


def test_transformer_errors():
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(TypeError, match="encoder_layer"):
        nn.TransformerEncoder(nn.Dense(2, 2), 2)
    with pytest.raises(ValueError, match="num_layers"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 0)
