"""An LSTM text classifier, in the style of MindSpore's sentiment
classification tutorial: only the import differs.

    .venv/bin/python examples/lstm_text_classifier.py [--epochs N]

Synthetic "reviews": token sequences over a vocabulary of 100 words, padded
to 24 tokens, where words 10-19 are positive and 20-29 negative; a review is
positive when it has more positive than negative words. nn.Embedding feeds a
bidirectional two-layer nn.LSTM whose last hidden states go through
nn.Dense. Training is MindSpore's functional loop (value_and_grad and the
optimizer); the program prints the loss of each epoch and the test accuracy
before and after training.
"""
import argparse
import math

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn, ops
from msrt.common.initializer import HeUniform, Uniform

VOCAB_SIZE = 100
PAD = 0
MAX_LEN = 24


def make_reviews(num, seed):
    """(token ids num x MAX_LEN int32, labels num float32 in {0, 1})."""
    rng = np.random.default_rng(seed)
    tokens = np.full((num, MAX_LEN), PAD, np.int32)
    labels = np.zeros((num, 1), np.float32)
    for i in range(num):
        length = rng.integers(8, MAX_LEN + 1)
        words = rng.integers(30, VOCAB_SIZE, length)
        n_pos, n_neg = rng.integers(0, 5, 2)
        while n_pos == n_neg:
            n_pos, n_neg = rng.integers(0, 5, 2)
        places = rng.choice(length, n_pos + n_neg, replace=False)
        words[places[:n_pos]] = rng.integers(10, 20, n_pos)
        words[places[n_pos:]] = rng.integers(20, 30, n_neg)
        tokens[i, :length] = words
        labels[i] = float(n_pos > n_neg)
    return tokens, labels


def create_dataset(num, batch_size, seed, shuffle):
    tokens, labels = make_reviews(num, seed)
    dataset = ds.NumpySlicesDataset({"text": tokens, "label": labels}, shuffle=shuffle)
    return dataset.batch(batch_size, drop_remainder=True)


class RNN(nn.Cell):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers, bidirectional, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers, bidirectional=bidirectional,
                           batch_first=True)
        weight_init = HeUniform(math.sqrt(5))
        bias_init = Uniform(1 / math.sqrt(hidden_dim * 2))
        self.fc = nn.Dense(hidden_dim * 2, output_dim, weight_init=weight_init, bias_init=bias_init)

    def construct(self, inputs):
        embedded = self.embedding(inputs)
        _, (hidden, _) = self.rnn(embedded)
        hidden = ops.concat((hidden[-2, :, :], hidden[-1, :, :]), axis=1)
        output = self.fc(hidden)
        return output


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    args = parser.parse_args()
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(1)

    train_dataset = create_dataset(1024, 32, seed=0, shuffle=True)
    test_dataset = create_dataset(256, 32, seed=1, shuffle=False)

    model = RNN(VOCAB_SIZE, embedding_dim=16, hidden_dim=32, output_dim=1, n_layers=2, bidirectional=True,
                pad_idx=PAD)
    loss_fn = nn.BCEWithLogitsLoss(reduction='mean')
    optimizer = nn.Adam(model.trainable_params(), learning_rate=0.01)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        return loss

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)

    def train_step(data, label):
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    def binary_accuracy(preds, y):
        rounded_preds = np.around(ops.sigmoid(preds).asnumpy())
        correct = (rounded_preds == y).astype(np.float32)
        return correct.sum() / len(correct)

    def evaluate(dataset):
        model.set_train(False)
        total_acc = 0
        steps = 0
        for text, label in dataset.create_tuple_iterator():
            total_acc += binary_accuracy(model(text), label.asnumpy())
            steps += 1
        return total_acc / steps

    acc_before = evaluate(test_dataset)
    for epoch in range(args.epochs):
        model.set_train()
        losses = []
        for text, label in train_dataset.create_tuple_iterator():
            losses.append(train_step(text, label).asnumpy())
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f}")
    acc_after = evaluate(test_dataset)
    print(f"test accuracy before training: {acc_before:.4f}")
    print(f"test accuracy after training: {acc_after:.4f}")


if __name__ == "__main__":
    main()
