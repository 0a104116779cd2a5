"""Graph-kernel fusion: a GELU block behind a LayerNorm-style scale and shift,
compiled with ms.jit with and without fusion, and PyTorch eager and
TorchScript on the same block, same run (PyTorch in its own process, on
OpenBLAS's OpenMP build with its own thread defaults: peers.py); msrt on 2
threads; medians.

    .venv/bin/python benchmarks/fusion.py [--quick]
"""
import argparse
import sys

import numpy as np

import peers


def block(x, g, b, tanh):
    y = x * g + b
    inner = (y + y * y * y * 0.044715) * 0.7978845608
    return 0.5 * y * (1.0 + tanh(inner))


def block_input(n):
    """The block's input of n elements, the same in both processes."""
    return np.random.default_rng(n).standard_normal(n).astype(np.float32)


def torch_times(n, reps):
    """PyTorch eager and TorchScript times (ms) of the block, run by peers.in_peer: PyTorch on OpenBLAS's OpenMP
    build with its own thread defaults."""
    import torch

    tx, tg, tb = torch.from_numpy(block_input(n)), torch.tensor(1.5), torch.tensor(0.1)
    t_torch = peers.median_ms(lambda: block(tx, tg, tb, torch.tanh).numpy(), reps)

    @torch.jit.script
    def scripted(x: torch.Tensor, g: torch.Tensor, b: torch.Tensor):
        y = x * g + b
        inner = (y + y * y * y * 0.044715) * 0.7978845608
        return 0.5 * y * (1.0 + torch.tanh(inner))

    return t_torch, peers.median_ms(lambda: scripted(tx, tg, tb).numpy(), reps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    import msrt as ms

    reps = 5 if args.quick else 20
    ms.set_context(runtime_num_threads=2)
    print("GELU block (11 elementwise ops), float32, 2 threads, median ms")
    print(f"msrt: {peers.msrt_description()}")
    try:
        import torch  # noqa: F401  (measured in the peer's process: peers.in_peer)
        have_torch = True
    except ImportError:
        have_torch = False
    if have_torch:
        print(f"peer: {peers.peer_description()}")
    print(f"{'elements':>9} | {'unfused':>8} {'fused':>8} {'gain':>5} | {'torch':>8} {'script':>8} | "
          f"{'fused/torch':>11}")
    for n in (1 << 16, 1 << 20, 1 << 22):
        data = block_input(n)
        x, g, b = ms.Tensor(data), ms.Tensor(np.float32(1.5)), ms.Tensor(np.float32(0.1))
        tanh = ms.ops.tanh
        ms.set_context(enable_graph_kernel=False)
        unfused = ms.jit(lambda x, g, b: block(x, g, b, tanh))
        ms.set_context(enable_graph_kernel=True)
        fused = ms.jit(lambda x, g, b: block(x, g, b, tanh))
        t_unfused = peers.median_ms(lambda: ms.set_context(enable_graph_kernel=False) or unfused(x, g, b).asnumpy(),
                                    reps)
        t_fused = peers.median_ms(lambda: ms.set_context(enable_graph_kernel=True) or fused(x, g, b).asnumpy(), reps)
        row = f"{n:>9} | {t_unfused:8.3f} {t_fused:8.3f} {t_unfused / t_fused:5.2f} | "
        if have_torch:
            t_torch, t_script = peers.in_peer(torch_times, n, reps)
            row += f"{t_torch:8.3f} {t_script:8.3f} | {t_fused / t_torch:11.2f}"
        print(row, flush=True)
    ms.set_context(enable_graph_kernel=False)
    print("gain = unfused / fused; fused/torch below 1: msrt is faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
