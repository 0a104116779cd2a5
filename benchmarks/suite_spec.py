"""What the benchmark suite measures, shared by msrt's side (networks.py) and PyTorch's (suite_peer.py) without
importing either: each network's configuration and batches, its initial weights and inputs (the same numbers on
both sides, made from names and shapes), and its FLOPs.

Weights are named as PyTorch names them (`canonical`): msrt's parameter names differ only in their last part
(gamma / beta / moving_mean / moving_variance / embedding_table), so both sides build their networks with the
same attribute names and look each parameter's first value up here.
"""
import zlib

import numpy as np

CLASSES = 10

# train: (small, large) batch of the training step; infer: (small, large) batch of inference.
NETWORKS = {
    "lenet": {"train": (32, 256), "infer": (1, 256),
              "about": "LeNet-5 (MindSpore's model zoo: 2 conv 5x5 without bias, max-pool, 3 dense), 1x32x32"},
    "mlp": {"sizes": (784, 1024, 1024, CLASSES), "train": (64, 512), "infer": (1, 512),
            "about": "MLP 784-1024-1024-10, ReLU"},
    "resnet": {"widths": (16, 32, 64), "blocks": 1, "train": (32, 128), "infer": (1, 64),
               "about": "CIFAR ResNet-8 (3 stages of 1 basic block, 16/32/64 channels, BatchNorm, "
                        "1x1 projection shortcuts), 3x32x32"},
    "transformer": {"vocab": 1000, "seq": 32, "d_model": 128, "heads": 4, "ffn": 512, "layers": 2,
                    "train": (8, 64), "infer": (1, 64),
                    "about": "transformer encoder: token + learned position embedding, 2 post-norm layers "
                             "(4-head self-attention, LayerNorm, GELU MLP 128-512-128), mean pool, dense; "
                             "sequence 32, vocabulary 1000"},
}

LEARNING_RATE = 0.01
MOMENTUM = 0.9

_RENAME = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean", "moving_variance": "running_var",
           "embedding_table": "weight"}


def canonical(name):
    """PyTorch's name of an msrt parameter (`bn1.gamma` -> `bn1.weight`)."""
    head, _, last = name.rpartition(".")
    last = _RENAME.get(last, last)
    return f"{head}.{last}" if head else last


_BLOCK = 1 << 16


def init_value(name, shape):
    """The first value of the parameter (or buffer) `name` (canonical) of `shape`, float32: matrices and kernels
    normal with standard deviation 1/sqrt(fan-in), vector weights (norm scales) and running variances ones,
    running means zeros, biases uniform in [-0.05, 0.05]."""
    shape = tuple(int(s) for s in shape)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    last = name.rpartition(".")[2]
    if last == "running_var" or (last == "weight" and len(shape) == 1):
        return np.ones(shape, np.float32)
    if last == "running_mean":
        return np.zeros(shape, np.float32)
    if len(shape) == 1:
        return rng.uniform(-0.05, 0.05, shape).astype(np.float32)
    fan_in = int(np.prod(shape[1:]))
    # Drawn in blocks: the same numbers as one draw of the whole shape, without a float64 array of its size, which
    # either side's process (its allocator keeping freed blocks) would count in its peak RSS.
    out = np.empty(int(np.prod(shape)), np.float32)
    for start in range(0, out.size, _BLOCK):
        n = min(_BLOCK, out.size - start)
        out[start:start + n] = rng.standard_normal(n) / np.sqrt(fan_in)
    return out.reshape(shape)


def inputs(network, batch):
    """(x, labels) of a step: x float32 (token ids int64 for the transformer), labels int64 in [0, CLASSES)."""
    rng = np.random.default_rng(1000 + batch)
    cfg = NETWORKS[network]
    if network == "lenet":
        x = rng.standard_normal((batch, 1, 32, 32)).astype(np.float32)
    elif network == "mlp":
        x = rng.standard_normal((batch, cfg["sizes"][0])).astype(np.float32)
    elif network == "resnet":
        x = rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
    else:
        x = rng.integers(0, cfg["vocab"], (batch, cfg["seq"])).astype(np.int64)
    return x, rng.integers(0, CLASSES, batch).astype(np.int64)


def _conv(cin, cout, k, out_hw):
    return cin * k * k * cout * out_hw * out_hw


def layers(network):
    """Per sample: (multiply-adds, weight gradient?, input gradient?) of each convolution and matrix product (for
    the attention products: gradient of the second operand?, of the first?)."""
    cfg = NETWORKS[network]
    if network == "lenet":
        return [(_conv(1, 6, 5, 28), True, False), (_conv(6, 16, 5, 10), True, True),
                (400 * 120, True, True), (120 * 84, True, True), (84 * CLASSES, True, True)]
    if network == "mlp":
        s = cfg["sizes"]
        return [(s[i] * s[i + 1], True, i > 0) for i in range(len(s) - 1)]
    if network == "resnet":
        out = [(_conv(3, cfg["widths"][0], 3, 32), True, False)]
        cin, hw = cfg["widths"][0], 32
        for stage, width in enumerate(cfg["widths"]):
            for block in range(cfg["blocks"]):
                stride = 2 if stage > 0 and block == 0 else 1
                hw //= stride
                out += [(_conv(cin, width, 3, hw), True, True), (_conv(width, width, 3, hw), True, True)]
                if stride != 1 or cin != width:
                    out.append((_conv(cin, width, 1, hw), True, True))
                cin = width
        return out + [(cin * CLASSES, True, True)]
    seq, d, ffn = cfg["seq"], cfg["d_model"], cfg["ffn"]
    per_layer = [(seq * 3 * d * d, True, True), (seq * seq * d, True, True), (seq * seq * d, True, True),
                 (seq * d * d, True, True), (seq * d * ffn, True, True), (seq * ffn * d, True, True)]
    return per_layer * cfg["layers"] + [(d * CLASSES, True, True)]


def flops(network, batch, phase):
    """FLOPs of one step (2 per multiply-add) of the network's convolutions and matrix products: forward for
    "infer"; forward, weight gradients and input gradients (not the first layer's) for "train". Elementwise,
    normalisation, pooling, softmax and optimizer work are not counted."""
    total = 0
    for macs, weight_grad, input_grad in layers(network):
        total += macs * (1 + (weight_grad + input_grad if phase == "train" else 0))
    return 2 * total * batch
