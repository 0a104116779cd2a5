"""ms.Profiler and enable_profiling / profiling_options: traces and op summaries."""
import csv
import json

import numpy as np
import pytest

import msrt as ms

from .obsutil import read_trace, train_steps


def read_summary(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_profiler_traces_ops_and_training_steps(in_tmp):
    first = ms._C.current_step()
    prof = ms.Profiler(output_path="prof")
    train_steps(3)
    prof.analyse()
    out = in_tmp / "prof" / "profiler"
    trace, ops, spans = read_trace(out / "trace_0.json")
    assert trace["otherData"]["producer"] == "msrt"
    assert {e["ph"] for e in ops + spans} == {"X"}
    assert all(e["dur"] >= 0 for e in ops + spans)
    assert {"dense", "matmul", "apply_momentum"} <= {e["name"] for e in ops}
    steps = [(e["name"], e["args"]["step"]) for e in spans if e["name"] != "data"]
    assert steps == [(n, first + i) for i in range(3) for n in ("forward_backward", "update", "step")]
    assert [e["args"]["step"] for e in spans if e["name"] == "data"] == [first, first + 1, first + 2, first + 3]
    for step in (e for e in spans if e["name"] == "step"):  # phases nest in their step
        for phase in (e for e in spans if e["args"]["step"] == step["args"]["step"] and e["name"] != "step"
                      and e["name"] != "data"):
            assert step["ts"] <= phase["ts"] and phase["ts"] + phase["dur"] <= step["ts"] + step["dur"]
    assert {e["args"]["step"] for e in ops} == {first, first + 1, first + 2}
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert "msrt rank 0" in names and any(n.startswith("kernel thread") for n in names)
    assert not any(e["ph"] == "C" for e in trace["traceEvents"])  # no memory counters unless asked

    rows = read_summary(out / "op_summary_0.csv")
    assert list(rows[0]) == ["op_type", "calls", "total_us", "avg_us", "share_percent"]
    assert sum(int(r["calls"]) for r in rows) == len(ops)
    assert abs(sum(float(r["share_percent"]) for r in rows) - 100) < 0.1
    totals = [float(r["total_us"]) for r in rows]
    assert totals == sorted(totals, reverse=True)
    dense = next(r for r in rows if r["op_type"] == "dense")
    assert int(dense["calls"]) == 3
    assert abs(float(dense["avg_us"]) * 3 - float(dense["total_us"])) < 0.01


def test_profile_memory_adds_counters(in_tmp):
    prof = ms.Profiler(output_path="prof", profile_memory=True)
    (ms.Tensor(np.ones((64, 64), np.float32)) * 2).asnumpy()
    prof.analyse()
    trace, _, _ = read_trace(in_tmp / "prof" / "profiler" / "trace_0.json")
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters and counters[0]["name"] == "memory CPU"
    assert counters[0]["args"]["allocated"] >= 64 * 64 * 4


def test_start_and_stop(in_tmp):
    prof = ms.Profiler(output_path="prof", start_profile=False)
    (ms.Tensor(np.ones(2, np.float32)) + 1).asnumpy()  # not collected
    with pytest.raises(RuntimeError, match="has not started"):
        prof.stop()
    prof.start()
    with pytest.raises(RuntimeError, match="has already started"):
        prof.start()
    (ms.Tensor(np.ones(2, np.float32)) * 3).asnumpy()
    prof.stop()
    (ms.Tensor(np.ones(2, np.float32)) - 1).asnumpy()  # not collected
    prof.analyse()
    _, ops, _ = read_trace(in_tmp / "prof" / "profiler" / "trace_0.json")
    assert [e["name"] for e in ops] == ["mul"]


def test_profiler_argument_errors(in_tmp):
    with pytest.raises(TypeError, match=r"For 'Profiler', got an unexpected argument 'output'; the arguments are "
                                        r"output_path, profile_memory and start_profile"):
        ms.Profiler(output="x")
    with pytest.raises(TypeError, match=r"'profile_memory' must be bool, but got int"):
        ms.Profiler(profile_memory=1)
    (in_tmp / "afile").write_text("x")
    with pytest.raises(OSError, match=r"the output path '.*afile' is a file; expected a directory"):
        ms.Profiler(output_path="afile")
    assert not ms._C._profiler_active()


def test_context_profiling_writes_when_turned_off(in_tmp):
    options = {"output": str(in_tmp / "ctx"), "training_trace": "on", "task_trace": "on", "profile_memory": "on"}
    ms.set_context(enable_profiling=True, profiling_options=json.dumps(options))
    assert ms._C._profiler_active()
    train_steps(2)
    ms.set_context(enable_profiling=False)
    assert not ms._C._profiler_active()
    trace, ops, spans = read_trace(in_tmp / "ctx" / "profiler" / "trace_0.json")
    assert ops and all("inputs" in e["args"] for e in ops)
    assert any(e["args"]["inputs"].startswith("float32(8, 4)") for e in ops if e["name"] == "dense")
    assert [e["name"] for e in spans].count("step") == 2
    assert any(e["ph"] == "C" for e in trace["traceEvents"])
    assert (in_tmp / "ctx" / "profiler" / "op_summary_0.csv").exists()


def test_context_profiling_options_choose_what_is_traced(in_tmp):
    ms.set_context(profiling_options=json.dumps({"result_path": str(in_tmp / "r")}), enable_profiling=True)
    train_steps(1)
    ms.set_context(enable_profiling=False)
    trace, ops, spans = read_trace(in_tmp / "r" / "profiler" / "trace_0.json")
    assert ops and not spans and "inputs" not in ops[0]["args"]
    assert not any(e["ph"] == "C" for e in trace["traceEvents"])


def test_context_profiling_is_written_at_exit(python_subprocess, tmp_path):
    python_subprocess("""
        import numpy as np
        ms.set_context(enable_profiling=True)  # profiling_options "training_trace": ./data
        (ms.Tensor(np.ones(3, np.float32)) + 2).asnumpy()
    """)
    _, ops, _ = read_trace(tmp_path / "data" / "profiler" / "trace_0.json")
    assert [e["name"] for e in ops] == ["add"]


def test_context_profiling_with_nothing_run_writes_nothing(in_tmp):
    ms.set_context(enable_profiling=True, profiling_options=json.dumps({"output": str(in_tmp / "none")}))
    ms.set_context(enable_profiling=False)
    assert not (in_tmp / "none").exists()


def test_graph_mode_runs_get_their_phases_from_their_kernels(in_tmp):
    from msrt import nn

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = nn.Dense(4, 3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9))
    x = ms.Tensor(np.ones((2, 4), np.float32))
    y = ms.Tensor(np.zeros((2, 3), np.float32))
    step(x, y)  # compiled outside the profile
    prof = ms.Profiler(output_path="prof")
    for _ in range(2):
        step(x, y)
    prof.analyse()
    trace, ops, spans = read_trace(in_tmp / "prof" / "profiler" / "trace_0.json")
    assert ops and all(e["args"]["graph"] == "TrainOneStepCell" for e in ops)
    assert any(e["args"]["node"].startswith("Gradients/") for e in ops)
    phases = [(e["name"], e["args"]["step"]) for e in spans if e["args"].get("graph") == "TrainOneStepCell"]
    assert sorted(phases) == [("forward_backward", 1), ("forward_backward", 2), ("update", 1), ("update", 2)]
    for name, run in (("forward_backward", 1), ("update", 1)):
        span = next(e for e in spans if e["name"] == name and e["args"].get("step") == run and "graph" in e["args"])
        inside = [e for e in ops if e["args"]["step"] == run and
                  (e["name"] == "apply_momentum") == (name == "update")]
        assert inside and all(span["ts"] <= e["ts"] + 1e-3 and e["ts"] + e["dur"] <= span["ts"] + span["dur"] + 1e-3
                              for e in inside)
