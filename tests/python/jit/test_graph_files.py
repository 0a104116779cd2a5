"""Graphs on disk: the persistent compile cache and ms.export / ms.load."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import msrt as ms
from msrt import nn

from .helpers import SmallNet, batches

NET_SOURCE = '''
import msrt as ms
from msrt import nn

TRACES = []


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 3)

    def construct(self, x):
        TRACES.append(1)  # runs only when the graph is captured
        return ms.ops.relu(self.dense(x)) * 2.0
'''

MAIN_SOURCE = '''
import json, sys, warnings
import numpy as np
import msrt as ms
import net

ms.set_seed(0)
settings = json.loads(sys.argv[1])
ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True, compile_cache_path=sys.argv[2], **settings)
model = net.Net()
x = ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = model(x).asnumpy()
report = ms._jit.compile_report(model)[0]
print("RESULT=" + json.dumps({"out": out.tolist(), "cache": report["compile_cache"], "traces": len(net.TRACES),
                              "warnings": [str(w.message) for w in caught], "seconds": report["seconds"]}))
'''


def _run(tmp_path, settings=None):
    env = dict(os.environ, MSRT_BUILD_DIR=os.environ.get("MSRT_BUILD_DIR", ""))
    proc = subprocess.run([sys.executable, str(tmp_path / "main.py"), json.dumps(settings or {}),
                           str(tmp_path / "cache")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(s for s in proc.stdout.splitlines() if s.startswith("RESULT="))
    return json.loads(line[len("RESULT="):])


@pytest.fixture
def project(tmp_path):
    (tmp_path / "net.py").write_text(NET_SOURCE)
    (tmp_path / "main.py").write_text(MAIN_SOURCE)
    return tmp_path


def test_a_second_process_loads_the_cached_graph_without_capturing(project):
    first = _run(project)
    assert first["cache"] == "stored" and first["traces"] == 1
    cache_dir = project / "cache" / "rank_0" / "graph_cache"
    assert (cache_dir / "compile_cache_0.msgraph").is_file()
    hashes = (cache_dir / "compile_dependency.hash").read_text().split()
    assert hashes[0] == "0" and len(hashes[1]) == 64  # a SHA-256 per entry
    second = _run(project)
    assert second["cache"] == "loaded" and second["traces"] == 0 and second["warnings"] == []
    assert second["out"] == first["out"]


def test_a_changed_source_file_recompiles_with_a_warning(project):
    _run(project)
    (project / "net.py").write_text(NET_SOURCE.replace("* 2.0", "* 3.0"))
    again = _run(project)
    assert again["cache"] == "stored" and again["traces"] == 1
    assert any("out of date" in w for w in again["warnings"])
    assert _run(project)["cache"] == "loaded"  # the rewritten entry serves the next run


def test_a_changed_compile_key_recompiles(project):
    _run(project)
    again = _run(project, {"memory_optimize_level": "O1"})
    assert again["cache"] == "stored" and any("out of date" in w for w in again["warnings"])


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_a_corrupt_cache_file_recompiles_with_a_warning(project, damage):
    first = _run(project)
    entry = project / "cache" / "rank_0" / "graph_cache" / "compile_cache_0.msgraph"
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"MSRTGRPH" + os.urandom(64))
    again = _run(project)
    assert again["cache"] == "stored" and again["traces"] == 1
    assert any("can not be read" in w for w in again["warnings"])
    assert again["out"] == first["out"]


# --- export / load ----------------------------------------------------------------------------------
def test_export_and_load_run_the_same_network(tmp_path):
    net = SmallNet()
    x = batches(1)[0][0]
    expected = net(x).asnumpy()
    path = ms.export(net, x, file_name=str(tmp_path / "small"), file_format="MINDIR")
    assert path.endswith("small.mindir") and os.path.isfile(path)
    graph = ms.load(path)
    cell = nn.GraphCell(graph)
    np.testing.assert_allclose(cell(x).asnumpy(), expected, rtol=1e-6)
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_allclose(cell(x).asnumpy(), expected, rtol=1e-6)
    # The weights travel in the file: a fresh process reproduces the result.
    code = textwrap.dedent(f"""
        import numpy as np, msrt as ms
        from msrt import nn
        x = ms.Tensor(np.load({str(tmp_path / 'x.npy')!r}))
        print(nn.GraphCell(ms.load({path!r}))(x).asnumpy().tolist())
    """)
    np.save(tmp_path / "x.npy", x.asnumpy())
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    np.testing.assert_allclose(np.array(json.loads(out.stdout)), expected, rtol=1e-6)


def test_a_loaded_graph_called_inside_a_compiled_network_is_inlined(tmp_path):
    backbone = SmallNet()
    x = batches(1)[0][0]
    loaded = nn.GraphCell(ms.load(ms.export(backbone, x, file_name=str(tmp_path / "backbone"))))

    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(5, 2)

        def construct(self, x):
            return self.dense(ms.ops.relu(loaded(x)))

    head = Head()
    loss = lambda x: head(x).sum()  # noqa: E731
    eager_out, eager_grad = head(x).asnumpy(), ms.grad(loss)(x).asnumpy()
    assert np.abs(eager_grad).sum() > 0  # under a gradient tape the loaded graph runs op by op
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no eager fallback
            graph_out = head(x).asnumpy()
            graph_grad = ms.jit(ms.grad(loss))(x).asnumpy()
        report = ms._jit.compile_report(head)[0]
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(graph_out, eager_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(graph_grad, eager_grad, rtol=1e-5, atol=1e-6)
    assert report["channels_last_ops"] == 3  # the loaded convolution's ops are the caller's own now
    with pytest.raises(ValueError,
                       match=r"'SmallNet' takes input 0 as Float32\(4, 1, 8, 8\), but got Float32\(2, 1, 8, 8\)"):
        ms.jit(lambda x: loaded(x))(batches(1, batch=2)[0][0])


def test_load_rejects_missing_and_corrupt_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        ms.load(str(tmp_path / "none.mindir"))
    path = ms.export(nn.ReLU(), ms.Tensor(np.ones(3, np.float32)), file_name=str(tmp_path / "relu"))
    data = open(path, "rb").read()
    for bad in (data[:40], data[:-3], b"not a graph at all"):
        (tmp_path / "bad.mindir").write_bytes(bad)
        with pytest.raises(ValueError, match="not a valid msrt graph file"):
            ms.load(str(tmp_path / "bad.mindir"))
    graph = ms.load(path)
    with pytest.raises(TypeError, match="takes 1 Tensors"):
        nn.GraphCell(graph)(1.0)


def test_export_refuses_tensor_dependent_control_flow(tmp_path):
    class Branchy(nn.Cell):
        def construct(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(RuntimeError, match="depends on a Tensor's value"):
        ms.export(Branchy(), ms.Tensor(np.ones(2, np.float32)), file_name=str(tmp_path / "b"))
    with pytest.raises(ValueError, match="file_format='MINDIR'"):
        ms.export(nn.ReLU(), ms.Tensor(np.ones(2, np.float32)), file_name=str(tmp_path / "r"), file_format="ONNX")
