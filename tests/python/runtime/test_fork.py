"""fork() after msrt has run (Note [Fork] in src/runtime/fork.cc): a child
keeps computing in either mode, through os.fork and multiprocessing's fork
workers, and the parent goes on unharmed."""
import multiprocessing
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import msrt as ms
from msrt import ops

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

SCRIPT = """
import os, sys
import numpy as np
import msrt as ms
from msrt import nn, ops
ms.set_context(mode=ms.GRAPH_MODE if sys.argv[1] == "graph" else ms.PYNATIVE_MODE)
ms.set_seed(0)
net = nn.SequentialCell([nn.Conv2d(3, 16, 3), nn.ReLU(), nn.MaxPool2d(2, 2)])
x = ms.Tensor(np.random.default_rng(0).standard_normal((16, 3, 64, 64)).astype(np.float32))
a = ms.Tensor(np.ones((300, 300), np.float32))
want = float(net(x).sum().asnumpy())
# Leave work queued and threads busy at the fork.
queued = [ops.matmul(a, a) for _ in range(20)]
pid = os.fork()
if pid == 0:
    got = float(net(x).sum().asnumpy())
    last = float(queued[-1].asnumpy()[0, 0])
    fresh = float(ops.matmul(a, a).asnumpy()[0, 0])
    ok = abs(got - want) <= 1e-4 * abs(want) and last == 300.0 and fresh == 300.0
    os._exit(0 if ok else 5)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
assert abs(float(net(x).sum().asnumpy()) - want) <= 1e-4 * abs(want)
print("ok")
"""


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_os_fork_child_computes(mode):
    out = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def _worker(args):
    mode, seed = args
    ms.set_context(mode=mode)
    x = ms.Tensor(np.full((32, 32), seed, np.float32))
    return float(ops.matmul(x, ms.Tensor(np.eye(32, dtype=np.float32))).sum().asnumpy())


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_multiprocessing_fork_workers_compute(mode):
    ms.set_context(mode=mode)
    warm = ops.matmul(ms.Tensor(np.ones((256, 256), np.float32)), ms.Tensor(np.ones((256, 256), np.float32)))
    assert warm.asnumpy()[0, 0] == 256.0
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        results = pool.map_async(_worker, [(mode, s) for s in range(4)]).get(timeout=60)
    assert results == [32.0 * 32 * s for s in range(4)]


def test_graph_cell_in_fork_workers():
    code = textwrap.dedent("""
        import multiprocessing, numpy as np, msrt as ms
        from msrt import nn
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.set_seed(1)
        net = nn.Dense(8, 4)
        x = ms.Tensor(np.ones((2, 8), np.float32))
        want = net(x).asnumpy()
        def work(_):
            return net(x).asnumpy().tolist()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = pool.map_async(work, range(3)).get(timeout=60)
        assert all(np.allclose(g, want) for g in got)
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
