"""LeNet-5 training-step time: msrt GRAPH_MODE and PYNATIVE_MODE vs PyTorch
eager and TorchScript, same run.

A step is forward + backward + optimizer update (Momentum 0.9) with
SoftmaxCrossEntropy, at batch 1, 32 and 256 on 32x32 inputs, with 2 threads
for msrt (ms.set_context(runtime_num_threads=2)); PyTorch runs in its own process with its
thread defaults on OpenBLAS's OpenMP build (peers.py).
Times are medians of single steps, each waited for to the end (msrt runs
PYNATIVE ops asynchronously, so a step's time includes waiting for its last
kernel). In GRAPH_MODE the step is one compiled graph (compiled before timing;
the compile time is printed); TorchScript scripts the network's forward. The
"NCHW" column is GRAPH_MODE with the channels-last pass off
(graph_kernel_flags="--disable_pass=channels_last"): what the layout pass gains.

Also the per-op dispatch overhead: a chain of 1000 dependent `x + y` on
2x2 float32 tensors, in microseconds per op (msrt waits once at the end).

    .venv/bin/python benchmarks/lenet_step.py [--quick]
"""
import argparse
import os
import statistics
import sys
import time

# msrt's OpenMP workers wait passively in this process; PyTorch runs in its
# own process with its own defaults on OpenBLAS's OpenMP build (peers.py).
import peers  # noqa: E402

peers.msrt_process()

import numpy as np  # noqa: E402
from peers import torch_lenet5  # noqa: E402


def _median_time(fn, reps, rounds=1):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- msrt ---------------------------------------------------------------------------------
def msrt_setup(batch, mode="pynative"):
    import msrt as ms
    from msrt import nn
    from msrt.examples.lenet import LeNet5

    ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE, device_target="CPU",
                   runtime_num_threads=2,
                   graph_kernel_flags="--disable_pass=channels_last" if mode == "graph-nchw" else "")
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

    return step


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
def torch_setup(batch, script=False):
    import torch
    from torch import nn

    torch.manual_seed(0)

    net = torch_lenet5()
    if script:
        net = torch.jit.script(net)
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

    return step


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


def torch_step_seconds(batch, reps, script):
    """Median seconds of a PyTorch training step (run in the peer's process)."""
    return measure(lambda b: torch_setup(b, script=script), batch, reps)[0]


def torch_chain_us(n, reps):
    chain = torch_add_chain(n)
    for _ in range(3):
        chain()
    return _median_time(chain, reps) / n * 1e6


def measure(setup, batch, reps, warmup=5):
    step = setup(batch)
    start = time.perf_counter()
    step()  # GRAPH_MODE compiles here
    first = time.perf_counter() - start
    for _ in range(warmup):
        step()
    return _median_time(step, reps), first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401 - only whether the peer is installed
    except ImportError:
        print("PyTorch is not installed (Debian: apt install python3-torch); nothing to compare with.")
        return 1
    import msrt as ms

    scale = 0.25 if args.quick else 1.0
    plan = {1: 300, 32: 80, 256: 20}
    print(f"LeNet-5 training step (forward + backward + Momentum update), median ms; msrt {ms.__version__} "
          f"(2 threads, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}); peer: {peers.peer_description()}")
    ms.set_context(runtime_num_threads=2)
    print(f"msrt: {peers.msrt_description()}")
    print(f"{'batch':>5} | {'GRAPH':>8} {'NCHW':>8} {'PYNATIVE':>8} {'torch':>8} {'script':>8} | "
          f"{'G/torch':>7} {'G/PYN':>6} {'G/script':>8} {'G/NCHW':>6} | first GRAPH call (compile + run)")
    for batch, reps in plan.items():
        reps = max(int(reps * scale), 5)
        graph, first = measure(lambda b: msrt_setup(b, "graph"), batch, reps)
        nchw, _ = measure(lambda b: msrt_setup(b, "graph-nchw"), batch, reps)
        pynative, _ = measure(msrt_setup, batch, reps)
        eager = peers.in_peer(torch_step_seconds, batch, reps, False)
        script = peers.in_peer(torch_step_seconds, batch, reps, True)
        print(f"{batch:>5} | {graph * 1e3:8.3f} {nchw * 1e3:8.3f} {pynative * 1e3:8.3f} {eager * 1e3:8.3f} "
              f"{script * 1e3:8.3f} | {graph / eager:7.2f} {graph / pynative:6.2f} {graph / script:8.2f} "
              f"{graph / nchw:6.2f} | {first * 1e3:.1f} ms", flush=True)
    print("ratio = msrt GRAPH time / other time (below 1: msrt GRAPH is faster)")

    n = 1000
    m_chain = msrt_add_chain(n)
    for _ in range(3):
        m_chain()
    reps = max(int(20 * scale), 5)
    m_us = _median_time(m_chain, reps) / n * 1e6
    t_us = peers.in_peer(torch_chain_us, n, reps)
    print(f"\nPer-op dispatch overhead (chain of {n} dependent adds on 2x2 float32): "
          f"msrt {m_us:.2f} us/op, torch {t_us:.2f} us/op, ratio {m_us / t_us:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
