"""An encoder-decoder nn.Transformer that learns to reverse sequences, written as a
MindSpore script would be: only the import differs.

    .venv/bin/python examples/transformer_reverse.py [--epochs N] [--summary_dir DIR]

Sources are 8 tokens over the digits 3-12; the target is the source reversed,
fed to the decoder after a start token (1) under a causal tgt_mask (teacher
forcing). Model.train trains it with a SummaryCollector recording the loss,
the parameter histograms of the first encoder layer and, through
ops.ScalarSummary inside the network, the share of target tokens predicted
right. The program prints the token accuracy on held-out sequences before and
after training, decodes two of them greedily, and reads the summary back.
"""
import argparse
import os
import tempfile

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import Parameter, nn, ops
from msrt.common.initializer import Normal, initializer
from msrt.train import LossMonitor, Model, SummaryCollector
from msrt.train.summary import read_scalars, read_values

SEQ_LEN = 8
VOCAB = 13  # 0 pad, 1 start, 2 unused, 3-12 digits
START = 1


def make_pairs(num, seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(3, VOCAB, (num, SEQ_LEN)).astype(np.int32)
    tgt = src[:, ::-1].copy()
    tgt_in = np.concatenate([np.full((num, 1), START, np.int32), tgt[:, :-1]], axis=1)
    return src, tgt_in, tgt


def create_dataset(num, batch_size, seed, shuffle):
    src, tgt_in, tgt = make_pairs(num, seed)
    return ds.NumpySlicesDataset((src, tgt_in, tgt), ["src", "tgt_in", "tgt"], shuffle=shuffle).batch(batch_size)


class Reverser(nn.Cell):
    def __init__(self, d_model=32, nhead=4):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, d_model)
        self.position = Parameter(initializer(Normal(0.1), (1, SEQ_LEN, d_model), ms.float32), name="position")
        self.transformer = nn.Transformer(d_model=d_model, nhead=nhead, num_encoder_layers=2, num_decoder_layers=2,
                                          dim_feedforward=64, dropout=0.0, batch_first=True)
        self.head = nn.Dense(d_model, VOCAB)
        causal = np.triu(np.full((SEQ_LEN, SEQ_LEN), -1e9, np.float32), 1)
        self.tgt_mask = ms.Tensor(causal)

    def construct(self, src, tgt_in):
        x = self.embedding(src) + self.position
        y = self.embedding(tgt_in) + self.position
        return self.head(self.transformer(x, y, tgt_mask=self.tgt_mask))


class WithLoss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss = nn.CrossEntropyLoss()
        self.accuracy = ops.ScalarSummary()

    def construct(self, src, tgt_in, tgt):
        logits = self.net(src, tgt_in)
        right = ops.cast(ops.equal(logits.argmax(-1), tgt), ms.float32).mean()
        self.accuracy("token_accuracy", right)
        return self.loss(logits.reshape(-1, VOCAB), tgt.reshape(-1))


def token_accuracy(net, dataset):
    right = total = 0
    for src, tgt_in, tgt in dataset.create_tuple_iterator():
        pred = net(src, tgt_in).argmax(-1).asnumpy()
        right += int((pred == tgt.asnumpy()).sum())
        total += pred.size
    return right / total


def greedy_decode(net, src):
    """One token at a time: the decoder sees the tokens decoded so far (padded, masked causally)."""
    tokens = np.zeros((src.shape[0], SEQ_LEN), np.int32)
    tokens[:, 0] = START
    out = np.zeros_like(tokens)
    for i in range(SEQ_LEN):
        logits = net(ms.Tensor(src), ms.Tensor(tokens)).asnumpy()
        out[:, i] = logits[:, i].argmax(-1)
        if i + 1 < SEQ_LEN:
            tokens[:, i + 1] = out[:, i]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--summary_dir", default=None)
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(3)
    summary_dir = args.summary_dir or tempfile.mkdtemp(prefix="transformer_reverse_")

    train_dataset = create_dataset(2048, 32, seed=0, shuffle=True)
    test_dataset = create_dataset(256, 64, seed=1, shuffle=False)
    net = Reverser()
    model = Model(WithLoss(net), optimizer=nn.Adam(net.trainable_params(), learning_rate=0.002))
    collector = SummaryCollector(summary_dir, collect_freq=16,
                                 collect_specified_data={"collect_input_data": False,
                                                         "histogram_regular": "^net.transformer.encoder.layers.0"})

    before = token_accuracy(net, test_dataset)
    model.train(args.epochs, train_dataset,
                callbacks=[LossMonitor(train_dataset.get_dataset_size()), collector])
    net.set_train(False)
    after = token_accuracy(net, test_dataset)
    print(f"token accuracy before training: {before:.4f}")
    print(f"token accuracy after training: {after:.4f}")
    src, _, tgt = make_pairs(2, seed=7)
    for s, t, d in zip(src, tgt, greedy_decode(net, src)):
        print(f"source {s.tolist()} -> decoded {d.tolist()} (expected {t.tolist()})")

    path = os.path.join(summary_dir, sorted(os.listdir(summary_dir))[-1])
    scalars = read_scalars(path)
    accuracy = scalars["token_accuracy"]
    print(f"summary: {len(scalars['loss'])} loss values, token accuracy {accuracy[0][1]:.3f} at step "
          f"{accuracy[0][0]} -> {accuracy[-1][1]:.3f} at step {accuracy[-1][0]}")
    histograms = read_values(path, "histogram")
    print(f"summary: histograms of {len(histograms)} parameters, e.g. {sorted(histograms)[0]}")


if __name__ == "__main__":
    main()
