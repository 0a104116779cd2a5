"""float16 amp in GRAPH_MODE with and without the float16_in_float32 pass
(Note [float16 held in float32] in src/compiler/half_in_float32.h), beside
float32 GRAPH_MODE, on the suite's networks and cases (benchmarks/suite.py).

Three msrt processes per case, timed in alternating rounds: GRAPH float32,
GRAPH amp O2 float16 with `--disable_pass=float16_in_float32` (float16
buffers, float16 kernels computing on float32 slices), and GRAPH amp O2
float16 as compiled by default (float16 values held in float32). Prints the
median milliseconds per call, the ratio of the medians to float32, the range
of the per-round ratios, each side's peak RSS and the load average.

    .venv/bin/python benchmarks/float16_held.py [--network mlp] [--rounds 7] [--burst 0.3]
"""
import argparse
import os
import statistics

import peers
import suite
import suite_spec as spec

SIDES = [("fp32", "graph", None), ("fp16 float16 buffers", "graph-fp16", "--disable_pass=float16_in_float32"),
         ("fp16 held in float32", "graph-fp16", None)]


def run_case(network, phase, batch, rounds, burst_s):
    workers = {}
    load = os.getloadavg()[0]
    try:
        for key, mode, flags in SIDES:
            saved = os.environ.pop("MS_DEV_GRAPH_KERNEL_FLAGS", None)
            if flags:
                os.environ["MS_DEV_GRAPH_KERNEL_FLAGS"] = flags
            try:
                workers[key] = suite.Worker({"side": "msrt", "mode": mode, "network": network, "phase": phase,
                                             "batch": batch})
            finally:
                os.environ.pop("MS_DEV_GRAPH_KERNEL_FLAGS", None)
                if saved is not None:
                    os.environ["MS_DEV_GRAPH_KERNEL_FLAGS"] = saved
            workers[key].read()
            workers[key].ask(op="run", n=2)
        counts = {}
        for key, w in workers.items():
            t = min(w.ask(op="run", n=2)["times"])
            counts[key] = max(1, min(300, int(burst_s / max(t, 1e-6))))
        times = {k: [] for k in workers}
        per_round = {k: [] for k in workers}
        order = list(workers)
        for r in range(rounds):
            for key in order[r % len(order):] + order[:r % len(order)]:
                t = workers[key].ask(op="run", n=counts[key])["times"]
                times[key] += t
                per_round[key].append(statistics.median(t))
        peaks = {k: w.ask(op="peak")["peak_rss"] / 2 ** 20 for k, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()
    median = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    cells = []
    for key, _, _ in SIDES:
        text = f"{median[key]:8.3f} ms"
        if key != "fp32":
            rr = sorted(a / b for a, b in zip(per_round[key], per_round["fp32"]))
            text += f" ({median[key] / median['fp32']:.2f}x, rounds {rr[0]:.2f}-{rr[-1]:.2f})"
        cells.append(f"{key}: {text}, {peaks[key]:.0f} MiB")
    print(f"{network:<11} {phase:<5} {batch:>4} | " + " | ".join(cells) +
          f" | load {load:.1f}-{os.getloadavg()[0]:.1f}", flush=True)


def main():
    peers.msrt_process()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", action="append", choices=list(spec.NETWORKS), help="repeatable; default all")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--burst", type=float, default=0.3, help="seconds per side per round")
    args = parser.parse_args()
    print(f"machine: {suite.cpu_model()}; load average {os.getloadavg()[0]:.2f}")
    for network in args.network or list(spec.NETWORKS):
        for phase in ("train", "infer"):
            for batch in spec.NETWORKS[network][phase]:
                run_case(network, phase, batch, args.rounds, args.burst)


if __name__ == "__main__":
    main()
