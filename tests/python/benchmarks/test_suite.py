"""benchmarks/suite.py on one tiny case (LeNet-5 training, batch 8, --quick): it prints each side's settings,
the row of the case with its ratios, passes the sanity check against PyTorch, writes the JSON and a profile;
benchmarks/report.py turns the JSON into the table and the plot. Not a timing test."""
import importlib
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks"
TIMEOUT = 300

pytest.importorskip("torch")
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
suite = importlib.import_module("suite")
suite_spec = importlib.import_module("suite_spec")


def run(script, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.pop("OMP_WAIT_POLICY", None)  # msrt's processes get PASSIVE from importing msrt first
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    out = run("suite.py", "--quick", "--network", "lenet", "--phase", "train", "--batch", "8", "--rounds", "1",
              "--burst", "0.01", "--peak-n", "256", "--out", str(folder / "performance.json"),
              "--profile", str(folder / "profiles"))
    return out, folder


def test_prints_settings_row_and_sanity_check(suite_run):
    out, folder = suite_run
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert re.search(r"^msrt side: msrt \S+: runtime_num_threads=2, .*OMP_WAIT_POLICY=PASSIVE", text, re.M), text
    assert re.search(r"^torch side: PyTorch \S+: at::get_num_threads\(\) : \d+", text, re.M), text
    # What each OpenMP runtime took: msrt's workers wait passively, PyTorch's spin as libgomp's default has them.
    assert re.search(r"^msrt side: .*OMP_WAIT_POLICY=PASSIVE, OpenMP spin count 0;", text, re.M), text
    assert re.search(r"^torch side: .*OMP_WAIT_POLICY=unset, OpenMP spin count 300000;", text, re.M), text
    assert re.search(r"^peak: best 256\^3 float32 matmul, msrt \d+\.\d GFLOP/s, torch \d+\.\d GFLOP/s", text, re.M)
    num = r"\s+(\d+\.\d+)"
    row = re.search(rf"^lenet\s+train\s+8 \|{num * 5} \|{num * 4} \|{num}\s+\d+\.\d%\s+\|(?:\s+\d+){{5}} \| ok ",
                    text, re.M)
    assert row, text
    pyn, graph, o1, eager, script, r_pyn, r_graph, r_script, r_pyn_graph, gflops = map(float, row.groups())
    assert all(t > 0 for t in (pyn, graph, o1, eager, script)), text
    # the printed ratios are those of the printed medians (each rounded to 2 decimals)
    for shown, num_, den in ((r_pyn, pyn, eager), (r_graph, graph, eager), (r_script, graph, script),
                             (r_pyn_graph, graph, pyn)):
        assert abs(shown - num_ / den) <= 0.01 + 0.02 * shown, (shown, num_, den)
    assert "sanity check" in text and "passed" in text.split("sanity check")[1].splitlines()[0], text

    data = json.loads((folder / "performance.json").read_text())
    (rec,) = data["results"]
    assert (rec["network"], rec["phase"], rec["batch"], rec["check_ok"]) == ("lenet", "train", 8, True)
    assert rec["flops"] == suite_spec.flops("lenet", 8, "train")
    assert set(rec["sides"]) == {"pynative", "graph", "graph-o1", "eager", "script", "graph-bf16", "graph-fp16",
                                 "autocast-bf16"}
    eager_losses = rec["sides"]["eager"]["check"]
    for key, side in rec["sides"].items():
        assert side["check_ok"] and len(side["check"]) == 3
        low = key in ("graph-bf16", "graph-fp16", "autocast-bf16")
        assert side["check"] == pytest.approx(eager_losses, rel=suite.AMP_TOLERANCE if low else 1e-3)
        assert side["peak_rss"] >= side["rss_base"] > 0 and side["calls"] >= 1
        assert side["min_s"] <= side["p25_s"] <= side["median_s"] <= side["p75_s"]
    assert abs(rec["sides"]["graph"]["median_s"] * 1e3 - graph) <= 0.006
    # the mixed-precision line under the row: each side's time and its ratio to float32 GRAPH and to autocast
    amp = re.search(r"^\s+mixed precision: msrt GRAPH bf16 (\d+\.\d+) ms \((\d+\.\d+)x graph, (\d+\.\d+)x autocast\); "
                    r"msrt GRAPH fp16 (\d+\.\d+) ms \((\d+\.\d+)x graph\); "
                    r"PyTorch autocast bf16 (\d+\.\d+) ms \((\d+\.\d+)x eager\)$", text, re.M)
    assert amp, text
    bf16, r_bf16, r_auto, fp16, r_fp16, auto, r_eager = map(float, amp.groups())
    pairs = ((r_bf16, bf16, graph), (r_auto, bf16, auto), (r_fp16, fp16, graph), (r_eager, auto, eager))
    for shown, num_, den in pairs:
        assert abs(shown - num_ / den) <= 0.01 + 0.02 * shown, (shown, num_, den)

    profile = (folder / "profiles" / "lenet.txt").read_text()
    assert "## lenet, training step, batch 8: msrt GRAPH_MODE" in profile
    assert re.search(r"^conv2d\S*\s+\d+\.\d\s+\d+\.\d{3}", profile, re.M), profile


def test_report_writes_table_and_plot(suite_run):
    out, folder = suite_run
    assert out.returncode == 0, out.stdout + out.stderr
    rep = run("report.py", str(folder / "performance.json"))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    md = (folder / "performance.md").read_text()
    assert "| lenet train b8 |" in md and "## Memory" in md and "(profiles/lenet.txt)" in md, md
    row = next(line for line in md.splitlines() if line.startswith("| lenet train b8 |"))
    header = next(line for line in md.splitlines() if line.startswith("| case | PYNATIVE"))
    assert row.count("|") == header.count("|"), (header, row)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (folder / "performance.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_has_the_mixed_precision_table(suite_run):
    out, folder = suite_run
    assert out.returncode == 0, out.stdout + out.stderr
    rep = run("report.py", str(folder / "performance.json"))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    md = (folder / "performance.md").read_text()
    section = md.split("## Mixed precision", 1)[1].split("\n## ", 1)[0]
    header = next(line for line in section.splitlines() if line.startswith("| case |"))
    assert header == ("| case | GRAPH bf16 | GRAPH fp16 | PyTorch autocast bf16 | GRAPH bf16 / GRAPH "
                      "| GRAPH fp16 / GRAPH | GRAPH bf16 / autocast | autocast / eager |"), header
    row = next(line for line in section.splitlines() if line.startswith("| lenet train b8 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    data = json.loads((folder / "performance.json").read_text())
    sides = data["results"][0]["sides"]
    assert float(cells[1]) == pytest.approx(sides["graph-bf16"]["median_s"] * 1e3, abs=0.006)
    assert float(cells[4]) == pytest.approx(sides["graph-bf16"]["median_s"] / sides["graph"]["median_s"], abs=0.006)


def test_pynative_mixed_precision_is_opt_in():
    assert {"graph-bf16", "graph-fp16", "autocast-bf16"} <= set(suite.DEFAULT_SIDES)
    assert not {"pynative-bf16", "pynative-fp16"} & set(suite.DEFAULT_SIDES)
    assert {"pynative-bf16", "pynative-fp16"} <= set(suite.LABELS)
    assert suite._tolerance("graph-bf16") == suite.AMP_TOLERANCE > suite._tolerance("graph") == 1e-3


def test_sanity_check_catches_different_numbers():
    assert suite._close_enough([2.5, 2.4, 2.3], [2.5, 2.4, 2.3], "train")[0]
    assert not suite._close_enough([2.5, 2.4, 2.31], [2.5, 2.4, 2.3], "train")[0]
    assert suite._close_enough([1.0, 50.0, 0.1, 0.2], [1.0, 50.0, 0.1, 0.2], "infer")[0]
    assert not suite._close_enough([1.0, 50.0, 0.1, 0.21], [1.0, 50.0, 0.1, 0.2], "infer")[0]
    assert not suite._close_enough([1.2, 50.0, 0.1, 0.2], [1.0, 50.0, 0.1, 0.2], "infer")[0]


def test_bad_sides_are_refused():
    out = run("suite.py", "--sides", "graph,bogus")
    assert out.returncode == 2 and "--sides: expected a comma list" in out.stderr, out.stderr
    out = run("suite.py", "--sides", "graph")
    assert out.returncode == 2 and "including eager" in out.stderr, out.stderr
