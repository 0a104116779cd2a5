// Running one kernel: the seam every executor (eager dispatcher, graph
// executor) goes through, so instruments (kernel dumps, the profiler, op
// timeouts) observe both modes from outside the executors.
#pragma once

#include <string_view>
#include <vector>

#include "kernels/kernel.h"

namespace msrt::runtime {

/// Where a kernel launch comes from.
struct LaunchSite {
  std::string_view graph;  // the compiled graph's name; empty in PYNATIVE_MODE
  std::string_view node;   // the IR node's full name (scope/op-id); empty in PYNATIVE_MODE
  uint64_t iteration = 0;  // graph executions (or eager steps) so far
};

/// One kernel launch as observers see it.
struct LaunchEvent {
  const kernels::KernelDef& kernel;
  const ops::OpDef& op;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  const Dict& attrs;
  const LaunchSite& site;
};

/// Watches kernel launches. Before() runs on the launching thread right
/// before the kernel, After() right after it succeeds; both may throw to
/// fail the launch (the error is reported as the op's error). When the
/// kernel or a later observer's Before() throws, Aborted() runs instead of
/// After() for every observer whose Before() returned.
class KernelObserver {
 public:
  virtual ~KernelObserver() = default;
  virtual void Before(const LaunchEvent& event) { (void)event; }
  virtual void After(const LaunchEvent& event) { (void)event; }
  virtual void Aborted(const LaunchEvent& event) noexcept { (void)event; }
};

/// Observers are called in the order they were added. Adding or removing
/// one while kernels run on other threads is safe.
void AddKernelObserver(KernelObserver* observer);
void RemoveKernelObserver(KernelObserver* observer);

/// Runs `kernel` and notifies the observers. Costs one relaxed atomic load
/// when there are none.
void LaunchKernel(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>& outputs, const Dict& attrs, const LaunchSite& site, const void* plan = nullptr);

}  // namespace msrt::runtime
