"""Per-op overhead of the Python tensor API, against PyTorch (Debian python3-torch).

    .venv/bin/python benchmarks/tensor_op_overhead.py

Times small-tensor ops (2x2 float32, where the kernel itself is negligible)
and prints best-of-repeats per call and the ratio against the peer measured in
the same run. It also times the Python layer alone (Tensor.__add__ → _op with
the native call replaced by a stub) to separate what msrt/_tensor.py costs
from what the C++ dispatch costs. Goal: the Python layer stays well under
1 us per op.
"""
import timeit

import numpy as np

import msrt as ms
from msrt import _C, _tensor

try:
    import torch
except ImportError:  # the peer is optional; install it with scripts/setup.sh --bench
    torch = None


def best_us(stmt, env, number=20_000, repeat=9):
    runs = timeit.repeat(stmt, globals=env, number=number, repeat=repeat)
    return min(runs) / number * 1e6


def main():
    x = ms.Tensor(np.ones((2, 2), np.float32))
    y = ms.Tensor(np.ones((2, 2), np.float32))
    env = {"ms": ms, "x": x, "y": y, "_C": _C, "bx": x._t, "by": y._t}
    cases = [("x + y", "tx + ty"), ("x + 1.0", "tx + 1.0"), ("x * y - x", "tx * ty - tx"),
             ("ms.ops.relu(x)", "torch.relu(tx)"), ("x.sum()", "tx.sum()"), ("x[0]", "tx[0]")]
    if torch is not None:
        torch.set_num_threads(1)
        env.update(torch=torch, tx=torch.ones(2, 2), ty=torch.ones(2, 2))
    print(f"{'expression':<16}{'msrt us':>10}{'torch us':>10}{'ratio':>8}")
    for ours, peer in cases:
        t = best_us(ours, env)
        _C.synchronize()
        p = best_us(peer, env) if torch is not None else None
        ratio = f"{t / p:8.2f}" if p else "       -"
        print(f"{ours:<16}{t:10.2f}{(p or float('nan')):10.2f}{ratio}")
    raw = best_us("_C.call('add', [bx, by], {})", env)
    _C.synchronize()
    out = [x._t]
    real = _tensor._call
    _tensor._call = lambda name, inputs, attrs: out
    try:
        layer = best_us("x + y", env, number=100_000)
        layer_scalar = best_us("x + 1.0", env, number=100_000)
    finally:
        _tensor._call = real
    print(f"native _C.call('add') alone: {raw:.2f} us")
    print(f"Python layer alone (native call stubbed): x + y {layer:.2f} us, x + 1.0 {layer_scalar:.2f} us")


if __name__ == "__main__":
    main()
