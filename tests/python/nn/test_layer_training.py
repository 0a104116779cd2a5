"""Small networks of the sequence layers train in both modes: an LSTM text
classifier and a transformer encoder classifier, with TrainOneStepCell, learn a
synthetic task, and GRAPH_MODE follows PYNATIVE step for step."""
import numpy as np
import pytest

import msrt as ms
from msrt import Tensor, nn, ops


class LSTMClassifier(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(8, 6, padding_idx=0)
        self.lstm = nn.LSTM(6, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Dense(16, 2)

    def construct(self, ids):
        out, (h, _) = self.lstm(self.embedding(ids))
        return self.fc(ops.concat((h[-2], h[-1]), axis=1))


class TransformerClassifier(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(8, 8)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Dense(8, 2)

    def construct(self, ids):
        h = self.encoder(self.embedding(ids))  # (N, T, E)
        pooled = self.pool(ops.transpose(h, (0, 2, 1)))  # (N, E, 1)
        return self.fc(ops.squeeze(pooled, -1))


def _data():
    rng = np.random.default_rng(2)
    ids = rng.integers(1, 8, size=(16, 6)).astype(np.int32)
    labels = (ids == 3).any(1).astype(np.int32)  # does token 3 appear?
    return Tensor(ids), Tensor(labels)


def _train(cls, mode, steps):
    ms.set_context(mode=mode)
    ms.set_seed(3)
    net = cls()
    loss_net = nn.WithLossCell(net, nn.CrossEntropyLoss())
    step = nn.TrainOneStepCell(loss_net, nn.Adam(net.trainable_params(), learning_rate=0.02))
    step.set_train()
    ids, labels = _data()
    return [float(step(ids, labels).asnumpy()) for _ in range(steps)]


@pytest.mark.parametrize("cls", [LSTMClassifier, TransformerClassifier])
def test_sequence_classifiers_learn_alike_in_both_modes(cls):
    eager = _train(cls, ms.PYNATIVE_MODE, 25)
    graph = _train(cls, ms.GRAPH_MODE, 25)
    assert eager[-1] < 0.5 * eager[0], eager
    np.testing.assert_allclose(graph, eager, rtol=2e-3, atol=1e-4)
