// Memory pool statistics and the thread plan
// (python/msrt/runtime.py wraps these).
#include <filesystem>

#include "bindings.h"
#include "core/thread_pool.h"
#include "memory/allocator.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "runtime/eager.h"

namespace msrt::python {
namespace {

DeviceTarget DeviceArg(py::handle device) {
  if (device.is_none()) return runtime::CurrentDevice();
  if (!py::isinstance<py::str>(device)) {
    throw TypeError(StrCat("device_target must be a str ('CPU', 'GPU' or 'Ascend') or None, but got ",
                           std::string(py::str(py::type::of(device).attr("__name__"))), "."));
  }
  std::string name = py::cast<std::string>(device);
  std::optional<DeviceTarget> target = ParseDeviceTarget(name);
  if (!target) throw ValueError(StrCat("device_target must be 'CPU', 'GPU' or 'Ascend', but got '", name, "'."));
  return *target;
}

// Threads of this process as the kernel lists them.
int OsThreads() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

void BindMemory(py::module_& m) {
  m.def(
      "memory_stats",
      [](py::handle device) {
        memory::PoolStats s = memory::Stats(DeviceArg(device));
        py::dict d;
        d["allocated_bytes"] = s.allocated;
        d["peak_allocated_bytes"] = s.peak_allocated;
        d["reserved_bytes"] = s.reserved;
        d["peak_reserved_bytes"] = s.peak_reserved;
        d["cap_bytes"] = s.cap;
        d["block_size_bytes"] = s.block_size;
        d["buffer_reuse"] = s.reuse;
        d["blocks"] = s.blocks;
        d["live_buffers"] = s.live_pieces;
        d["allocations"] = s.allocations;
        d["reused_allocations"] = s.reused_allocations;
        d["failed_allocations"] = s.failed_allocations;
        return d;
      },
      py::arg("device") = py::none());
  m.def(
      "reset_peak_memory_stats", [](py::handle device) { memory::ResetPeak(DeviceArg(device)); },
      py::arg("device") = py::none());
  m.def(
      "empty_cache", [](py::handle device) { memory::EmptyCache(DeviceArg(device)); }, py::arg("device") = py::none());
  m.def(
      "memory_summary", [](py::handle device) { return memory::Summary(DeviceArg(device)); },
      py::arg("device") = py::none());
  m.def("buffer_reuse_enabled", [] { return memory::BufferReuseEnabled(); });
  m.def("thread_info", [] {
    ThreadPlan plan = CurrentThreadPlan();
    py::dict d;
    d["hardware_threads"] = plan.hardware;
    d["runtime_num_threads"] = plan.runtime_threads;
    d["inter_op_parallel_num"] = plan.inter_op;
    d["scheduler_threads"] = plan.scheduler;
    d["kernel_threads"] = plan.kernel;
    d["total_threads"] = plan.total;
    d["oversubscribed"] = plan.oversubscribed;
    d["intra_op_threads"] = IntraOpThreads();
    d["kernel_workers_running"] = KernelPoolWorkers();
    d["os_threads"] = OsThreads();
    return d;
  });
  m.def(
      "_testing_thaw_memory_pools", [] { memory::testing::ThawPools(); },
      "Test suites only: lets the memory keys change again after the pools started.");
}

}  // namespace msrt::python
