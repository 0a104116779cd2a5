"""A CIFAR ResNet (three stages of basic blocks with BatchNorm, as
examples/cifar10_resnet.py builds it): one training step (momentum SGD) and
one inference, msrt in GRAPH and PYNATIVE, PyTorch eager on the same network
in its own process (OpenBLAS's OpenMP build, its own thread defaults:
peers.py). msrt on 2 threads. Each configuration is timed in rounds that
alternate between msrt's modes; the figures are medians. The layout
conversions (transposes) the GRAPH step's channels-last pass added are
printed too.

    .venv/bin/python benchmarks/batchnorm.py [--quick] [--batch 32]
"""
import argparse
import statistics
import sys
import time

import peers

peers.msrt_process()  # before NumPy, which may load libgomp (OpenBLAS's OpenMP build)
import numpy as np  # noqa: E402


def data(batch):
    rng = np.random.default_rng(batch)
    return (rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
            rng.integers(0, 10, batch).astype(np.int32))


def timed(fn, reps):
    """Wall-clock and process CPU seconds of each of `reps` calls."""
    times = []
    for _ in range(reps):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    return times


def medians_ms(times):
    return [statistics.median(t[i] for t in times) * 1e3 for i in (0, 1)]


def msrt_resnet():
    from msrt import nn

    class Block(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride)
            self.norm1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3)
            self.norm2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride=stride), nn.BatchNorm2d(cout)])

        def construct(self, x):
            identity = x if self.down is None else self.down(x)
            out = self.relu(self.norm1(self.conv1(x)))
            out = self.norm2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3)
            self.norm = nn.BatchNorm2d(16)
            self.relu = nn.ReLU()
            self.layers = nn.SequentialCell([Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2)])
            self.pool = nn.AvgPool2d(kernel_size=8)
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(64, 10)

        def construct(self, x):
            x = self.layers(self.relu(self.norm(self.conv1(x))))
            return self.fc(self.flatten(self.pool(x)))

    return ResNet()


def torch_resnet():
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.norm1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.norm2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.down is None else self.down(x)
            out = torch.relu(self.norm1(self.conv1(x)))
            out = self.norm2(self.conv2(out))
            return torch.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
            self.norm = nn.BatchNorm2d(16)
            self.layers = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
            self.pool = nn.AvgPool2d(8)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = self.layers(torch.relu(self.norm(self.conv1(x))))
            return self.fc(torch.flatten(self.pool(x), 1))

    return ResNet()


def torch_times(batch, reps, rounds):
    """Median ms (wall, CPU) of PyTorch eager's training step and inference (peers.in_peer)."""
    import torch

    net = torch_resnet()
    x, y = (torch.from_numpy(a) for a in data(batch))
    y = y.long()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    def infer():
        with torch.no_grad():
            return net(x).numpy()

    train, inference = [], []
    for _ in range(rounds):
        net.train()
        step()
        train += timed(step, reps)
        net.eval()
        infer()
        inference += timed(infer, reps)
    return medians_ms(train), medians_ms(inference)


def msrt_times(batch, reps, rounds):
    import msrt as ms
    from msrt import nn

    x, y = (ms.Tensor(a) for a in data(batch))
    steps, infers, conversions = {}, {}, None
    for mode in (ms.GRAPH_MODE, ms.PYNATIVE_MODE):
        ms.set_context(mode=mode)
        net = msrt_resnet()
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
        step = nn.TrainOneStepCell(loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
        step.set_train()
        steps[mode] = step
        eval_net = msrt_resnet()
        eval_net.set_train(False)
        infers[mode] = eval_net
    train = {m: [] for m in steps}
    inference = {m: [] for m in steps}
    for _ in range(rounds):
        for mode in steps:
            ms.set_context(mode=mode)
            steps[mode](x, y).asnumpy()
            train[mode] += timed(lambda: steps[mode](x, y).asnumpy(), reps)
            infers[mode](x).asnumpy()
            inference[mode] += timed(lambda: infers[mode](x).asnumpy(), reps)
            if mode == ms.GRAPH_MODE and conversions is None:
                conversions = ms._jit.compile_report(steps[mode])[-1]["layout_conversions"]
    med = {m: (medians_ms(train[m]), medians_ms(inference[m])) for m in steps}
    return med[ms.GRAPH_MODE], med[ms.PYNATIVE_MODE], conversions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--batch", type=int, nargs="*", default=[32])
    args = parser.parse_args(argv)
    import msrt as ms

    ms.set_context(runtime_num_threads=2, device_target="CPU")
    reps, rounds = (3, 2) if args.quick else (5, 4)
    print("CIFAR ResNet (3 stages of basic blocks, BatchNorm), float32, msrt on 2 threads; median ms")
    try:
        import torch  # noqa: F401  (measured in the peer's process: peers.in_peer)
        have_torch = True
        print("peer:", peers.peer_description())
    except ImportError:
        have_torch = False
    print("wall ms (process CPU ms); the machine may be shared: CPU time shows the work when wall time is noisy")
    print(f"{'batch':>5} | {'':10} {'GRAPH':>15} {'PYNATIVE':>15} {'torch':>15} | {'GRAPH/t':>7} {'PYNAT/t':>7} | "
          f"transposes (GRAPH step)")
    for batch in args.batch:
        graph, pynative, conversions = msrt_times(batch, reps, rounds)
        nan = [float("nan")] * 2
        peer = peers.in_peer(torch_times, batch, reps, rounds) if have_torch else (nan, nan)
        for i, what in enumerate(("train step", "inference")):
            cells = " ".join(f"{t[i][0]:7.2f} ({t[i][1]:5.1f})" for t in (graph, pynative, peer))
            ratios = f"{graph[i][0] / peer[i][0]:7.2f} {pynative[i][0] / peer[i][0]:7.2f}"
            print(f"{batch:>5} | {what:10} {cells} | {ratios} | {conversions if i == 0 else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
