"""Per-call cost of one small op from Python, against PyTorch eager.

    .venv/bin/python benchmarks/tensor_op_overhead.py

Times ops on 4-element float32 tensors (and a 4x4 matmul, and a 4->4 Dense
layer on a batch of 2), where the kernel itself is negligible, so what is
measured is the cost of a call: the Python wrappers, argument conversion,
the binding, the op's checks and dispatch. Prints the best of several repeats per call in ns, and
the ratio against PyTorch measured in the same run, in its own process
(peers.py: OpenBLAS's OpenMP build, PyTorch's thread defaults). It also times
the Python layer alone (Tensor.__add__ with the native call replaced by a
stub) and the native call alone, to show where the time goes.

Each side is measured ROUNDS times, alternating (msrt, PyTorch, msrt, ...),
and the figures are the medians of the rounds, so that load on a shared
machine falls on both sides alike.
"""
import statistics
import sys
import timeit

import peers

peers.msrt_process()

# (label, msrt statement, PyTorch statement)
CASES = [
    ("x + y", "x + y", "x + y"),
    ("x + 1.0", "x + 1.0", "x + 1.0"),
    ("x * 2", "x * 2", "x * 2"),
    ("x / y", "x / y", "x / y"),
    ("-x", "-x", "-x"),
    ("ops.add(x, y)", "ops.add(x, y)", "torch.add(x, y)"),
    ("ops.mul(x, y)", "ops.mul(x, y)", "torch.mul(x, y)"),
    ("ops.relu(x)", "ops.relu(x)", "torch.relu(x)"),
    ("ops.exp(x)", "ops.exp(x)", "torch.exp(x)"),
    ("x < y", "x < y", "x < y"),
    ("x == y", "x == y", "x == y"),
    ("ops.matmul(m, m)", "ops.matmul(m, m)", "torch.matmul(m, m)"),
    ("x * y - x", "x * y - x", "x * y - x"),
    ("x.sum()", "x.sum()", "x.sum()"),
    ("x.mean()", "x.mean()", "x.mean()"),
    ("x[0]", "x[0]", "x[0]"),
    ("x[1:3]", "x[1:3]", "x[1:3]"),
    ("z[0] = 1.0", "z[0] = 1.0", "z[0] = 1.0"),
    ("x.reshape(2, 2)", "x.reshape(2, 2)", "x.reshape(2, 2)"),
    ("Dense(4, 4)(xd)", "dense(xd)", "dense(xd)"),
]
NUMBER, REPEAT, ROUNDS = 5_000, 9, 3


def best_ns(stmt, env, number=NUMBER, repeat=REPEAT, sync=None):
    best = float("inf")
    for _ in range(repeat):
        best = min(best, timeit.timeit(stmt, globals=env, number=number) / number * 1e9)
        if sync is not None:
            sync()
    return best


def torch_ns(number, repeat):
    """ns per call of each case's PyTorch statement (run in the peer's process)."""
    import torch

    env = {"torch": torch, "x": torch.ones(4), "y": torch.ones(4), "z": torch.ones(4), "dense": torch.nn.Linear(4, 4),
           "xd": torch.ones(2, 4), "m": torch.ones(4, 4)}
    with torch.no_grad():  # z[0] = 1.0 on a leaf; the other cases do not record either way
        return [best_ns(peer, env, number, repeat) for _, _, peer in CASES]


def main():
    import numpy as np

    import msrt as ms
    from msrt import _C, _tensor, nn, ops

    x = ms.Tensor(np.ones(4, np.float32))
    y = ms.Tensor(np.ones(4, np.float32))
    env = {"ms": ms, "ops": ops, "x": x, "y": y, "z": ms.Tensor(np.ones(4, np.float32)), "_C": _C, "bx": x._t,
           "by": y._t, "dense": nn.Dense(4, 4), "xd": ms.Tensor(np.ones((2, 4), np.float32)),
           "m": ms.Tensor(np.ones((4, 4), np.float32))}
    our_rounds, peer_rounds = [], []
    peer_error = None
    for _ in range(ROUNDS):
        our_rounds.append([best_ns(stmt, env, sync=_C.synchronize) for _, stmt, _ in CASES])
        if peer_error is None:
            try:
                peer_rounds.append(peers.in_peer(torch_ns, NUMBER, REPEAT))
            except Exception as error:  # noqa: BLE001 - the peer is optional (scripts/setup.sh installs it)
                peer_error = error
    ours = [statistics.median(r[i] for r in our_rounds) for i in range(len(CASES))]
    if peer_error is None:
        peer = [statistics.median(r[i] for r in peer_rounds) for i in range(len(CASES))]
        print(f"peer: {peers.peer_description()}")
    else:
        print(f"PyTorch peer unavailable ({type(peer_error).__name__}: {peer_error}); msrt figures only")
        peer = [None] * len(CASES)
    print(f"msrt {ms.__version__}, PYNATIVE_MODE, CPU; medians of {ROUNDS} alternating rounds, each the best of "
          f"{REPEAT} x {NUMBER} calls")
    print(f"{'call':<18}{'msrt ns':>10}{'torch ns':>10}{'ratio':>8}")
    for (label, _, _), t, p in zip(CASES, ours, peer):
        ratio = f"{t / p:8.2f}" if p else "       -"
        print(f"{label:<18}{t:10.0f}{(p or float('nan')):10.0f}{ratio}")
    if peer_error is None:
        over = [label for (label, _, _), t, p in zip(CASES, ours, peer) if t > p]
        print(f"slower than PyTorch: {', '.join(over) if over else 'none'}")
    raw = best_ns("_C.call('add', [bx, by], {})", env, sync=_C.synchronize)
    raw1 = best_ns("_C.call1('add', (bx, by), {})", env, sync=_C.synchronize)
    real = _tensor._call1
    _tensor._call1 = lambda name, inputs, attrs: x._t
    try:
        layer = best_ns("x + y", env, number=50_000)
    finally:
        _tensor._call1 = real
    print(f"native _C.call('add') alone: {raw:.0f} ns, _C.call1('add'): {raw1:.0f} ns; Python layer of x + y alone "
          f"(native call stubbed): {layer:.0f} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
