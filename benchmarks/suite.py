"""Benchmark suite: LeNet-5, an MLP, a CIFAR ResNet and a transformer encoder, each a training step (forward,
backward, Momentum update) and inference at a small and a large batch, msrt PYNATIVE_MODE, GRAPH_MODE and (training)
GRAPH_MODE with memory_optimize_level O1 against PyTorch eager and TorchScript, same run, same initial weights and
inputs (suite_spec.py).

Every side runs in its own process, so its peak RSS is its own: msrt's with runtime_num_threads=2 and OpenMP
workers waiting passively, PyTorch's as peers.py starts it (OpenBLAS's OpenMP build, PyTorch's own thread
defaults). The processes of one case (network, phase, batch) stay up together and are timed in alternation:
rounds of a burst of calls each, the order rotating each round; a side's time is the median of all its calls.
Each call is waited for to its end (msrt: asnumpy of the loss or output; PyTorch: item() or numpy()).

Mixed precision: msrt GRAPH (and, with --sides, PYNATIVE) at amp level O2 in bfloat16 and float16, compared with
msrt's float32 side of the same mode and with PyTorch eager under torch.autocast("cpu", torch.bfloat16).

The sanity check compares every side with PyTorch eager: the losses of the first three training steps (which
also checks the gradients and the update), or the inference output's sum and first values.

GFLOP/s counts the convolutions and matrix products only (suite_spec.flops: 2 per multiply-add; training adds
weight and input gradients). The machine's peak is measured, at the start and at the end of the run: the best of
a 2048^3 float32 matmul in msrt (oneDNN, 2 threads) and in PyTorch (OpenBLAS, its threads).

PyTorch keeps its own thread defaults unless --torch-threads N is given (ATen picks 1 thread on some virtual
machines with 2 CPUs, where msrt runs 2: the settings lines say what each side ran with).

    .venv/bin/python benchmarks/suite.py [--quick] [--network lenet --batch 32] [--phase train]
        [--out docs/performance.json] [--profile docs/profiles]
    .venv/bin/python benchmarks/report.py docs/performance.json    # docs/performance.md and .png
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import peers

peers.msrt_process()  # msrt's workers (and this parent) import msrt before NumPy; the peer's workers do not
import suite_spec as spec  # noqa: E402
from report import _write_atomic  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# (key, side, mode, label); the ratios are to "eager".
SIDES = [("pynative", "msrt", "pynative", "msrt PYNATIVE"), ("graph", "msrt", "graph", "msrt GRAPH"),
         ("graph-o1", "msrt", "graph-o1", "msrt GRAPH O1"), ("eager", "torch", "eager", "PyTorch eager"),
         ("script", "torch", "script", "TorchScript"),
         ("graph-bf16", "msrt", "graph-bf16", "msrt GRAPH bf16"),
         ("graph-fp16", "msrt", "graph-fp16", "msrt GRAPH fp16"),
         ("pynative-bf16", "msrt", "pynative-bf16", "msrt PYNATIVE bf16"),
         ("pynative-fp16", "msrt", "pynative-fp16", "msrt PYNATIVE fp16"),
         ("autocast-bf16", "torch", "autocast-bf16", "PyTorch autocast bf16")]
LABELS = {key: label for key, _, _, label in SIDES}
# The float32 sides of the main table; the mixed-precision sides (amp level O2, networks.AMP_MODES) with the float32
# side each is compared with, and PyTorch's autocast. PYNATIVE's mixed precision is opt-in (--sides).
MAIN_KEYS = ("pynative", "graph", "graph-o1", "eager", "script")
AMP_BASE = {"graph-bf16": "graph", "graph-fp16": "graph", "pynative-bf16": "pynative", "pynative-fp16": "pynative"}
DEFAULT_SIDES = [k for k, *_ in SIDES if k not in ("pynative-bf16", "pynative-fp16")]
# Low-precision sides agree with PyTorch eager's float32 losses or outputs to this (relative) instead of 1e-3.
AMP_TOLERANCE = 2e-2


# --- the worker: one side of one case, in its own process ---------------------------------------------------------
def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak():
    """Resets the process's peak RSS (VmHWM) to its current RSS; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def worker(cfg):
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the libraries print goes to stderr, not into the protocol

    def send(obj):
        proto.write(json.dumps(obj) + "\n")

    if cfg["side"] == "msrt":
        import networks as impl
    else:
        import suite_peer as impl
    if cfg.get("task") == "matmul":
        send({"gflops": impl.matmul_gflops(cfg["n"]), "describe": impl.describe()})
        return 0
    rss_base = _status("VmRSS")
    reset = _reset_peak()
    start = time.perf_counter()
    run, check, names = impl.session(cfg["network"], cfg["batch"], cfg["phase"], cfg["mode"])
    setup_s = time.perf_counter() - start
    for _ in range(2):
        run()
    send({"check": check, "names": sorted(names), "setup_s": setup_s, "describe": impl.describe(),
          "rss_base": rss_base, "peak_reset": reset})
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "run":
            times = []
            for _ in range(cmd["n"]):
                t = time.perf_counter()
                run()
                times.append(time.perf_counter() - t)
            send({"times": times})
        elif cmd["op"] == "profile":
            t = time.perf_counter()
            rows = impl.profile_session(run, cmd["steps"], cmd["folder"])
            send({"rows": rows, "seconds": time.perf_counter() - t})
        elif cmd["op"] == "peak":
            send({"peak_rss": _status("VmHWM"), "rss": _status("VmRSS")})
        else:
            return 0
    return 0


# --- the parent ----------------------------------------------------------------------------------------------------
class Worker:
    def __init__(self, cfg, torch_threads=None):
        env = peers.peer_env() if cfg["side"] == "torch" else dict(os.environ)
        if cfg["side"] == "torch" and torch_threads:
            env["MSRT_BENCH_TORCH_THREADS"] = str(torch_threads)
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "suite.py"), "--worker", json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     env=env, cwd=HERE)

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self.log.seek(0)
            tail = self.log.read()[-1500:]
            raise RuntimeError(f"worker exited with {self.proc.returncode}: {tail}")
        return json.loads(line)

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _close_enough(values, reference, phase, tolerance=1e-3):
    if phase == "train":
        diffs = [abs(a - b) / max(abs(b), 1e-6) for a, b in zip(values, reference)]
        return max(diffs) <= tolerance, max(diffs)
    # infer: [sum, sum of |out|, first values]
    scale = max(reference[1], 1e-6)
    diffs = [abs(values[0] - reference[0]) / scale]
    diffs += [abs(a - b) / (1 + abs(b)) for a, b in zip(values[2:], reference[2:])]
    return max(diffs) <= tolerance, max(diffs)


def _tolerance(key):
    return AMP_TOLERANCE if key in AMP_BASE or key == "autocast-bf16" else 1e-3


def run_case(network, phase, batch, keys, rounds, burst_s, torch_threads, log):
    """Times one case; its result record."""
    flops = spec.flops(network, batch, phase)
    record = {"network": network, "phase": phase, "batch": batch, "flops": flops, "sides": {},
              "load_start": os.getloadavg()[0]}
    workers = {}
    try:
        for key, side, mode, _ in SIDES:
            if key not in keys or (key == "graph-o1" and phase != "train"):
                continue
            cfg = {"side": side, "mode": mode, "network": network, "phase": phase, "batch": batch}
            try:
                w = Worker(cfg, torch_threads)
                workers[key] = w
                hello = w.read()
                record["sides"][key] = {k: hello[k] for k in ("check", "setup_s", "rss_base", "names", "describe")}
                record["sides"][key]["times"] = []
                w.ask(op="run", n=1)  # one more warm-up call
            except RuntimeError as e:
                record["sides"][key] = {"error": str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)}
                workers.pop(key, None)
                log(f"  {LABELS[key]} failed: {e}")
        # calls per burst from one call's time
        counts = {}
        for key, w in workers.items():
            t = min(w.ask(op="run", n=1)["times"])
            counts[key] = max(1, min(200, int(burst_s / max(t, 1e-6))))
        order = list(workers)
        for r in range(rounds):
            rotated = order[r % len(order):] + order[:r % len(order)]
            for key in rotated:
                record["sides"][key]["times"] += workers[key].ask(op="run", n=counts[key])["times"]
        for key, w in workers.items():
            peak = w.ask(op="peak")
            s = record["sides"][key]
            s["peak_rss"] = peak["peak_rss"]
            times = sorted(s.pop("times"))
            s["calls"], s["median_s"], s["min_s"] = len(times), statistics.median(times), times[0]
            s["p25_s"], s["p75_s"] = times[len(times) // 4], times[(3 * len(times)) // 4]
    finally:
        for w in workers.values():
            w.close()
    record["load_end"] = os.getloadavg()[0]
    ref = record["sides"].get("eager", {}).get("check")
    names = record["sides"].get("eager", {}).get("names")
    ok = ref is not None
    for key, s in record["sides"].items():
        if "check" not in s or ref is None:
            continue
        same, diff = _close_enough(s["check"], ref, phase, _tolerance(key))
        same = same and s["names"] == names
        s["check_ok"], s["check_diff"] = same, diff
        ok = ok and same
    record["check_ok"] = ok
    for s in record["sides"].values():
        s.pop("names", None)
    return record


def ratio(record, num, den="eager"):
    a, b = record["sides"].get(num, {}), record["sides"].get(den, {})
    if "median_s" in a and "median_s" in b:
        return a["median_s"] / b["median_s"]
    return None


def _fmt(x, spec_="7.2f"):
    return format(x, spec_) if x is not None else " " * (int(spec_.split(".")[0]) - 1) + "-"


def print_row(rec, keys, peak, out):
    s = rec["sides"]
    ms_ = [_fmt(s[k]["median_s"] * 1e3 if "median_s" in s.get(k, {}) else None, "9.2f") for k in keys]
    mib = [_fmt((s[k]["peak_rss"] - s[k]["rss_base"]) / 2 ** 20 if "peak_rss" in s.get(k, {}) else None, "6.0f")
           for k in keys]
    graph = s.get("graph", {}).get("median_s")
    gflops = rec["flops"] / graph / 1e9 if graph else None
    ratios = [_fmt(ratio(rec, k)) for k in ("pynative", "graph")]
    ratios += [_fmt(ratio(rec, "graph", "script")), _fmt(ratio(rec, "graph", "pynative"))]
    diffs = [s[k]["check_diff"] for k in s if "check_diff" in s[k]]
    check = ("ok" if rec["check_ok"] else "MISMATCH") + (f" ({max(diffs):.0e})" if diffs else "")
    util = f"{gflops:7.1f} {100 * gflops / peak:5.1f}%" if gflops and peak else _fmt(gflops, "7.1f") + "      "
    out(f"{rec['network']:<11} {rec['phase']:<5} {rec['batch']:>4} | {' '.join(ms_)} | {' '.join(ratios)} | "
        f"{util} | {' '.join(mib)} | {check} | load {rec['load_start']:.1f}")


def print_amp_row(rec, out):
    """The case's mixed-precision sides: time, ratio to the float32 side and to PyTorch's autocast."""
    s = rec["sides"]
    parts = []
    for key in [k for k in AMP_BASE if k in s] + (["autocast-bf16"] if "autocast-bf16" in s else []):
        if "median_s" not in s[key]:
            parts.append(f"{LABELS[key]} failed")
            continue
        base = AMP_BASE.get(key, "eager")
        text = f"{LABELS[key]} {s[key]['median_s'] * 1e3:.2f} ms ({_fmt(ratio(rec, key, base)).strip()}x {base}"
        if key.endswith("bf16") and key in AMP_BASE and "autocast-bf16" in s:
            text += f", {_fmt(ratio(rec, key, 'autocast-bf16')).strip()}x autocast"
        parts.append(text + ")")
    if parts:
        out(f"{'':<22}   mixed precision: " + "; ".join(parts))


def header(keys, out):
    names = {"pynative": "PYNATIVE", "graph": "GRAPH", "graph-o1": "GRAPH O1", "eager": "eager", "script": "script"}
    short = {"pynative": "PYN", "graph": "GRAPH", "graph-o1": "O1", "eager": "eager", "script": "script"}
    out(f"{'network':<11} {'phase':<5} {'batch':>4} | {' '.join(f'{names[k]:>9}' for k in keys)} | "
        f"{'PYN/eag':>7} {'GR/eag':>7} {'GR/scr':>7} {'GR/PYN':>7} | {'GRAPH GFLOP/s':>13} | "
        f"{' '.join(f'{short[k]:>6}' for k in keys)} | check | load")
    out(f"{'':<22} | {'median ms per call':^{10 * len(keys) - 1}} | {'time ratios':^31} | {'':13} | "
        f"{'RSS growth MiB':^{7 * len(keys) - 1}} |")


def profile_network(network, batch, steps):
    """The per-op profile of msrt GRAPH_MODE's training step: text of its top ops."""
    w = Worker({"side": "msrt", "mode": "graph", "network": network, "phase": "train", "batch": batch})
    try:
        w.read()
        w.ask(op="run", n=3)
        with tempfile.TemporaryDirectory() as tmp:
            got = w.ask(op="profile", steps=steps, folder=tmp)
    finally:
        w.close()
    rows = got["rows"]
    total_us = sum(float(r["total_us"]) for r in rows)
    lines = [f"## {network}, training step, batch {batch}: msrt GRAPH_MODE, {steps} steps under ms.Profiler",
             f"wall {got['seconds'] / steps * 1e3:.2f} ms per step (profiled); kernel time "
             f"{total_us / steps / 1e3:.2f} ms per step; {len(rows)} op types", "",
             f"{'op':<28} {'calls/step':>10} {'ms/step':>9} {'avg us':>9} {'share':>7}"]
    for r in rows[:25]:
        lines.append(f"{r['op_type']:<28} {int(r['calls']) / steps:10.1f} {float(r['total_us']) / steps / 1e3:9.3f} "
                     f"{float(r['avg_us']):9.1f} {float(r['share_percent']):6.1f}%")
    if len(rows) > 25:
        rest = sum(float(r["total_us"]) for r in rows[25:])
        lines.append(f"{'(' + str(len(rows) - 25) + ' more op types)':<28} {'':>10} {rest / steps / 1e3:9.3f}")
    return "\n".join(lines)


def machine_peak(n, torch_threads, log):
    """Measured GFLOP/s of an n^3 float32 matmul on each side, and each side's settings."""
    peaks, describe = {}, {}
    for side in ("msrt", "torch"):
        w = Worker({"side": side, "task": "matmul", "n": n}, torch_threads)
        try:
            got = w.read()
            peaks[side], describe[side] = got["gflops"], got["describe"]
        except RuntimeError as e:
            log(f"  {side} matmul failed: {e}")
        finally:
            w.close()
    return peaks, describe


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return platform.processor()
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "unknown")
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "avx512_fp16") if f in flags]
    return f"{model}, {os.cpu_count()} CPUs, {' '.join(isa)}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--network", action="append", choices=sorted(spec.NETWORKS),
                        help="one network (repeat for several); default all")
    parser.add_argument("--batch", type=int, action="append", help="only this batch (repeatable)")
    parser.add_argument("--phase", choices=["train", "infer"], action="append", help="default both")
    parser.add_argument("--sides", default=",".join(DEFAULT_SIDES),
                        help="comma list of " + ", ".join(k for k, *_ in SIDES) + " (default all but "
                        "pynative-bf16 and pynative-fp16); the bf16 / fp16 sides are msrt at amp level O2, "
                        "autocast-bf16 PyTorch eager under torch.autocast")
    parser.add_argument("--quick", action="store_true", help="2 rounds of short bursts (a smoke run)")
    parser.add_argument("--rounds", type=int, help="alternation rounds (default 5, --quick 2)")
    parser.add_argument("--burst", type=float, help="seconds per side per round (default 0.4, --quick 0.05)")
    parser.add_argument("--torch-threads", type=int,
                        help="torch.set_num_threads in the peer (default: PyTorch's own default)")
    parser.add_argument("--peak-n", type=int, default=2048, help="matrix size of the peak measurement")
    parser.add_argument("--out", help="write the results as JSON here (benchmarks/report.py makes the docs)")
    parser.add_argument("--profile", metavar="DIR",
                        help="also write DIR/<network>.txt: the top ops of msrt GRAPH's training step")
    args = parser.parse_args(argv)
    if args.worker:
        return worker(json.loads(args.worker))
    try:
        import torch  # noqa: F401  (only whether the peer is installed; it runs in its own process)
    except ImportError:
        print("PyTorch is not installed (Debian: apt install python3-torch); nothing to compare with.")
        return 1
    keys = [k for k in args.sides.split(",") if k]
    unknown = [k for k in keys if k not in LABELS]
    if unknown or "eager" not in keys:
        parser.error(f"--sides: expected a comma list of {', '.join(LABELS)} including eager, got {args.sides!r}")
    rounds = args.rounds or (2 if args.quick else 5)
    burst = args.burst or (0.05 if args.quick else 0.4)
    networks = args.network or list(spec.NETWORKS)
    phases = args.phase or ["train", "infer"]

    def log(msg):
        print(msg, flush=True)

    started = time.time()
    load0 = os.getloadavg()
    log(f"machine: {cpu_model()}; load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    peaks, describe = machine_peak(args.peak_n, args.torch_threads, log)
    peak = max(peaks.values()) if peaks else None
    for side in ("msrt", "torch"):
        if side in describe:
            log(f"{side} side: {describe[side]}" +
                (f" (--torch-threads {args.torch_threads})" if side == "torch" and args.torch_threads else ""))
    log(f"peak: best {args.peak_n}^3 float32 matmul, " + ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peaks.items()))
    results = []
    main_keys = [k for k in keys if k in MAIN_KEYS]
    header(main_keys, log)
    for network in networks:
        for phase in phases:
            for batch in args.batch or spec.NETWORKS[network][phase]:
                rec = run_case(network, phase, batch, keys, rounds, burst, args.torch_threads, log)
                results.append(rec)
                print_row(rec, main_keys, peak, log)
                print_amp_row(rec, log)
    log("ratios: msrt time / PyTorch eager time (below 1: msrt is faster), GR/scr: GRAPH / TorchScript, "
        "GR/PYN: GRAPH / PYNATIVE; mixed precision: msrt at amp level O2 against its float32 side, and against "
        "PyTorch under torch.autocast (bfloat16); GFLOP/s: convolutions and matrix products only, % of the measured "
        "peak; RSS growth: peak RSS of the side's process over its RSS after importing msrt or torch")
    for rec in results:
        for s in rec["sides"].values():
            s.pop("describe", None)
    # the peak again: on a shared machine the first measurement may have been disturbed
    again, _ = machine_peak(args.peak_n, args.torch_threads, log)
    runs = [peaks, again]
    peaks = {side: max(r[side] for r in runs if side in r) for side in set(peaks) | set(again)}
    log("peak at the end: " + ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in sorted(again.items()))
        + "; the larger of each side's two is kept")
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        for network in networks:
            text = [f"# {network}: per-op profile of msrt GRAPH_MODE's training step",
                    spec.NETWORKS[network]["about"], f"machine: {cpu_model()}, load average "
                    f"{os.getloadavg()[0]:.2f} when written; made by benchmarks/suite.py --profile", ""]
            for batch in args.batch or spec.NETWORKS[network]["train"]:
                text += [profile_network(network, batch, 5 if args.quick else 20), ""]
            path = os.path.join(args.profile, f"{network}.txt")
            _write_atomic(path, "\n".join(text))
            log(f"profile: {path}")
    ok = all(r["check_ok"] for r in results)
    log(f"sanity check (same initial weights and inputs; losses of 3 steps or inference outputs agree with PyTorch "
        f"eager to 1e-3, mixed-precision sides to {AMP_TOLERANCE:g}): {'passed' if ok else 'FAILED'}")
    log(f"suite time {time.time() - started:.0f} s; load average at the end {os.getloadavg()[0]:.2f}")
    if args.out:
        data = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)), "machine": cpu_model(),
                "load_start": load0, "load_end": os.getloadavg(), "peak_gflops": peaks,
                "peak_runs": runs,
                "peak_note": f"best {args.peak_n}^3 float32 matmul of 10, at the start and at the end of the run: "
                             "msrt (oneDNN, 2 threads) and PyTorch (OpenBLAS, its threads)",
                "settings": {"msrt": describe.get("msrt"), "torch": describe.get("torch"),
                             "torch_threads": args.torch_threads},
                "rounds": rounds, "burst_s": burst, "quick": args.quick,
                "networks": {n: spec.NETWORKS[n]["about"] for n in networks}, "results": results}
        _write_atomic(args.out, json.dumps(data, indent=1) + "\n")
        log(f"results: {args.out}")
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
