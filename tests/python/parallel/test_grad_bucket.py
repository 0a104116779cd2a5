"""benchmarks/grad_bucket.py with few calls: it runs its msrun job and prints, per mode, one all-reduce,
the reducer under three fusion settings with their ratios and bucket counts, the step's share, and the
overlap figure of GRAPH_MODE with two scheduler threads."""
import os
import pathlib
import re
import subprocess
import sys

BENCH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "grad_bucket.py"


def run_bench(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, env=env,
                          timeout=180)


def test_prints_the_figures_and_ratios():
    out = run_bench("--ranks", "2", "--repeats", "2", "--warmup", "1", "--batch", "4")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "LeNet5 gradients: 8 float32 tensors, 246736 bytes; 2 ranks" in text, text
    for mode in ("PYNATIVE_MODE", "GRAPH_MODE"):
        section = text.split(mode, 1)[1]
        one = float(re.search(r"one AllReduce of 246736 bytes\s+([\d.]+) us", section).group(1))
        rows = re.findall(r"reducer, (.+?)\s+([\d.]+) us\s+([\d.]+)x one \((\d+) AllReduce\)", section)[:3]
        assert [int(r[3]) for r in rows] == [1, 3, 8], section
        for _, t, ratio, _ in rows:
            assert abs(float(ratio) - float(t) / one) <= 0.005 + 0.01 * float(ratio), section
        step, reduce, share = re.search(r"data-parallel step \(batch 4 per rank\)\s+([\d.]+) us; gradient reduction "
                                        r"([\d.]+) us = ([\d.]+)% of the step", section).groups()
        assert abs(float(share) - 100 * float(reduce) / float(step)) <= 0.05 + 0.01 * float(share), section
    step, total, beside, share = re.search(
        r"GRAPH_MODE, inter_op_parallel_num=2, a bucket per gradient: step ([\d.]+) us; all_reduce kernels "
        r"([\d.]+) us a step, ([\d.]+) us of it \(([\d.]+)%\) beside a backward kernel", text).groups()
    assert float(step) > 0 and float(total) > 0 and 0 <= float(beside) <= float(total) + 0.1, text
    assert abs(float(share) - 100 * float(beside) / float(total)) <= 0.05 + 0.01 * float(share), text


def test_bad_arguments_are_refused():
    out = run_bench("--ranks", "1")
    assert out.returncode == 2 and "--ranks: each count must be at least 2" in out.stderr, out.stderr
    out = run_bench("--repeats", "0")
    assert out.returncode == 2 and "--repeats and --batch must be >= 1" in out.stderr, out.stderr
