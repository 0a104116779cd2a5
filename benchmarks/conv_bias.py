"""Convolution + bias + ReLU in GRAPH_MODE: conv2d then bias_add as one conv2d_bias primitive with the ReLU as
its post-op (the fuse_pairs pass, Note [Fused pairs]) against the same graph without fuse_pairs (conv2d, then
bias_add with the ReLU), in alternating rounds in one process; medians and ranges of the rounds' medians. The
networks have biased convolutions (PyTorch's nn.Conv2d default; MindSpore's is without): LeNet-5 and a CIFAR stem
of four 3x3 conv + bias + ReLU layers. msrt on 2 threads.

    .venv/bin/python benchmarks/conv_bias.py [--quick]
"""
import argparse
import statistics
import sys

import numpy as np

import peers


def build_nets(ms, nn):
    class LeNetBias(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True)
            self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=True)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120)
            self.fc2 = nn.Dense(120, 84)
            self.fc3 = nn.Dense(84, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            x = self.relu(self.fc1(self.flatten(x)))
            return self.fc3(self.relu(self.fc2(x)))

    class Stem(nn.Cell):
        def __init__(self):
            super().__init__()
            layers = []
            for cin, cout, stride in ((3, 32, 1), (32, 32, 1), (32, 64, 2), (64, 64, 1)):
                layers += [nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1, has_bias=True),
                           nn.ReLU()]
            self.body = nn.SequentialCell(layers)
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(64 * 16 * 16, 10)

        def construct(self, x):
            return self.fc(self.flatten(self.body(x)))

    return {"lenet-bias": (LeNetBias, (1, 32, 32)), "cifar-stem": (Stem, (3, 32, 32))}


def session(ms, nn, make, shape, batch, phase, flags):
    """A callable running one training step or inference call compiled with graph_kernel_flags `flags`."""
    ms.set_context(graph_kernel_flags=flags)
    ms.set_seed(1)
    net = make()
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((batch,) + shape).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))
    if phase == "train":
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                                   nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9))
        step.set_train()
        fn = step

        def run():
            return step(x, y).asnumpy()
    else:
        net.set_train(False)
        fn = ms.jit(net.construct)

        def run():
            return fn(x).asnumpy()

    def call():
        ms.set_context(graph_kernel_flags=flags)
        return run()

    call()
    report = ms._jit.compile_report(fn)[-1]
    return call, report["fused_pairs"], report["fused_epilogues"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    import msrt as ms
    from msrt import nn

    rounds, reps = (2, 5) if args.quick else (args.rounds, 30)
    ms.set_context(mode=ms.GRAPH_MODE, runtime_num_threads=2)
    print("conv + bias + ReLU, GRAPH_MODE, float32, 2 threads: fused (conv2d_bias + ReLU post-op) against "
          "--disable_pass=fuse_pairs; median ms of each round, median [range] over rounds")
    print(f"msrt: {peers.msrt_description()}")
    cases = [("lenet-bias", "train", 32), ("lenet-bias", "train", 256), ("lenet-bias", "infer", 1),
             ("lenet-bias", "infer", 256), ("cifar-stem", "train", 32), ("cifar-stem", "infer", 1),
             ("cifar-stem", "infer", 32)]
    nets = build_nets(ms, nn)
    print(f"{'network':>10} {'phase':>5} {'batch':>5} | {'unfused ms':>22} | {'fused ms':>22} | "
          f"{'fused/unfused':>13} | pairs, epilogues")
    for name, phase, batch in cases:
        make, shape = nets[name]
        fused, pairs, epilogues = session(ms, nn, make, shape, batch, phase, "")
        plain, plain_pairs, plain_epilogues = session(ms, nn, make, shape, batch, phase,
                                                      "--disable_pass=fuse_pairs")
        times = {"fused": [], "plain": []}
        for _ in range(rounds):
            times["plain"].append(peers.median_ms(plain, reps))
            times["fused"].append(peers.median_ms(fused, reps))

        def show(ts):
            return f"{statistics.median(ts):7.3f} [{min(ts):6.3f}-{max(ts):6.3f}]"

        ratio = statistics.median(times["fused"]) / statistics.median(times["plain"])
        print(f"{name:>10} {phase:>5} {batch:>5} | {show(times['plain']):>22} | {show(times['fused']):>22} | "
              f"{ratio:13.2f} | {pairs}, {epilogues} (unfused: {plain_pairs}, {plain_epilogues})", flush=True)
    ms.set_context(graph_kernel_flags="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
