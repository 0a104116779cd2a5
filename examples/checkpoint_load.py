"""Saving and loading a MindSpore-format checkpoint, as MindSpore's "Save and
Load" tutorial does: only the import differs.

    .venv/bin/python examples/checkpoint_load.py [--ckpt_path model.ckpt]

A small classifier learns three Gaussian blobs with Model.train; it is saved
with ms.save_checkpoint (MindSpore's .ckpt format), a freshly built network
is evaluated, then loads the file with ms.load_checkpoint and
ms.load_param_into_net and is evaluated again with Model.eval. The program
prints the three accuracies and the parameters that were not loaded.
"""
import argparse

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.train import Model


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(2, 32),
            nn.ReLU(),
            nn.Dense(32, 32),
            nn.ReLU(),
            nn.Dense(32, 3)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


def create_dataset(num, seed, shuffle):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]], np.float32)
    label = rng.integers(0, 3, num).astype(np.int32)
    data = (centres[label] + rng.normal(0, 0.7, (num, 2))).astype(np.float32)
    return ds.NumpySlicesDataset({"data": data, "label": label}, shuffle=shuffle).batch(32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt_path", default="model.ckpt")
    parser.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(1)

    train_dataset = create_dataset(1024, seed=0, shuffle=True)
    test_dataset = create_dataset(256, seed=1, shuffle=False)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    model = Network()
    optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1)
    trainer = Model(model, loss_fn, optimizer, metrics={"accuracy"})
    trainer.train(3, train_dataset)
    trained_acc = trainer.eval(test_dataset)["accuracy"]
    ms.save_checkpoint(model, args.ckpt_path)

    model = Network()
    fresh_acc = Model(model, loss_fn, metrics={"accuracy"}).eval(test_dataset)["accuracy"]
    param_dict = ms.load_checkpoint(args.ckpt_path)
    param_not_load, _ = ms.load_param_into_net(model, param_dict)
    loaded_acc = Model(model, loss_fn, metrics={"accuracy"}).eval(test_dataset)["accuracy"]

    print(f"parameters not loaded: {param_not_load}")
    print(f"accuracy of the trained network: {trained_acc:.4f}")
    print(f"accuracy of a fresh network: {fresh_acc:.4f}")
    print(f"accuracy of the fresh network after loading the checkpoint: {loaded_acc:.4f}")


if __name__ == "__main__":
    main()
