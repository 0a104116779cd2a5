"""The device memory pool: statistics, the max_device_memory cap and its
MemoryError, mempool_block_size, freezing, and sys.mem_Reuse.

The suite's process thaws the memory keys before each test (conftest);
behaviour that needs a fresh pool (caps, block sizes, freezing) runs in a
subprocess.
"""
import json

import numpy as np
import pytest

import msrt as ms

GiB = 1 << 30
MiB = 1 << 20


def _sync(t):
    t.asnumpy()
    return t


def test_statistics_follow_tensors():
    ms.runtime.reset_peak_memory_stats()
    before = ms.runtime.memory_allocated()
    x = ms.Tensor(np.ones((512, 1024), np.float32))  # 2 MiB
    assert ms.runtime.memory_allocated() >= before + 2 * MiB
    y = _sync(x + x)
    assert ms.runtime.memory_allocated() >= before + 4 * MiB
    peak = ms.runtime.max_memory_allocated()
    assert peak >= before + 4 * MiB
    assert ms.runtime.memory_reserved() >= ms.runtime.memory_allocated()
    assert ms.runtime.max_memory_reserved() >= ms.runtime.memory_reserved()
    del x, y
    ms.runtime.synchronize()
    assert ms.runtime.memory_allocated() <= before
    assert ms.runtime.max_memory_allocated() == peak  # peaks stay
    ms.runtime.reset_peak_memory_stats()
    assert ms.runtime.max_memory_allocated() == ms.runtime.memory_allocated()


def test_stats_dict_and_summary():
    x = _sync(ms.Tensor(np.ones(1000, np.float32)) * 2)
    stats = ms.runtime.memory_stats()
    assert stats["allocated_bytes"] == ms.runtime.memory_allocated()
    assert stats["live_buffers"] >= 1 and stats["blocks"] >= 1
    assert stats["block_size_bytes"] == int(ms.get_context("mempool_block_size") * GiB)
    assert stats["allocations"] >= stats["reused_allocations"]
    text = ms.runtime.memory_summary()
    assert text.startswith("Memory pool of CPU")
    for row in ("allocated", "peak allocated", "reserved", "cap", "block size", "buffer reuse           on"):
        assert row in text
    assert ms.runtime.memory_summary("CPU").startswith("Memory pool of CPU")
    del x


def test_device_argument_is_checked():
    with pytest.raises(ValueError, match="'CPU', 'GPU' or 'Ascend', but got 'TPU'"):
        ms.runtime.memory_allocated("TPU")
    with pytest.raises(TypeError, match="must be a str"):
        ms.runtime.memory_allocated(0)
    with pytest.raises(RuntimeError, match="No memory pool for device 'Ascend'"):
        ms.runtime.memory_allocated("Ascend")


def test_cap_follows_the_keys_before_the_pool_starts():
    # (The conftest thawed the pool: the keys may change, and the limits follow.)
    ms.set_context(max_device_memory="3GB")
    assert ms.runtime.memory_stats()["cap_bytes"] == 3 * GiB
    with pytest.warns(ms.ContextDeprecationWarning):
        ms.set_context(variable_memory_max_size="2GB")  # the deprecated form: the smaller cap wins
    assert ms.runtime.memory_stats()["cap_bytes"] == 2 * GiB
    ms.set_context(mempool_block_size="2GB")
    assert ms.runtime.memory_stats()["block_size_bytes"] == 2 * GiB


def test_a_request_beyond_the_cap_raises_memory_error_and_the_process_goes_on(python_subprocess):
    proc = python_subprocess(
        """
        import numpy as np
        ms.set_context(max_device_memory="0.25GB")
        out = {}
        a = ms.ops.zeros((150, 1024, 256), ms.float32)      # 150 MiB
        a.asnumpy()
        try:
            b = ms.ops.zeros((150, 1024, 256), ms.float32)  # 150 MiB more: over the cap
            out["error"] = None
        except MemoryError as e:
            out["error"] = str(e)
        out["allocated_after_error"] = ms.runtime.memory_allocated()
        small = ms.ops.ones((4, 4), ms.float32) * 3          # smaller work still runs
        out["small"] = float(small.asnumpy().sum())
        del a
        b = ms.ops.zeros((150, 1024, 256), ms.float32)      # the retried step fits now
        out["retry"] = float(b.asnumpy()[0, 0, 0])
        out["stats"] = ms.runtime.memory_stats()
        print("RESULT=" + json.dumps(out))
        """
    )
    out = proc.result
    error = out["error"]
    assert error is not None, "no MemoryError"
    for token in ("max_device_memory", '"0.25GB"', str(150 * MiB) + " bytes", "allocated to tensors",
                  "reserved by the pool"):
        assert token in error, (token, error)
    assert out["small"] == 48.0
    assert out["retry"] == 0.0
    assert out["stats"]["failed_allocations"] == 1
    assert out["stats"]["cap_bytes"] == GiB // 4
    assert out["stats"]["reserved_bytes"] <= GiB // 4


def test_variable_memory_max_size_caps_the_pool(python_subprocess):
    proc = python_subprocess(
        """
        warnings.simplefilter("ignore")
        ms.set_context(variable_memory_max_size="1GB")
        try:
            ms.ops.zeros((1200, 1024, 256), ms.float32)      # 1.17 GiB
            print("RESULT=" + json.dumps(None))
        except MemoryError as e:
            print("RESULT=" + json.dumps(str(e)))
        """
    )
    assert proc.result is not None and 'variable_memory_max_size="1GB"' in proc.result


def test_the_block_size_is_the_growth_unit(python_subprocess):
    # (Growth past a block, and blocks of their own, are tested on small blocks in C++.)
    proc = python_subprocess(
        """
        ms.set_context(mempool_block_size="2GB")
        x = ms.ops.ones((256, 1024), ms.float32)
        x.asnumpy()
        first = ms.runtime.memory_stats()
        y = ms.ops.ones((64, 1024, 1024), ms.int8)          # 64 MiB more: the same block
        y.asnumpy()
        second = ms.runtime.memory_stats()
        print("RESULT=" + json.dumps([[s["reserved_bytes"], s["blocks"]] for s in (first, second)]))
        """
    )
    assert proc.result == [[2 * GiB, 1], [2 * GiB, 1]]


def test_untouched_block_memory_is_not_resident(python_subprocess):
    proc = python_subprocess(
        """
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        ms.set_context(mempool_block_size="4GB")
        before = rss()
        x = ms.ops.ones((16, 16), ms.float32)
        x.asnumpy()
        print("RESULT=" + json.dumps([ms.runtime.memory_reserved(), rss() - before]))
        """
    )
    reserved, grown = proc.result
    assert reserved == 4 * GiB
    assert grown < 256 * MiB


def test_the_memory_keys_freeze_when_the_pool_starts(python_subprocess):
    proc = python_subprocess(
        """
        warnings.simplefilter("ignore")
        ms.set_context(max_device_memory="8GB", mempool_block_size="2GB")   # before: fine
        out = {"frozen_before": ms.context.explain("max_device_memory")["frozen"]}
        x = ms.Tensor([1.0, 2.0])
        e = ms.context.explain("max_device_memory")
        out["frozen_after"] = [e["frozen"], e["frozen_reason"]]
        ms.set_context(max_device_memory="8GB")                             # the same value: fine
        errors = []
        for key, value in (("max_device_memory", "4GB"), ("mempool_block_size", "1GB"),
                           ("variable_memory_max_size", "3GB")):
            try:
                ms.set_context(**{key: value})
                errors.append(None)
            except Exception as exc:
                errors.append([type(exc).__name__, str(exc)])
        out["errors"] = errors
        out["cap"] = ms.runtime.memory_stats()["cap_bytes"]
        out["consumers"] = ms.context.explain("max_device_memory")["consumers"]
        print("RESULT=" + json.dumps(out))
        """
    )
    out = proc.result
    assert out["frozen_before"] is False
    assert out["frozen_after"][0] is True and "memory pool started" in out["frozen_after"][1]
    for (key, value), error in zip((("max_device_memory", "4GB"), ("mempool_block_size", "1GB"),
                                    ("variable_memory_max_size", "3GB")), out["errors"]):
        assert error is not None and error[0] == "RuntimeError", (key, error)
        assert f"'{key}'" in error[1] and "memory pool started" in error[1]
    assert out["cap"] == 8 * GiB
    assert "device memory pool" in out["consumers"]


def test_importing_msrt_does_not_start_the_pool(python_subprocess):
    proc = python_subprocess(
        """
        print("RESULT=" + json.dumps([ms.runtime.memory_stats()["allocations"],
                                      ms.context.explain("mempool_block_size")["frozen"]]))
        """
    )
    assert proc.result == [0, False]


# ---------------------------------------------------------------------------
# sys.mem_Reuse (env_config_path).


def _write_config(path, reuse):
    path.write_text(json.dumps({"sys": {"mem_Reuse": reuse}}))
    return str(path)


def _reuse_count(steps):
    """Allocations served from freed memory during `steps` add-and-drop steps."""
    x = ms.Tensor(np.ones((64, 1024), np.float32))
    _sync(x)
    ms.runtime.synchronize()
    start = ms.runtime.memory_stats()["reused_allocations"]
    for _ in range(steps):
        _sync(x + 1)
        ms.runtime.synchronize()
    return ms.runtime.memory_stats()["reused_allocations"] - start


def test_mem_reuse_false_turns_buffer_reuse_off(tmp_path):
    assert ms._C.buffer_reuse_enabled() is True
    assert _reuse_count(10) >= 9  # each step's buffer is the last one's
    ms.set_context(env_config_path=_write_config(tmp_path / "off.json", False))
    assert ms._C.buffer_reuse_enabled() is False
    assert ms.runtime.memory_stats()["buffer_reuse"] is False
    assert "buffer reuse           off" in ms.runtime.memory_summary()
    assert _reuse_count(10) == 0
    ms.set_context(env_config_path=_write_config(tmp_path / "on.json", True))
    assert ms._C.buffer_reuse_enabled() is True
    assert _reuse_count(10) >= 9


def test_mem_reuse_must_be_a_bool(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"sys": {"mem_Reuse": "no"}}')
    with pytest.raises(ValueError) as excinfo:
        ms.set_context(env_config_path=str(path))
    text = str(excinfo.value)
    assert "sys.mem_Reuse" in text and "true or false" in text and '"no"' in text
    assert ms._C.buffer_reuse_enabled() is True


def test_the_pynative_queue_holds_a_bounded_number_of_bytes():
    # Note [Eager backpressure]: ops taken by the dispatcher at most a few MiB of outputs behind the caller, even
    # when the depth bound (64 ops here) would let 256 MiB of 4 MiB temporaries wait in the queue.
    ms.set_context(pynative_queue_depth=64)
    x = _sync(ms.Tensor(np.ones((1024, 1024), np.float32)))  # 4 MiB per output
    ms.runtime.synchronize()
    ms.runtime.reset_peak_memory_stats()
    before = ms.runtime.memory_allocated()
    for _ in range(200):
        y = ms.ops.exp(x) * 1.0001
    _sync(y)
    grown = ms.runtime.max_memory_allocated() - before
    # Queued outputs (4 MiB and one op over it), the ops running and Python's live ones: a handful of 4 MiB
    # tensors, where 64 queued ops would hold 64 outputs and their dropped inputs.
    assert grown <= 48 * MiB, grown / MiB
