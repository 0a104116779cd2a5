"""Linear regression, as MindSpore's "Simple Linear Function Fitting" tutorial
writes it: only the import differs.

    .venv/bin/python examples/linear_regression.py [--epochs N]

Points of y = 2x + 3 with Gaussian noise come from a Python generator through
ds.GeneratorDataset; a one-unit nn.Dense learns them with Model.train and
LossMonitor. The program prints the loss before and after training, the
learned weight and bias, and "loss went down" when it did.
"""
import argparse

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.common.initializer import Normal
from msrt.train import LossMonitor, Model


def get_data(num, w=2.0, b=3.0):
    for _ in range(num):
        x = np.random.uniform(-10.0, 10.0)
        noise = np.random.normal(0, 1)
        y = x * w + b + noise
        yield np.array([x]).astype(np.float32), np.array([y]).astype(np.float32)


def create_dataset(num_data, batch_size=16, repeat_size=1):
    input_data = ds.GeneratorDataset(list(get_data(num_data)), column_names=['data', 'label'])
    input_data = input_data.batch(batch_size)
    input_data = input_data.repeat(repeat_size)
    return input_data


class LinearNet(nn.Cell):
    def __init__(self):
        super(LinearNet, self).__init__()
        self.fc = nn.Dense(1, 1, Normal(0.02), Normal(0.02))

    def construct(self, x):
        x = self.fc(x)
        return x


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(1)
    np.random.seed(1)

    ds_train = create_dataset(1600, batch_size=16)
    ds_eval = create_dataset(160, batch_size=16)
    net = LinearNet()
    net_loss = nn.MSELoss()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.005, momentum=0.9)
    model = Model(net, net_loss, opt, metrics={"mse": nn.MSE()})

    before = model.eval(ds_eval, dataset_sink_mode=False)["mse"]
    model.train(args.epochs, ds_train, callbacks=[LossMonitor(50)], dataset_sink_mode=False)
    after = model.eval(ds_eval, dataset_sink_mode=False)["mse"]

    weight = net.trainable_params()[0].asnumpy().item()
    bias = net.trainable_params()[1].asnumpy().item()
    print(f"eval mse before training: {before:.4f}")
    print(f"eval mse after training: {after:.4f}")
    print(f"learned: y = {weight:.4f} * x + {bias:.4f}")
    if after < before:
        print("loss went down")


if __name__ == "__main__":
    main()
