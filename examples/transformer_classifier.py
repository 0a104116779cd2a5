"""A small Transformer encoder classifier on synthetic sequences, written as
a MindSpore script would be: only the import differs.

    .venv/bin/python examples/transformer_classifier.py [--epochs N]

Each sequence has 16 tokens over a vocabulary of 32: noise tokens 5-31 and
one class token 1-4 at a random position, whose value is the label. Token
and learned position embeddings go through a two-layer nn.TransformerEncoder
(batch_first), mean pooling over the non-padded positions and nn.Dense.
Model.train trains it with LossMonitor; the program prints the test accuracy
before and after training.
"""
import argparse

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn, ops, Parameter
from msrt.common.initializer import Normal, initializer
from msrt.train import LossMonitor, Model

VOCAB_SIZE = 32
SEQ_LEN = 16
NUM_CLASSES = 4


def make_sequences(num, seed):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(NUM_CLASSES + 1, VOCAB_SIZE, (num, SEQ_LEN)).astype(np.int32)
    labels = rng.integers(0, NUM_CLASSES, num).astype(np.int32)
    tokens[np.arange(num), rng.integers(0, SEQ_LEN, num)] = labels + 1
    return tokens, labels


def create_dataset(num, batch_size, seed, shuffle):
    tokens, labels = make_sequences(num, seed)
    dataset = ds.NumpySlicesDataset((tokens, labels), column_names=["tokens", "label"], shuffle=shuffle)
    return dataset.batch(batch_size)


class TransformerClassifier(nn.Cell):
    def __init__(self, vocab_size, d_model, nhead, num_layers, num_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.position = Parameter(initializer(Normal(0.02), (1, SEQ_LEN, d_model), ms.float32), name="position")
        encoder_layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=nhead, dim_feedforward=2 * d_model,
                                                   dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, num_layers=num_layers)
        self.fc = nn.Dense(d_model, num_classes)

    def construct(self, tokens):
        x = self.embedding(tokens) + self.position
        x = self.encoder(x)
        x = ops.mean(x, axis=1)
        return self.fc(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("graph", "pynative"), default="pynative")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(1)

    train_dataset = create_dataset(1024, 32, seed=0, shuffle=True)
    test_dataset = create_dataset(256, 64, seed=1, shuffle=False)

    net = TransformerClassifier(VOCAB_SIZE, d_model=32, nhead=4, num_layers=2, num_classes=NUM_CLASSES)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=0.003, weight_decay=0.01)
    model = Model(net, loss_fn, optimizer, metrics={"accuracy"})

    before = model.eval(test_dataset)["accuracy"]
    model.train(args.epochs, train_dataset, callbacks=[LossMonitor(train_dataset.get_dataset_size())])
    after = model.eval(test_dataset)["accuracy"]
    print(f"test accuracy before training: {before:.4f}")
    print(f"test accuracy after training: {after:.4f}")


if __name__ == "__main__":
    main()
