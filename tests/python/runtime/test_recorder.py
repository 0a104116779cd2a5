"""The running data recorder (env_config_path: rdr.enable, rdr.mode,
rdr.path): failing graph executions and eager kernels leave a record under
rdr.path/rank_<id>/rdr/ (Note [Running data recorder] in
src/runtime/recorder.cc); rdr.mode 2 also writes one at normal exit."""
import json
import os
import re

import numpy as np
import pytest

import msrt as ms
from msrt import nn, ops


class Pick(nn.Cell):
    """exp, then a gather whose indices are only known when it runs."""

    def construct(self, x, idx):
        y = ops.exp(x)
        z = ops.gather(y, idx, 0)
        return z * 2


def _config(tmp_path, rdr):
    path = tmp_path / "msrt_config.json"
    path.write_text(json.dumps({"rdr": rdr}))
    return str(path)


def _records(root, kind):
    base = root / "rank_0" / "rdr"
    if not base.exists():
        return []
    return sorted(p for p in base.iterdir() if p.name.startswith(kind + "_"))


def _load(folder, name):
    with open(folder / name) as f:
        return json.load(f)


@pytest.fixture(autouse=True)
def _rank_zero(monkeypatch):
    monkeypatch.delenv("RANK_ID", raising=False)


def _bad_gather():
    x = ms.Tensor(np.arange(4, dtype=np.float32))
    bad = ms.Tensor(np.array([0, 7], np.int32))
    return x, bad


def test_a_failing_graph_execution_writes_the_graph_order_memory_and_context(tmp_path):
    out = tmp_path / "rdr"
    cfg = _config(tmp_path, {"enable": True, "mode": 1, "path": str(out)})
    ms.set_context(mode=ms.GRAPH_MODE, env_config_path=cfg)
    net = Pick()
    x, bad = _bad_gather()
    good = ms.Tensor(np.array([3, 1], np.int32))
    np.testing.assert_allclose(net(x, good).asnumpy(), 2 * np.exp([3.0, 1.0]), rtol=1e-6)
    assert _records(out, "failure") == [], "a successful run wrote a failure record"
    with pytest.raises(IndexError) as excinfo:
        net(x, bad)
    assert "out of range" in str(excinfo.value)  # the caller's error is unchanged

    [folder] = _records(out, "failure")
    assert re.fullmatch(r"failure_%d_\d+" % os.getpid(), folder.name)
    failure = _load(folder, "failure.json")
    assert failure["execution"] == "graph" and failure["op"] == "gather"
    assert failure["run"] == 1  # the second execution of the graph failed
    assert failure["error"]["type"] == "IndexError"
    assert "index 7" in failure["error"]["message"] and failure["node"] in failure["error"]["message"]
    assert [i["shape"] for i in failure["inputs"]] == [[4], [2]]
    assert [i["dtype"] for i in failure["inputs"]] == ["float32", "int32"]
    graph = failure["graph"]

    ir_files = [f for f in failure["files"] if f.endswith(".ir")]
    [order_file] = [f for f in failure["files"] if f.endswith(".exec_order")]
    ir_text = (folder / ir_files[0]).read_text()
    assert failure["node"] in ir_text and "gather" in ir_text
    order = (folder / order_file).read_text()
    assert f"# graph: {graph}" in order
    marked = [line for line in order.splitlines() if line.startswith("=> ")]
    assert len(marked) == 1, order
    step = failure["step"]
    assert marked[0].startswith(f"=> {step}: gather ") and marked[0].endswith(failure["node"])
    assert f"# failed at step {step} (marked =>)" in order
    # The steps before it are listed too (exp runs first).
    assert any(re.match(r"   \d+: exp ", line) for line in order.splitlines())

    memory = _load(folder, "memory.json")
    assert memory["pool"]["device"] == "CPU" and memory["pool"]["allocated_bytes"] > 0
    assert memory["graph_plan"]["intermediates"] >= 1 and "pool_summary" in memory
    context = _load(folder, "context.json")
    assert context["context"]["mode"] == ms.GRAPH_MODE
    assert context["context"]["env_config_path"] == cfg

    # Each failure gets its own folder.
    with pytest.raises(IndexError):
        net(x, bad)
    assert len(_records(out, "failure")) == 2


def test_an_eager_kernel_failure_records_the_op_its_inputs_memory_and_context(tmp_path):
    out = tmp_path / "rdr"
    ms.set_context(env_config_path=_config(tmp_path, {"enable": True, "path": str(out)}))
    x, bad = _bad_gather()
    with pytest.raises(IndexError):
        ops.gather(ops.exp(x), bad, 0).asnumpy()
    [folder] = _records(out, "failure")
    failure = _load(folder, "failure.json")
    assert failure["execution"] == "pynative" and failure["op"] == "gather"
    assert failure["kernel"].startswith("CPU:")
    assert failure["error"]["type"] == "IndexError" and "index 7" in failure["error"]["message"]
    assert failure["inputs"] == [{"dtype": "float32", "shape": [4], "device": "CPU"},
                                 {"dtype": "int32", "shape": [2], "device": "CPU"}]
    assert failure["attrs"]["axis"] == 0
    assert sorted(os.listdir(folder)) == ["context.json", "failure.json", "memory.json"]
    assert _load(folder, "context.json")["context"]["mode"] == ms.PYNATIVE_MODE
    assert _load(folder, "memory.json")["pool"]["allocations"] > 0


def test_nothing_is_written_when_the_recorder_is_off(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where an unset rdr.path would write
    out = tmp_path / "rdr"
    x, bad = _bad_gather()
    for settings in ({"enable": False, "mode": 2, "path": str(out)}, None):
        if settings is None:
            ms.set_context(env_config_path="")
        else:
            ms.set_context(env_config_path=_config(tmp_path, settings))
        with pytest.raises(IndexError):
            ops.gather(x, bad, 0).asnumpy()
        ms.set_context(mode=ms.GRAPH_MODE)
        with pytest.raises(IndexError):
            Pick()(x, bad)
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert not out.exists() and not (tmp_path / "rank_0").exists()


def test_an_unset_path_writes_under_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ms.set_context(env_config_path=_config(tmp_path, {"enable": True}))
    x, bad = _bad_gather()
    with pytest.raises(IndexError):
        ops.gather(x, bad, 0).asnumpy()
    assert len(_records(tmp_path, "failure")) == 1


def test_a_malformed_rdr_config_is_refused_and_the_recorder_keeps_its_settings(tmp_path):
    out = tmp_path / "rdr"
    good = _config(tmp_path, {"enable": True, "path": str(out)})
    ms.set_context(env_config_path=good)
    cases = [
        ({"rdr": {"enable": "yes"}}, "'rdr.enable' should be true or false"),
        ({"rdr": {"mode": 3}}, "'rdr.mode' should be 1"),
        ({"rdr": {"path": "relative/dir"}}, "'rdr.path' should be an absolute directory path"),
        ({"rdr": {"enabled": True}}, "unknown key 'enabled'"),
    ]
    for n, (content, expected) in enumerate(cases):
        bad = tmp_path / f"bad{n}.json"
        bad.write_text(json.dumps(content))
        with pytest.raises(ValueError) as excinfo:
            ms.set_context(env_config_path=str(bad))
        assert expected in str(excinfo.value) and "env_config_path" in str(excinfo.value)
        assert ms.get_context("env_config_path") == good
    x, bad_idx = _bad_gather()
    with pytest.raises(IndexError):
        ops.gather(x, bad_idx, 0).asnumpy()
    assert len(_records(out, "failure")) == 1


def test_an_unwritable_path_does_not_hide_the_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    ms.set_context(env_config_path=_config(tmp_path, {"enable": True, "path": str(blocker)}))
    x, bad = _bad_gather()
    with pytest.raises(IndexError, match="out of range"):
        ops.gather(x, bad, 0).asnumpy()


EXIT_SCRIPT = """
import numpy as np
from msrt import nn, ops
class Twice(nn.Cell):
    def construct(self, x):
        return ops.exp(x) * 2
ms.set_context(mode=ms.GRAPH_MODE, env_config_path={cfg!r})
net = Twice()
x = ms.Tensor(np.ones((3,), np.float32))
for _ in range(3):
    net(x)
net(ms.Tensor(np.ones((5,), np.float32)))  # another signature: a second graph
print("RESULT=" + json.dumps({{"pid": __import__("os").getpid()}}))
"""


@pytest.mark.parametrize("mode", [1, 2])
def test_mode_2_writes_the_graphs_that_ran_at_normal_exit(tmp_path, python_subprocess, mode):
    out = tmp_path / "rdr"
    cfg = _config(tmp_path, {"enable": True, "mode": mode, "path": str(out)})
    proc = python_subprocess(EXIT_SCRIPT.format(cfg=cfg), env={"RANK_ID": None})
    exits = _records(out, "exit")
    assert _records(out, "failure") == []
    if mode == 1:
        assert exits == []
        return
    [folder] = exits
    assert folder.name == f"exit_{proc.result['pid']}_0"
    graphs = _load(folder, "graphs.json")
    assert [g["runs"] for g in graphs] == [3, 1]
    for g in graphs:
        ir_text = (folder / g["ir"]).read_text()
        assert "exp" in ir_text
        order = (folder / g["exec_order"]).read_text()
        assert f"# graph: {g['graph']}" in order and "=>" not in order
        assert g["memory_plan"]["intermediates"] >= 1
    assert graphs[0]["ir"] != graphs[1]["ir"]
    assert _load(folder, "context.json")["context"]["mode"] == ms.GRAPH_MODE
    assert _load(folder, "memory.json")["pool"]["allocations"] > 0


def test_a_graph_memory_error_from_the_capped_pool_is_recorded(tmp_path, python_subprocess):
    out = tmp_path / "rdr"
    cfg = _config(tmp_path, {"enable": True, "path": str(out)})
    proc = python_subprocess(
        f"""
        import numpy as np
        from msrt import nn, ops
        class Grow(nn.Cell):
            def construct(self, x):
                return ops.tile(ops.exp(x), (64, 1, 1))   # 64 x 4 MiB: past the cap
        ms.set_context(mode=ms.GRAPH_MODE, max_device_memory="0.1GB", env_config_path={cfg!r})
        try:
            Grow()(ms.Tensor(np.zeros((1024, 1024), np.float32)))
            print("RESULT=" + json.dumps(None))
        except MemoryError as e:
            print("RESULT=" + json.dumps(str(e)))
        """,
        env={"RANK_ID": None},
    )
    assert proc.result is not None and "max_device_memory" in proc.result
    [folder] = _records(out, "failure")
    failure = _load(folder, "failure.json")
    assert failure["error"]["type"] == "MemoryError" and failure["op"] == "tile"
    marked = [line for line in (folder / [f for f in failure["files"] if f.endswith(".exec_order")][0])
              .read_text().splitlines() if line.startswith("=> ")]
    assert len(marked) == 1 and ": tile " in marked[0]
    assert _load(folder, "memory.json")["pool"]["failed_allocations"] >= 1
