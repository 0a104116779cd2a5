"""TransformerDecoderLayer, TransformerDecoder and Transformer against PyTorch: weights copied across,
outputs and the gradients of a weighted sum of the outputs with respect to the inputs and every
parameter (dropout 0, eval and train, PYNATIVE and GRAPH_MODE); masks; MindSpore's errors."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn, ops

from .test_layers_torch import MODES, compare, rand

torch = pytest.importorskip("torch")
tnn = torch.nn


@pytest.fixture(autouse=True)
def _seed():
    ms.set_seed(0)
    torch.manual_seed(0)


def _params(prefix, module):
    """msrt's names for a PyTorch module's parameters (LayerNorm's weight and bias are gamma and beta)."""
    out = {}
    for name, p in module.named_parameters():
        parts = name.split(".")
        if parts[-2].startswith("norm"):
            parts[-1] = {"weight": "gamma", "bias": "beta"}[parts[-1]]
        out[prefix + ".".join(parts)] = p
    return out


def _randomize_biases(module):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.uniform_(-0.5, 0.5)


def _set_train(net, module, train):
    net.set_train(train)
    module.train(train)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("norm_first, activation, train", [(False, "relu", False), (True, "gelu", True)])
def test_decoder_layer(mode, norm_first, activation, train):
    net = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=activation,
                                     norm_first=norm_first)
    module = tnn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=activation,
                                         norm_first=norm_first)
    _randomize_biases(module)
    _set_train(net, module, train)
    params = _params("", module)
    assert sorted(p.name for p in net.get_parameters()) == sorted(params)
    compare(net, module, [rand(4, 2, 8), rand(5, 2, 8)], params, mode, rtol=2e-4, atol=2e-5, grad_inputs=(0, 1))


def _masked_pair(net, module, tgt_mask, memory_mask, tgt_padding, memory_padding):
    masks = (tgt_mask, memory_mask, tgt_padding, memory_padding)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = net

        def construct(self, tgt, memory):
            return self.inner(tgt, memory, *(None if m is None else Tensor(m) for m in masks))

    class Module(tnn.Module):
        def forward(self, tgt, memory):
            return module(tgt, memory, *(None if m is None else torch.tensor(m) for m in masks))

    return Net(), Module()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_bool_masks(mode, batch_first):
    net = nn.TransformerDecoderLayer(6, 3, dim_feedforward=10, dropout=0.0, batch_first=batch_first)
    module = tnn.TransformerDecoderLayer(6, 3, dim_feedforward=10, dropout=0.0, batch_first=batch_first)
    _randomize_biases(module)
    tgt_mask = np.triu(np.ones((4, 4), bool), 1)
    memory_mask = np.zeros((4, 5), bool)
    memory_mask[0, 1] = memory_mask[2, 4] = True
    tgt_padding = np.zeros((2, 4), bool)
    tgt_padding[1, 3] = True
    memory_padding = np.zeros((2, 5), bool)
    memory_padding[0, 0] = True
    pair = _masked_pair(net, module, tgt_mask, memory_mask, tgt_padding, memory_padding)
    shapes = [(2, 4, 6), (2, 5, 6)] if batch_first else [(4, 2, 6), (5, 2, 6)]
    compare(*pair, [rand(*s) for s in shapes], _params("inner.", module), mode, rtol=2e-4, atol=2e-5,
            grad_inputs=(0, 1))


@pytest.mark.parametrize("mode", MODES)
def test_decoder_float_masks_and_norm(mode):
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, batch_first=True)
    net = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm((8,), epsilon=1e-5))
    tlayer = tnn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, batch_first=True)
    module = tnn.TransformerDecoder(tlayer, 2, norm=tnn.LayerNorm(8))
    _randomize_biases(module)
    # a float attention mask with a bool padding mask, and a float padding mask alone (the PyTorch here
    # cannot combine two float masks)
    tgt_mask = np.triu(np.full((3, 3), -1e9, np.float32), 1)
    memory_mask = None
    tgt_padding = np.zeros((2, 3), bool)
    tgt_padding[0, 2] = True
    memory_padding = rand(2, 4)
    pair = _masked_pair(net, module, tgt_mask, memory_mask, tgt_padding, memory_padding)
    params = _params("inner.", module)
    assert sorted(p.name for p in pair[0].get_parameters()) == sorted(params)
    compare(*pair, [rand(2, 3, 8), rand(2, 4, 8)], params, mode, rtol=2e-4, atol=2e-5, grad_inputs=(0, 1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first, norm_first, train", [(False, False, False), (True, True, True)])
def test_transformer(mode, batch_first, norm_first, train):
    kwargs = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=12, dropout=0.0,
                  batch_first=batch_first, norm_first=norm_first)
    net = nn.Transformer(**kwargs)
    module = tnn.Transformer(**kwargs)
    _randomize_biases(module)
    _set_train(net, module, train)
    params = _params("", module)
    assert sorted(p.name for p in net.get_parameters()) == sorted(params)
    shapes = [(3, 5, 8), (3, 4, 8)] if batch_first else [(5, 3, 8), (4, 3, 8)]
    compare(net, module, [rand(*s) for s in shapes], params, mode, rtol=3e-4, atol=3e-5, grad_inputs=(0, 1))


def test_transformer_with_all_masks():
    net = nn.Transformer(8, 2, 1, 1, dim_feedforward=12, dropout=0.0)
    module = tnn.Transformer(8, 2, 1, 1, dim_feedforward=12, dropout=0.0)
    _randomize_biases(module)
    src_mask = np.triu(np.ones((5, 5), bool), 1)
    tgt_mask = np.triu(np.ones((4, 4), bool), 1)
    memory_mask = np.zeros((4, 5), bool)
    memory_mask[1, 2] = True
    src_padding = np.zeros((2, 5), bool)
    src_padding[1, 4] = True
    tgt_padding = np.zeros((2, 4), bool)
    tgt_padding[0, 3] = True
    memory_padding = src_padding.copy()
    masks = (src_mask, tgt_mask, memory_mask, src_padding, tgt_padding, memory_padding)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = net

        def construct(self, src, tgt):
            return self.inner(src, tgt, *(Tensor(m) for m in masks))

    class Module(tnn.Module):
        def forward(self, src, tgt):
            return module(src, tgt, *(torch.tensor(m) for m in masks))

    compare(Net(), Module(), [rand(5, 2, 8), rand(4, 2, 8)], _params("inner.", module), rtol=3e-4, atol=3e-5,
            grad_inputs=(0, 1))


def test_unbatched_decoder_layer():
    net = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0)
    module = tnn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0)
    _randomize_biases(module)
    compare(net, module, [rand(3, 4), rand(5, 4)], _params("", module), rtol=2e-4, atol=2e-5, grad_inputs=(0, 1))


@pytest.mark.parametrize("activation", [ops.gelu, nn.GELU(approximate=False), ops.relu])
def test_callable_activation(activation):
    net = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation=activation)
    t_activation = "relu" if activation is ops.relu else "gelu"
    module = tnn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation=t_activation)
    _randomize_biases(module)
    compare(net, module, [rand(3, 2, 4), rand(2, 2, 4)], _params("", module), rtol=2e-4, atol=2e-5)


def test_layers_are_independent_copies_and_transformer_initializer():
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6)
    decoder = nn.TransformerDecoder(layer, 3)
    weights = [p for p in decoder.get_parameters() if p.name.endswith("linear1.weight")]
    assert [p.name for p in weights] == [f"layers.{i}.linear1.weight" for i in range(3)]
    weights[0].set_data(Tensor(np.zeros((6, 4), np.float32)))
    assert np.abs(weights[1].asnumpy()).sum() > 0
    net = nn.Transformer(8, 2, 1, 1, dim_feedforward=16)
    bound = np.sqrt(6.0 / (16 + 8))  # XavierUniform of every parameter with two or more dimensions
    w = dict((p.name, p) for p in net.get_parameters())["encoder.layers.0.linear1.weight"].asnumpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
    assert net.d_model == 8 and net.nhead == 2 and layer.dim_feedforward == 6 and layer.activation1 == "relu"


def test_custom_encoder_and_decoder():
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0), 1)
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0), 1)
    net = nn.Transformer(4, 2, custom_encoder=encoder, custom_decoder=decoder)
    assert net.encoder is encoder and net.decoder is decoder
    src, tgt = Tensor(rand(3, 2, 4)), Tensor(rand(2, 2, 4))
    np.testing.assert_allclose(net(src, tgt).asnumpy(), decoder(tgt, encoder(src)).asnumpy(), rtol=1e-6, atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerDecoderLayer(8, 2, activation=3)
    with pytest.raises(ValueError, match="divisible"):
        nn.TransformerDecoderLayer(6, 4)
    with pytest.raises(ValueError, match="dropout"):
        nn.TransformerDecoderLayer(8, 2, dropout=1.0)
    with pytest.raises(TypeError, match="norm_first"):
        nn.TransformerDecoderLayer(8, 2, norm_first=1)
    with pytest.raises(TypeError, match="batch_first"):
        nn.TransformerDecoderLayer(8, 2, batch_first="yes")
    with pytest.raises(TypeError, match="decoder_layer"):
        nn.TransformerDecoder(nn.TransformerEncoderLayer(4, 2, 8), 2)
    with pytest.raises(ValueError, match="num_layers"):
        nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 0)
    with pytest.raises(TypeError, match="custom_encoder"):
        nn.Transformer(4, 2, custom_encoder="encoder")
    net = nn.Transformer(4, 2, 1, 1, dim_feedforward=8)
    with pytest.raises(ValueError, match="batch size"):
        net(Tensor(rand(3, 2, 4)), Tensor(rand(3, 5, 4)))
    with pytest.raises(ValueError, match="d_model"):
        net(Tensor(rand(3, 2, 4)), Tensor(rand(3, 2, 6)))
    x = Tensor(rand(3, 2, 4))
    with pytest.raises(AssertionError, match="key_padding_mask"):
        nn.TransformerEncoderLayer(4, 2, 8)(x, src_key_padding_mask=Tensor(np.zeros((2, 3), np.int32)))
