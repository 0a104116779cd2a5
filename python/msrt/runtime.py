"""Runtime state: device memory pool statistics and the runtime's threads.

    import msrt as ms
    ms.runtime.memory_allocated()      # bytes held by live tensors on the current device
    print(ms.runtime.memory_summary())
    ms.runtime.thread_info()           # how runtime_num_threads / inter_op_parallel_num were applied

`device_target` is "CPU", "GPU" or "Ascend"; None (the default) means the
context's current device_target. See docs/runtime.md.
"""
from . import _C


def synchronize():
    """Waits until every queued operator has run (and freed what it held)."""
    _C.synchronize()


def memory_allocated(device_target=None):
    """Bytes of the device's memory pool held by live tensors."""
    return _C.memory_stats(device_target)["allocated_bytes"]


def max_memory_allocated(device_target=None):
    """The most bytes held by live tensors since the pool started or the
    last reset_peak_memory_stats()."""
    return _C.memory_stats(device_target)["peak_allocated_bytes"]


def memory_reserved(device_target=None):
    """Bytes of device memory the pool holds (live tensors plus cached blocks)."""
    return _C.memory_stats(device_target)["reserved_bytes"]


def max_memory_reserved(device_target=None):
    """The most bytes the pool held since it started or the last reset."""
    return _C.memory_stats(device_target)["peak_reserved_bytes"]


def reset_peak_memory_stats(device_target=None):
    """Restarts the peaks from the current usage."""
    _C.reset_peak_memory_stats(device_target)


def memory_stats(device_target=None):
    """Every counter of the device's pool as a dict (bytes, counts, cap, block size, reuse)."""
    return dict(_C.memory_stats(device_target))


def memory_summary(device_target=None):
    """A readable table of the device's pool."""
    return _C.memory_summary(device_target)


def empty_cache(device_target=None):
    """Returns the blocks no tensor lives in to the device."""
    _C.empty_cache(device_target)


def thread_info():
    """How the runtime's threads are sized and how many run now.

    Keys: hardware_threads; runtime_num_threads and inter_op_parallel_num
    (after the cap by the hardware); scheduler_threads, kernel_threads and
    total_threads (the plan of docs/runtime.md); intra_op_threads (threads a
    parallel kernel loop runs on: the kernel threads plus the launching
    thread); kernel_workers_running (kernel threads started so far);
    os_threads (threads of this process, from /proc/self/task).
    """
    return dict(_C.thread_info())


__all__ = [
    "synchronize",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "reset_peak_memory_stats",
    "memory_stats",
    "memory_summary",
    "empty_cache",
    "thread_info",
]
