"""Helpers of the instrument tests: a tiny training job and file readers."""
import json

import numpy as np

import msrt as ms
from msrt import nn


def train_steps(steps=3, seed=0):
    """Trains a Dense(4, 3) classifier for `steps` steps with ms.train.Model."""
    rng = np.random.default_rng(seed)
    net = nn.Dense(4, 3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    data = [(rng.random((8, 4), dtype=np.float32), rng.integers(0, 3, 8).astype(np.int32)) for _ in range(steps)]
    ms.train.Model(net, loss, opt).train(1, data)
    return net


def read_index(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def read_trace(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    return trace, [e for e in events if e.get("cat") == "op"], [e for e in events if e.get("cat") == "step"]
