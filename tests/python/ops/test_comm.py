"""The collective ops (src/ops/comm.cc) across 2 and 4 local processes.

The test starts a rendezvous store and `size` worker processes
(comm_worker.py), each checking every collective against NumPy, eagerly and
in compiled graphs, with gradients, over the world and sub-groups."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import msrt as ms
from msrt import ops

from .harness import _C, covers

covers("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier", "send", "receive",
       "all_reduce_fused")

WORKER = pathlib.Path(__file__).with_name("comm_worker.py")
TIMEOUT = 120


def run_world(size, ir_dir):
    server = _C.parallel.StoreServer("127.0.0.1", 0)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), OMP_NUM_THREADS="1")
    procs = []
    try:
        for rank in range(size):
            procs.append(subprocess.Popen(
                [sys.executable, str(WORKER), "127.0.0.1", str(server.port), str(rank), str(size), str(ir_dir)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True))
        outputs = [p.communicate(timeout=TIMEOUT)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        server.stop()
    for rank, (p, out) in enumerate(zip(procs, outputs)):
        assert p.returncode == 0 and out.rstrip().endswith("OK"), f"rank {rank} of {size} failed:\n{out}"


@pytest.mark.parametrize("size", [2, 4])
def test_collectives_match_numpy_with_gradients_in_both_modes(size, tmp_path):
    run_world(size, tmp_path)
    # The first graph compiled (comm_worker.check_graph's): after the passes, both AllReduce calls and the
    # unused AllGather are still there, and the saved execution order runs them in program order.
    order = next((tmp_path / "rank0").glob("*_execution_order_0000.ir")).read_text()
    steps = re.findall(r"^\d+: (\w+) ", order, re.MULTILINE)
    assert [s for s in steps if s != "add"] == ["all_reduce", "all_reduce", "all_gather"], order


def test_collectives_need_a_group():
    x = ms.Tensor(np.ones(3, np.float32))
    with pytest.raises(RuntimeError, match=r"'no_such_group' does not exist: .*msrt.communication.init\(\) first"):
        ops.AllReduce(group="no_such_group")(x)
    with pytest.raises(ValueError, match="op"):
        ops.AllReduce(op="mean")
    with pytest.raises(TypeError):
        ops.AllGather(group=3)


def test_collectives_are_side_effects():
    for name in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "barrier", "send",
                 "receive", "all_reduce_fused"):
        assert _C.op_info(name)["side_effect"], name


OVERLAP = r"""
import time

import numpy as np

import msrt as ms
from msrt._tensor import _op

server = ms._C.parallel.StoreServer("127.0.0.1", 0)
ms._C.parallel.init_from_store("127.0.0.1", server.port, 0, 1, 20.0)
a = ms.Tensor(np.full((1024, 1024), 1e-3, np.float32))
x = ms.Tensor(np.ones(8, np.float32))


def queue_matmuls():
    b = a
    for _ in range(12):
        b = ms.ops.matmul(b, a)  # queued on the dispatcher thread
    return b


queue_matmuls()
ms.runtime.synchronize()
times = {}
for name, call in (("fused", lambda: _op("all_reduce_fused", x, op="sum", scale=2.0)),
                   ("all_reduce", lambda: ms.ops.AllReduce()(x))):
    queue_matmuls()
    queued = time.perf_counter()
    y = call()
    called = time.perf_counter()
    ms.runtime.synchronize()
    times[name] = (called - queued, time.perf_counter() - queued)
    y = y[0] if isinstance(y, tuple) else y
    assert (y.asnumpy() == (2 if name == "fused" else 1)).all(), y
print(times)
"""


def test_fused_all_reduce_does_not_wait_for_unrelated_queued_ops():
    # all_reduce_fused (waits_for_inputs_only) runs at the call while queued matmuls it does not read keep
    # running: it returns long before they finish. AllReduce first waits for every queued op.
    assert _C.op_info("all_reduce_fused")["waits_for_inputs_only"]
    assert not _C.op_info("all_reduce")["waits_for_inputs_only"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", OVERLAP], capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    times = eval(done.stdout.strip().splitlines()[-1])
    fused_call, fused_all = times["fused"]
    reduce_call, reduce_all = times["all_reduce"]
    assert fused_call < 0.25 * fused_all, times
    assert reduce_call > 0.5 * reduce_all, times
