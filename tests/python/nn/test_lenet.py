"""LeNet-5 as the model zoo defines it (msrt.examples.lenet)."""
import numpy as np

import msrt as ms
from msrt.examples.lenet import LeNet5, parse_args


def test_lenet_structure_names_and_init():
    ms.set_seed(0)
    net = LeNet5()
    shapes = {p.name: tuple(p.shape) for p in net.trainable_params()}
    assert shapes == {
        "conv1.weight": (6, 1, 5, 5), "conv2.weight": (16, 6, 5, 5),
        "fc1.weight": (120, 400), "fc1.bias": (120,), "fc2.weight": (84, 120), "fc2.bias": (84,),
        "fc3.weight": (10, 84), "fc3.bias": (10,),
    }
    assert abs(net.fc1.weight.asnumpy().std() - 0.02) < 0.002
    out = net(ms.Tensor(np.zeros((2, 1, 32, 32), np.float32)))
    assert out.shape == (2, 10)
    assert LeNet5(include_top=False)(ms.Tensor(np.zeros((1, 1, 32, 32), np.float32))).shape == (1, 16, 5, 5)


def test_lenet_command_line():
    args = parse_args(["--mode", "graph", "--epochs", "2", "--data-dir", "/tmp/x", "--batch-size", "64"])
    assert (args.mode, args.epochs, args.data_dir, args.batch_size) == ("graph", 2, "/tmp/x", 64)
    assert parse_args([]).epochs == 3
