"""Networks and data shared by the graph-mode tests."""
import numpy as np

import msrt as ms
from msrt import nn


class SmallNet(nn.Cell):
    """conv → relu → pool → dense: the layers a LeNet uses, small (`has_bias`: a bias_add between conv and relu)."""

    def __init__(self, in_channels=1, has_bias=False):
        super().__init__()
        bias = {"has_bias": True, "bias_init": "normal"} if has_bias else {}
        self.conv = nn.Conv2d(in_channels, 4, 3, pad_mode="valid", **bias)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.dense = nn.Dense(4 * 3 * 3, 5)

    def construct(self, x):
        return self.dense(self.flatten(self.pool(self.relu(self.conv(x)))))


def make_training(seed=3, lr=0.05, optimizer="momentum"):
    ms.set_seed(seed)
    net = SmallNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    if optimizer == "momentum":
        opt = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    else:
        opt = nn.Adam(net.trainable_params(), learning_rate=lr)
    return net, nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)


def batches(n=3, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    return [(ms.Tensor(rng.standard_normal((batch, 1, 8, 8)).astype(np.float32)),
             ms.Tensor(rng.integers(0, 5, batch).astype(np.int32))) for _ in range(n)]


def compiles(obj):
    return len(ms._jit.compile_report(obj))
