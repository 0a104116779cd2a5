"""LeNet-5 training-step time: msrt PYNATIVE vs PyTorch eager, same run.

A step is forward + backward + optimizer update (Momentum 0.9) with
SoftmaxCrossEntropy, at batch 1, 32 and 256 on 32x32 inputs, with 2 threads
on both sides (ms.set_context(runtime_num_threads=2), torch.set_num_threads(2)).

- "step": median of single steps, each waited for to the end (msrt runs ops
  asynchronously, so a step's time includes waiting for its last kernel);
- "pipelined": mean over a run of steps with one wait at the end (how a
  training loop without per-step loss reads runs).

Also the per-op dispatch overhead: a chain of 1000 dependent `x + y` on
2x2 float32 tensors, in microseconds per op (msrt waits once at the end).

    .venv/bin/python benchmarks/lenet_step.py [--quick]
"""
import argparse
import os
import statistics
import sys
import time

# Both libraries run their kernels on OpenMP (libgomp) in this process. Workers
# that spin between parallel regions starve msrt's Python and dispatcher
# threads on a 2-core machine (and any busy one), so they wait passively,
# for both peers alike, unless the caller chose a policy. Set before either
# library loads libgomp.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402


def _median_time(fn, reps, rounds=1):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- msrt ---------------------------------------------------------------------------------
def msrt_setup(batch):
    import msrt as ms
    from msrt import nn
    from msrt.examples.lenet import LeNet5

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", runtime_num_threads=2)
    ms.set_seed(0)
    net = LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    train.set_train()
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((batch, 1, 32, 32)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))

    def step():
        train(x, y).asnumpy()  # waits for the step's kernels

    def pipelined(n):
        for _ in range(n):
            out = train(x, y)
        out.asnumpy()

    return step, pipelined


def msrt_add_chain(n):
    import msrt as ms

    x = ms.Tensor(np.ones((2, 2), np.float32))
    y = ms.Tensor(np.full((2, 2), 1e-3, np.float32))

    def run():
        z = x
        for _ in range(n):
            z = z + y
        z.asnumpy()

    return run


# --- PyTorch ------------------------------------------------------------------------------------
def torch_setup(batch):
    import torch
    from torch import nn

    torch.set_num_threads(2)
    torch.manual_seed(0)

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, bias=False)
            self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
            self.pool = nn.MaxPool2d(2, 2)
            self.fc1 = nn.Linear(400, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.conv1(x)))
            x = self.pool(torch.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))

    net = LeNet5()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((batch, 1, 32, 32)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, batch).astype(np.int64))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        loss.item()

    def pipelined(n):
        for _ in range(n):
            step()

    return step, pipelined


def torch_add_chain(n):
    import torch

    x = torch.ones((2, 2))
    y = torch.full((2, 2), 1e-3)

    def run():
        z = x
        for _ in range(n):
            z = z + y
        z.numpy()

    return run


def measure(setup, batch, reps, pipeline_steps, warmup=5):
    step, pipelined = setup(batch)
    for _ in range(warmup):
        step()
    step_time = _median_time(step, reps)
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        pipelined(pipeline_steps)
        runs.append((time.perf_counter() - start) / pipeline_steps)
    return step_time, min(runs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed (Debian: apt install python3-torch); nothing to compare with.")
        return 1
    import msrt as ms

    scale = 0.25 if args.quick else 1.0
    plan = {1: (200, 200), 32: (60, 60), 256: (15, 10)}
    print(f"LeNet-5 training step (forward + backward + Momentum update), 2 threads; "
          f"msrt {ms.__version__} PYNATIVE vs PyTorch {torch.__version__} eager; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    print(f"{'batch':>5} | {'msrt step':>10} {'torch step':>10} {'ratio':>6} | "
          f"{'msrt pipe':>10} {'torch pipe':>10} {'ratio':>6}")
    rows = []
    for batch, (reps, pipe) in plan.items():
        reps, pipe = max(int(reps * scale), 5), max(int(pipe * scale), 3)
        m_step, m_pipe = measure(msrt_setup, batch, reps, pipe)
        t_step, t_pipe = measure(torch_setup, batch, reps, pipe)
        rows.append((batch, m_step, t_step, m_pipe, t_pipe))
        print(f"{batch:>5} | {m_step * 1e3:8.3f}ms {t_step * 1e3:8.3f}ms {m_step / t_step:6.2f} | "
              f"{m_pipe * 1e3:8.3f}ms {t_pipe * 1e3:8.3f}ms {m_pipe / t_pipe:6.2f}", flush=True)
    print("ratio = msrt time / torch time (below 1: msrt is faster)")

    n = 1000
    m_chain = msrt_add_chain(n)
    t_chain = torch_add_chain(n)
    for _ in range(3):
        m_chain()
        t_chain()
    reps = max(int(20 * scale), 5)
    m_us = _median_time(m_chain, reps) / n * 1e6
    t_us = _median_time(t_chain, reps) / n * 1e6
    print(f"\nPer-op dispatch overhead (chain of {n} dependent adds on 2x2 float32): "
          f"msrt {m_us:.2f} us/op, torch {t_us:.2f} us/op, ratio {m_us / t_us:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
