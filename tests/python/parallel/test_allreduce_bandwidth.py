"""benchmarks/allreduce_bandwidth.py on tiny sizes: it runs both worlds, prints the table and the
settings, and leaves no rank process behind, also when a step times out."""
import os
import pathlib
import re
import subprocess
import sys
import time
import uuid

BENCH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "allreduce_bandwidth.py"
TIMEOUT = 120


def run_bench(*args):
    marker = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), ALLREDUCE_BENCH_TEST=marker)
    out = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, env=env,
                         timeout=TIMEOUT)
    return out, marker


def processes_with(marker):
    """Live processes whose environment holds `marker` (the benchmark's ranks inherit it)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if f"ALLREDUCE_BENCH_TEST={marker}".encode() in environ and "\nState:\tZ" not in status:
            found.append(int(entry.name))
    return found


def assert_no_ranks_left(marker):
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_with(marker)


def test_prints_a_row_per_size_for_both_sides():
    out, marker = run_bench("--ranks", "2", "--max-bytes", "4096", "--repeats", "2", "--warmup", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "2 ranks on 127.0.0.1" in text, text
    assert re.search(r"msrt:\s+msrt \S+: ops\.AllReduce", text), text
    assert re.search(r"torch:\s+PyTorch \S+, \d+ threads", text), text
    number = r"\s+(\d+(?:\.\d+)?)"
    rows = re.findall(rf"^\s+(\d+)\s+\d+ KB \|{number}{number} \|{number}{number} \|{number} \|{number}$", text,
                      re.MULTILINE)
    assert [int(r[0]) for r in rows] == [1024, 4096], text
    for nbytes, t_msrt, bw_msrt, t_torch, bw_torch, ratio, copy in rows:
        t_msrt, t_torch = float(t_msrt), float(t_torch)
        assert t_msrt > 0 and t_torch > 0 and float(copy) > 0, text
        # bus bandwidth of 2 ranks = bytes / time; ratio = msrt time / torch time (as printed, rounded)
        assert abs(float(bw_msrt) - int(nbytes) / t_msrt / 1e3) <= 0.0005 + 0.01 * float(bw_msrt), text
        assert abs(float(ratio) - t_msrt / t_torch) <= 0.005 + 0.01 * float(ratio), text
    assert_no_ranks_left(marker)


def test_a_step_that_times_out_fails_and_kills_the_ranks():
    out, marker = run_bench("--ranks", "2", "--max-bytes", "1024", "--repeats", "1", "--timeout", "0.01")
    assert out.returncode != 0
    assert "msrt world of 2: no answer to start within 0.01 s" in out.stderr, out.stderr
    assert_no_ranks_left(marker)


def test_bad_arguments_are_refused():
    out, _ = run_bench("--ranks", "1")
    assert out.returncode == 2 and "--ranks: each count must be at least 2" in out.stderr, out.stderr
    out, _ = run_bench("--max-bytes", "100")
    assert out.returncode == 2 and "--max-bytes must be at least 1024" in out.stderr, out.stderr
