"""Mixed precision on LeNet-5: step time and accuracy of msrt at amp_level
O0 / O2 / O3 (float16 and bfloat16) against PyTorch float32 and
torch.autocast("cpu", bfloat16), same run, same data and step count.

Data: Fashion-MNIST from /usr/share/datasets/fashion-mnist (28x28 padded to
32x32), batch 32, Momentum(0.01, 0.9), `--steps` training steps (default
300), accuracy on the first 2000 test images (evaluated in float32 on the
PyTorch side, in the trained network's precision on msrt's). Step times are
medians after 10 warm-up steps; msrt on 2 threads, PyTorch in its own
process on OpenBLAS's OpenMP build with its own thread defaults (peers.py).

On CPUs without AVX-512 oneDNN has no bfloat16 (nor float16) convolution or
matmul: msrt then computes those in float32 and rounds to the low precision
(enable_reduce_precision), so low precision costs conversions rather than
saving time; the printed ISA line says which case ran.

    .venv/bin/python benchmarks/amp.py [--steps N] [--mode pynative|graph]
"""
import argparse
import gzip
import os
import statistics
import time
import warnings

import numpy as np

import peers

DATA = "/usr/share/datasets/fashion-mnist"


def load(kind, limit):
    with gzip.open(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)[:limit]
    with gzip.open(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)[:limit]
    x = np.zeros((len(images), 1, 32, 32), np.float32)
    x[:, 0, 2:30, 2:30] = (images.astype(np.float32) / 255.0 - 0.2860) / 0.3530
    return x, labels.astype(np.int32)


def batches(x, y, steps, batch=32):
    n = len(x) // batch
    for i in range(steps):
        j = i % n
        yield x[j * batch:(j + 1) * batch], y[j * batch:(j + 1) * batch]


def run_msrt(level, dtype_name, train, test, steps, mode):
    import msrt as ms
    from msrt import amp, nn
    from msrt.examples.lenet import LeNet5

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE, runtime_num_threads=2)
    ms.set_seed(0)
    net = LeNet5()
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = amp.build_train_network(net, opt, loss, level=level, dtype=getattr(ms, dtype_name))
    step.set_train()
    times = []
    for i, (xb, yb) in enumerate(batches(*train, steps)):
        x, y = ms.Tensor(xb), ms.Tensor(yb)
        start = time.perf_counter()
        out = step(x, y)  # the loss, or (loss, overflow, scale) from a loss-scaling step
        (out[0] if isinstance(out, tuple) else out).asnumpy()
        if i >= 10:
            times.append(time.perf_counter() - start)
    net.set_train(False)
    correct = 0
    for i in range(0, len(test[0]), 500):
        out = net(ms.Tensor(test[0][i:i + 500])).astype(ms.float32).asnumpy()
        correct += int((out.argmax(1) == test[1][i:i + 500]).sum())
    return statistics.median(times), correct / len(test[0])


def run_torch(autocast, steps):
    """PyTorch's median step time and accuracy, run by peers.in_peer (its own process and settings)."""
    import torch
    from torch import nn

    train, test = load("train", steps * 32), load("t10k", 2000)
    torch.manual_seed(0)

    net = peers.torch_lenet5()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i, (xb, yb) in enumerate(batches(*train, steps)):
        x, y = torch.from_numpy(xb), torch.from_numpy(yb.astype(np.int64))
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = loss_fn(net(x).float(), y)
        loss.backward()
        opt.step()
        loss.item()
        if i >= 10:
            times.append(time.perf_counter() - start)
    with torch.no_grad():
        out = net(torch.from_numpy(test[0])).numpy()
    return statistics.median(times), float((out.argmax(1) == test[1]).mean())


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return "unknown"
    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "avx512_fp16")
    return " ".join(w for w in wanted if w in flags) or "no AVX2/AVX-512"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--mode", choices=["pynative", "graph"], default="pynative")
    args = parser.parse_args()
    train = load("train", args.steps * 32)
    test = load("t10k", 2000)
    warnings.simplefilter("ignore")  # the one-time reduced-precision warnings

    print(f"LeNet-5, Fashion-MNIST, batch 32, {args.steps} steps, msrt {args.mode} mode; CPU flags: {cpu_flags()}")
    import msrt as ms

    ms.set_context(runtime_num_threads=2)
    print(f"msrt: {peers.msrt_description()}")
    print(f"peer: {peers.peer_description()}")
    torch_fp32 = peers.in_peer(run_torch, False, args.steps)
    torch_bf16 = peers.in_peer(run_torch, True, args.steps)
    rows = [("torch float32", *torch_fp32, None), ("torch autocast bf16", *torch_bf16, None)]
    for level, dtype in (("O0", "float16"), ("O2", "float16"), ("O3", "float16"), ("O2", "bfloat16"),
                         ("O3", "bfloat16")):
        t, acc = run_msrt(level, dtype, train, test, args.steps, args.mode)
        peer = torch_fp32 if level == "O0" else torch_bf16
        rows.append((f"msrt {level}" + ("" if level == "O0" else f" {dtype}"), t, acc, t / peer[0]))
    base_t, base_acc = rows[2][1], rows[2][2]
    print(f"{'run':24s} {'step ms':>8s} {'vs O0':>7s} {'acc':>6s} {'d acc':>7s} {'vs torch':>9s}")
    for name, t, acc, ratio in rows:
        vs = "" if ratio is None else f"{ratio:8.2f}x"
        print(f"{name:24s} {t * 1e3:8.2f} {t / base_t:6.2f}x {acc:6.3f} {acc - base_acc:+7.3f} {vs:>9s}")
    print("vs torch: msrt O0 against torch float32, msrt O2/O3 against torch autocast bf16 (time ratio).")


if __name__ == "__main__":
    main()
