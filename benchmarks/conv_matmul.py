"""conv2d and matmul forward + backward on LeNet-5's shapes: msrt (oneDNN
kernels) against PyTorch (Debian python3-torch) in the same run.

For batch 32 and 256, each layer's forward, gradient w.r.t. the input and
gradient w.r.t. the weights:
- msrt: the ops conv2d / conv2d_backprop_input / conv2d_backprop_filter and
  matmul (with the transposes dense's gradient uses), run where they are
  called (pynative_synchronize=True, as PyTorch runs); --async goes through
  the eager dispatcher thread instead and waits for each call;
- PyTorch: F.conv2d, aten.convolution_backward (what autograd calls) and mm,
  in the standard peer's process (benchmarks/peers.py: OpenBLAS's OpenMP
  build, PyTorch's own thread defaults, no OMP_WAIT_POLICY).
Both run float32; msrt on 2 threads (runtime_num_threads=2). msrt and the
peer take turns layer by layer, each side's figure the median of its rounds.
GFLOP/s are against the machine's peak: cores x 2 FMA units x 8 float32
lanes (AVX2) x 2 flops x clock (from /proc/cpuinfo).

    .venv/bin/python benchmarks/conv_matmul.py [--quick] [--async]
"""
import argparse
import os
import statistics
import subprocess
import time

import peers

peers.msrt_process()  # before NumPy, which may load libgomp (OpenBLAS's OpenMP build)
import numpy as np  # noqa: E402
THREADS = 2


def clock_ghz():
    mhz = []
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz"):
                mhz.append(float(line.split(":")[1]))
    return max(mhz) / 1000 if mhz else float("nan")


def peak_gflops(cores):
    return cores * 2 * 8 * 2 * clock_ghz()  # FMA units x float32 lanes x (mul + add) x GHz


def lenet_layers(batch):
    """(name, kind, x shape, w shape): LeNet-5's convolutions and dense layers."""
    return [
        ("conv1 1->6 5x5 32x32", "conv", (batch, 1, 32, 32), (6, 1, 5, 5)),
        ("conv2 6->16 5x5 14x14", "conv", (batch, 6, 14, 14), (16, 6, 5, 5)),
        ("fc1 400->120", "dense", (batch, 400), (120, 400)),
        ("fc2 120->84", "dense", (batch, 120), (84, 120)),
        ("fc3 84->10", "dense", (batch, 84), (10, 84)),
    ]


def conv_out(x_shape, w_shape):
    return (x_shape[0], w_shape[0], x_shape[2] - w_shape[2] + 1, x_shape[3] - w_shape[3] + 1)


def layer_arrays(kind, x_shape, w_shape, seed):
    """(flops, x, w, dy) for one layer: the same values on both sides."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    if kind == "conv":
        y_shape = conv_out(x_shape, w_shape)
        flops = 2 * np.prod(y_shape) * np.prod(w_shape[1:])
    else:
        y_shape = (x_shape[0], w_shape[0])
        flops = 2 * x_shape[0] * w_shape[0] * w_shape[1]
    return int(flops), x, w, rng.standard_normal(y_shape).astype(np.float32)


PASSES = ("forward", "backward input", "backward weight")


def msrt_layer_ops(kind, x_shape, w_shape, seed):
    """(flops, [msrt callable per pass]) for one layer."""
    import msrt as ms

    native = ms._C
    flops, x, w, dy = layer_arrays(kind, x_shape, w_shape, seed)
    mx, mw, mdy = (native.TensorBase(a) for a in (x, w, dy))

    def msrt_call(op, inputs, op_attrs):
        def run():
            native.call(op, inputs, op_attrs)[0]._sync()
        return run

    if kind == "conv":
        attrs = {"pad_mode": "valid"}
        return flops, [msrt_call("conv2d", [mx, mw], attrs),
                       msrt_call("conv2d_backprop_input", [mdy, mw], dict(attrs, input_shape=list(x_shape))),
                       msrt_call("conv2d_backprop_filter", [mdy, mx], dict(attrs, filter_shape=list(w_shape)))]
    # y = x @ w^T; dx = dy @ w; dw = dy^T @ x
    return flops, [msrt_call("matmul", [mx, mw], {"transpose_b": True}), msrt_call("matmul", [mdy, mw], {}),
                   msrt_call("matmul", [mdy, mx], {"transpose_a": True})]


def torch_layer_times(kind, x_shape, w_shape, seed, rounds):
    """Median seconds per call of each pass in PyTorch (run in the peer's process)."""
    import torch
    import torch.nn.functional as F

    _, x, w, dy = layer_arrays(kind, x_shape, w_shape, seed)
    tx, tw, tdy = (torch.from_numpy(a) for a in (x, w, dy))
    if kind == "conv":
        def backward(mask):
            return lambda: torch.ops.aten.convolution_backward(tdy, tx, tw, None, [1, 1], [0, 0], [1, 1], False,
                                                               [0, 0], 1, mask)
        fns = [lambda: F.conv2d(tx, tw), backward([True, False, False]), backward([False, True, False])]
    else:
        fns = [lambda: torch.mm(tx, tw.t()), lambda: torch.mm(tdy, tw), lambda: torch.mm(tdy.t(), tx)]
    return [measure(fn, rounds) for fn in fns]


def time_block(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(fn, rounds, target_s=0.02):
    """Median seconds per call over `rounds` blocks of about target_s each, after a warm-up."""
    for _ in range(3):  # primitives, caches, thread teams
        fn()
    calls = max(1, int(target_s / max(time_block(fn, 3), 1e-6)))
    return statistics.median(time_block(fn, calls) for _ in range(rounds))


def peer_available():
    try:
        return peers.in_peer(peers.torch_version)
    except subprocess.CalledProcessError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--batches", type=int, nargs="*", default=[32, 256])
    parser.add_argument("--async", dest="asynchronous", action="store_true",
                        help="run msrt's kernels on the eager dispatcher thread (adds its hand-off per call)")
    args = parser.parse_args()
    rounds = 5 if args.quick else 15

    import msrt as ms

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU", runtime_num_threads=THREADS,
                   pynative_synchronize=not args.asynchronous)
    torch_version = peer_available()
    cores = min(THREADS, len(os.sched_getaffinity(0)))
    peak = peak_gflops(cores)
    print(f"conv2d / matmul forward + backward, LeNet-5 shapes, float32, msrt on {cores} threads")
    print(f"peak {peak:.1f} GFLOP/s ({cores} cores x 2 FMA x 8 lanes x 2 flops x {clock_ghz():.3f} GHz)")
    print(f"msrt side: {peers.msrt_description()}")
    print(f"torch side: {peers.peer_description() if torch_version else 'none (install python3-torch)'}")
    print(f"msrt kernels run {'on the dispatcher thread' if args.asynchronous else 'where called'}; medians of "
          f"{rounds} rounds, the sides taking turns layer by layer; 'vs torch' = torch time / msrt time "
          f"(> 1: msrt faster); load average at start: {os.getloadavg()[0]:.2f}\n")
    header = f"{'layer':<24}{'pass':<17}{'msrt us':>10}{'GFLOP/s':>9}{'%peak':>7}{'torch us':>10}{'GFLOP/s':>9}" \
             f"{'vs torch':>10}"
    for batch in args.batches:
        print(f"batch {batch}")
        print(header)
        total_ms = total_torch = 0.0
        total_flops = 0
        for seed, (name, kind, x_shape, w_shape) in enumerate(lenet_layers(batch)):
            flops, msrt_fns = msrt_layer_ops(kind, x_shape, w_shape, seed)
            ms_times = [measure(fn, rounds) for fn in msrt_fns]
            torch_times = (peers.in_peer(torch_layer_times, kind, x_shape, w_shape, seed, rounds) if torch_version
                           else [None] * len(PASSES))
            for pass_name, ms_s, torch_s in zip(PASSES, ms_times, torch_times):
                total_ms += ms_s
                total_flops += flops
                gf = flops / ms_s / 1e9
                line = f"{name:<24}{pass_name:<17}{ms_s * 1e6:10.1f}{gf:9.1f}{100 * gf / peak:7.1f}"
                if torch_s is not None:
                    total_torch += torch_s
                    line += f"{torch_s * 1e6:10.1f}{flops / torch_s / 1e9:9.1f}{torch_s / ms_s:10.2f}"
                print(line)
                name = ""
        gf = total_flops / total_ms / 1e9
        line = f"{'all layers':<24}{'fwd + bwd':<17}{total_ms * 1e6:10.1f}{gf:9.1f}{100 * gf / peak:7.1f}"
        if total_torch:
            line += f"{total_torch * 1e6:10.1f}{total_flops / total_torch / 1e9:9.1f}{total_torch / total_ms:10.2f}"
        print(line + "\n")


if __name__ == "__main__":
    main()
