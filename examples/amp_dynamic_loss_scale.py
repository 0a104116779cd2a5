"""Mixed-precision (O2) training with a dynamic loss scale, written as a
MindSpore script would be: only the import differs.

    .venv/bin/python examples/amp_dynamic_loss_scale.py [--mode graph|pynative] [--epochs N]

A small MLP with BatchNorm learns a synthetic regression. O2 computes it in
float16 (BatchNorm in float32); the DynamicLossScaleManager starts at 2**16,
drops the steps whose scaled gradients overflow float16 and halves the scale
after each, and doubles it after `scale_window` good steps.
"""
import argparse
import warnings

import numpy as np

import msrt as ms
import msrt.dataset as ds
from msrt import nn
from msrt.amp import DynamicLossScaleManager
from msrt.train import Callback, Model


class Regressor(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(16, 64)
        self.bn = nn.BatchNorm1d(64)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(64, 1)

    def construct(self, x):
        return self.fc2(self.relu(self.bn(self.fc1(x))))


def make_data(n=2048, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 16)).astype(np.float32)
    w = rng.standard_normal((16, 1)).astype(np.float32)
    y = np.tanh(x @ w).astype(np.float32)
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(64)


class ScaleMonitor(Callback):
    """Prints the loss, whether the step overflowed, and the loss scale it used."""

    def __init__(self):
        self.overflows = 0
        self.losses = []
        self.scale = None

    def on_train_step_end(self, run_context):
        loss, overflow, scale = run_context.original_args().net_outputs
        self.overflows += bool(overflow.asnumpy())
        self.losses.append(float(loss.asnumpy()))
        self.scale = float(scale.asnumpy())

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        print(f"epoch {cb.cur_epoch_num}: mean loss {np.mean(self.losses):.4f}, loss scale {self.scale:g}, "
              f"dropped steps so far {self.overflows}")
        self.losses = []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_seed(1)

    net = Regressor()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    manager = DynamicLossScaleManager(init_loss_scale=2 ** 16, scale_factor=2, scale_window=50)
    model = Model(net, nn.MSELoss(), opt, amp_level="O2", loss_scale_manager=manager)
    monitor = ScaleMonitor()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 kernels computed through float32 on this CPU
        model.train(args.epochs, make_data(), callbacks=[monitor])
    print(f"first layer computes in {net.fc1._amp_dtype}, BatchNorm in {net.bn._amp_dtype}, "
          f"master weights {net.fc1.weight.dtype}")


if __name__ == "__main__":
    main()
