"""Ctrl-C and PYNATIVE backpressure (Note [Interrupts] in src/core/interrupt.h,
Note [Eager backpressure] in src/runtime/eager.cc).

Each interrupt test runs a training-like loop in a child process, sends it
SIGINT and checks it raises KeyboardInterrupt within a second."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import msrt as ms
from msrt import ops

CHILD_PRELUDE = """
import sys, time
import numpy as np
import msrt as ms
from msrt import ops
def ready():
    print("ready", flush=True)
"""


def _interrupt(body, warmup_timeout=60):
    """Runs `body` in a child; SIGINT once it printed 'ready'; returns
    (seconds from the signal to the child's exit, its output)."""
    code = CHILD_PRELUDE + textwrap.dedent(body) + textwrap.dedent("""
        try:
            main()
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(0)
        print("finished without interrupt", flush=True)
        sys.exit(3)
    """)
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    try:
        deadline = time.monotonic() + warmup_timeout
        lines = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.strip() == "ready":
                break
        assert lines and lines[-1].strip() == "ready", "".join(lines)
        time.sleep(0.3)  # well inside the loop
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return elapsed, "".join(lines) + out, proc.returncode


def _assert_stopped(result):
    elapsed, out, code = result
    assert code == 0 and "KeyboardInterrupt" in out, out
    # The child exits within a second of the signal (interpreter teardown included).
    assert elapsed < 1.5, f"took {elapsed:.2f} s to stop: {out}"


def test_ctrl_c_stops_a_pynative_loop_that_never_reads_a_value():
    _assert_stopped(_interrupt("""
        def main():
            x = ms.Tensor(np.ones((256, 256), np.float32))
            ready()
            while True:
                x = ops.tanh(ops.matmul(x, x) * 0.001)
    """))


def test_ctrl_c_stops_a_pynative_wait_for_a_value():
    _assert_stopped(_interrupt("""
        def main():
            x = ms.Tensor(np.ones((384, 384), np.float32))
            ready()
            while True:
                for _ in range(60):
                    x = ops.tanh(ops.matmul(x, x) * 0.001)
                x.asnumpy()
    """))


def test_ctrl_c_stops_a_graph_loop():
    _assert_stopped(_interrupt("""
        ms.set_context(mode=ms.GRAPH_MODE)
        @ms.jit
        def step(x):
            for _ in range(40):
                x = ops.tanh(ops.matmul(x, x) * 0.001)
            return x
        def main():
            x = ms.Tensor(np.ones((512, 512), np.float32))
            step(x).asnumpy()
            ready()
            while True:
                x = step(x)
    """))


def test_ctrl_c_stops_a_long_pynative_synchronize_kernel():
    _assert_stopped(_interrupt("""
        ms.set_context(pynative_synchronize=True)
        def main():
            x = ms.Tensor(np.ones((600, 600), np.float64))
            ready()
            while True:
                # float64 matmul runs the reference loops, which stop at cancellation points
                x = ops.matmul(x, x) * 0.001
    """))


def test_after_an_interrupt_the_runtime_computes_again():
    x = ms.Tensor(np.ones((64, 64), np.float32))
    before = ms._C._interrupt_count()
    ms._C._request_interrupt()
    assert ms._C._interrupt_count() == before + 1
    y = ops.matmul(x, x)
    np.testing.assert_allclose(y.asnumpy(), np.full((64, 64), 64.0))


def test_ops_queued_before_an_interrupt_are_dropped_with_an_error():
    ms.set_context(pynative_queue_depth=64)
    x = ms.Tensor(np.ones((256, 256), np.float32))
    outs = []
    for _ in range(40):
        x = ops.tanh(ops.matmul(x, x) * 0.001)
        outs.append(x)
    ms._C._request_interrupt()
    with pytest.raises(RuntimeError, match="interrupted"):
        outs[-1].asnumpy()
    fresh = ops.matmul(ms.Tensor(np.ones((4, 4), np.float32)), ms.Tensor(np.ones((4, 4), np.float32)))
    np.testing.assert_allclose(fresh.asnumpy(), np.full((4, 4), 4.0))


# --- backpressure ------------------------------------------------------------------------
def test_queue_depth_is_a_context_key():
    assert ms.get_context("pynative_queue_depth") == 64
    ms.set_context(pynative_queue_depth=8)
    assert ms.get_context("pynative_queue_depth") == 8
    with pytest.raises(ValueError, match="pynative_queue_depth"):
        ms.set_context(pynative_queue_depth=0)
    with pytest.raises(TypeError, match="pynative_queue_depth"):
        ms.set_context(pynative_queue_depth=True)
    assert ms.get_context("pynative_queue_depth") == 8


def test_peak_memory_of_a_loop_that_never_reads_does_not_grow_with_steps():
    code = textwrap.dedent("""
        import numpy as np, msrt as ms
        from msrt import ops
        def rss_mb():
            return int(open('/proc/self/statm').read().split()[1]) * 4096 / 2**20
        x = ms.Tensor(np.ones((512, 512), np.float32))  # 1 MiB per output
        marks = []
        for i in range(1, 3001):
            y = ops.exp(x) * 1.0001
            if i in (300, 3000):
                marks.append(rss_mb())
        ms._C.synchronize()
        print(marks[0], marks[1])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    early, late = map(float, out.stdout.split())
    # 64 queued ops of 1 MiB each at most; an unbounded queue grows by ~5 GiB here.
    assert late < early + 64, (early, late)
    assert late < 400, (early, late)
