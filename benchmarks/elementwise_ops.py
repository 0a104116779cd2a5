"""Elementwise and reduction kernels: msrt vs NumPy (and PyTorch when
installed) on the same tensors, in the same run. PyTorch runs in its own
process with its own thread defaults on OpenBLAS's OpenMP build (peers.py).

Each msrt call is waited for, so the figures include msrt's per-op cost
(binding, inference, allocation) as well as the kernel: "sync" runs the op
on the calling thread (pynative_synchronize=True), "async" hands it to the
dispatcher thread and waits for it (two thread hand-offs per call, which a
pipelined training loop overlaps with Python). Times are the best of several
timeit repeats, in microseconds per call.

    .venv/bin/python benchmarks/elementwise_ops.py [--threads N] [--shape 256,1024]
"""
import argparse
import sys
import timeit

import numpy as np

import peers


def best_us(fn, number, repeat=7):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def operands(shape):
    """x, y and a row of the shape's last size, the same in both processes."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    return x, y, rng.standard_normal(shape[-1:]).astype(np.float32)


def torch_times(shape, number):
    """PyTorch's microseconds per call of each case, run by peers.in_peer."""
    import torch

    px, py, prow = (torch.from_numpy(a) for a in operands(tuple(shape)))
    cases = {
        "add": lambda: px + py, "add (row broadcast)": lambda: px + prow, "relu": lambda: torch.relu(px),
        "exp": lambda: torch.exp(px), "softmax (last axis)": lambda: torch.softmax(px, -1),
        "reduce_sum (last axis)": lambda: px.sum(-1), "reduce_sum (axis 0)": lambda: px.sum(0),
    }
    times = {}
    for name, fn in cases.items():
        fn()
        times[name] = best_us(fn, number)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=2, help="msrt runtime_num_threads")
    parser.add_argument("--shape", default="256,1024", help="tensor shape, e.g. 256,1024")
    parser.add_argument("--number", type=int, default=200, help="calls per timing")
    args = parser.parse_args(argv)
    shape = tuple(int(s) for s in args.shape.split(","))

    import msrt as ms
    from msrt import _C

    ms.set_context(runtime_num_threads=args.threads)
    x, y, row = operands(shape)
    tx, ty, trow = _C.TensorBase(x), _C.TensorBase(y), _C.TensorBase(row)

    def msrt_op(name, inputs, attrs=None):
        def run():
            _C.call(name, inputs, attrs or {})[0]._sync()
        return run

    def np_softmax():
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    cases = [
        ("add", msrt_op("add", [tx, ty]), lambda: np.add(x, y)),
        ("add (row broadcast)", msrt_op("add", [tx, trow]), lambda: np.add(x, row)),
        ("relu", msrt_op("relu", [tx]), lambda: np.maximum(x, 0)),
        ("exp", msrt_op("exp", [tx]), lambda: np.exp(x)),
        ("softmax (last axis)", msrt_op("softmax", [tx]), np_softmax),
        ("reduce_sum (last axis)", msrt_op("reduce_sum", [tx], {"axis": -1}), lambda: x.sum(-1)),
        ("reduce_sum (axis 0)", msrt_op("reduce_sum", [tx], {"axis": 0}), lambda: x.sum(0)),
    ]
    torch_cases = {}
    try:
        import torch  # noqa: F401  (only whether the peer is installed; it runs in its own process)

        torch_cases = peers.in_peer(torch_times, list(shape), args.number)
    except ImportError:
        pass

    print(f"float32 {shape}, msrt with {args.threads} threads; microseconds per call (best of 7)")
    print(f"msrt: {peers.msrt_description()}")
    if torch_cases:
        print(f"peer: {peers.peer_description()}")
    header = f"{'op':24s} {'msrt sync':>9s} {'async':>9s} {'numpy':>9s} {'numpy/sync':>10s}"
    if torch_cases:
        header += f" {'torch':>9s} {'torch/sync':>10s}"
    print(header)
    for name, m, n in cases:
        for fn in (m, n):
            fn()  # warm up (allocator caches, thread pool)
        ta = best_us(m, args.number)
        ms.set_context(pynative_synchronize=True)
        m()
        ts = best_us(m, args.number)
        ms.set_context(pynative_synchronize=False)
        tn = best_us(n, args.number)
        line = f"{name:24s} {ts:9.1f} {ta:9.1f} {tn:9.1f} {tn / ts:10.2f}"
        if name in torch_cases:
            tt = torch_cases[name]
            line += f" {tt:9.1f} {tt / ts:10.2f}"
        print(line, flush=True)
    print("ratios above 1: msrt is faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
