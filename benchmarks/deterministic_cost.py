"""What deterministic="ON" costs: LeNet-5 training steps with it OFF and ON,
and PyTorch with torch.use_deterministic_algorithms off and on, same run.

msrt's ON runs oneDNN primitives (conv, matmul, pooling) on one thread and
cuts long reductions by the shape alone, so the parameters come out
bit-identical whatever runtime_num_threads is (tests/python/runtime/
test_deterministic.py); PyTorch's flag promises run-to-run determinism for a
fixed thread count only. msrt uses 2 threads; PyTorch runs in its own process
on OpenBLAS's OpenMP build with its own thread defaults (peers.py).

    .venv/bin/python benchmarks/deterministic_cost.py [--quick]
"""
import argparse
import sys

import lenet_step
import peers


def msrt_setup_with(deterministic):
    def setup(batch):
        import msrt as ms

        step = lenet_step.msrt_setup(batch)
        ms.set_context(deterministic=deterministic)
        return step

    return setup


def torch_step_time(deterministic, batch, reps):
    """PyTorch's LeNet-5 step time, run by peers.in_peer (its own process and settings)."""
    import torch

    torch.use_deterministic_algorithms(deterministic)
    return lenet_step.measure(lenet_step.torch_setup, batch, reps)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401  (measured in the peer's process: peers.in_peer)
    except ImportError:
        print("PyTorch is not installed (Debian: apt install python3-torch); nothing to compare with.")
        return 1
    import msrt as ms

    scale = 0.25 if args.quick else 1.0
    plan = {32: 60, 256: 15}
    print(f"LeNet-5 training step, median of waited steps; msrt {ms.__version__} on 2 threads vs "
          f"{peers.peer_description()}")
    ms.set_context(runtime_num_threads=2)
    print(f"msrt: {peers.msrt_description()}")
    print(f"{'batch':>5} | {'msrt OFF':>9} {'msrt ON':>9} {'cost':>6} | {'torch off':>9} {'torch on':>9} "
          f"{'cost':>6} | {'ON/torch on':>11}")
    for batch, reps in plan.items():
        reps = max(int(reps * scale), 5)
        m_off, _ = lenet_step.measure(msrt_setup_with("OFF"), batch, reps)
        m_on, _ = lenet_step.measure(msrt_setup_with("ON"), batch, reps)
        t_off = peers.in_peer(torch_step_time, False, batch, reps)
        t_on = peers.in_peer(torch_step_time, True, batch, reps)
        print(f"{batch:>5} | {m_off * 1e3:7.3f}ms {m_on * 1e3:7.3f}ms {m_on / m_off:6.2f} | "
              f"{t_off * 1e3:7.3f}ms {t_on * 1e3:7.3f}ms {t_on / t_off:6.2f} | {m_on / t_on:11.2f}", flush=True)
    print("cost = time ON / time OFF; ON/torch on = msrt deterministic time / torch deterministic time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
