// The running data recorder (RDR): with env_config_path's rdr.enable on, a
// failing graph execution or eager kernel leaves what is needed to find out
// why under rdr.path (Note [Running data recorder] in recorder.cc).
#pragma once

#include <atomic>
#include <cstddef>
#include <string_view>
#include <vector>

#include "msrt/core/errors.h"
#include "msrt/tensor/tensor.h"

namespace msrt::runtime {

class GraphExecutable;

namespace recorder {

namespace detail {
extern std::atomic<bool> g_enabled;
}

/// Whether rdr.enable is on: one relaxed load, so callers pay nothing else
/// while the recorder is off.
inline bool Enabled() { return detail::g_enabled.load(std::memory_order_relaxed); }

/// What failed in a graph execution.
struct GraphFailure {
  size_t step;                        // index in the execution order
  std::string_view op;                // op name
  std::string_view node;              // IR node name
  std::string_view source;            // where the node was defined ("" if unknown)
  ErrorKind kind;
  std::string_view message;           // the error as raised to the caller
  const std::vector<Tensor>& inputs;  // the failing step's inputs
};

/// Writes a failure record for `executable` (graph IR, execution order with
/// the failing step marked, memory, context). Never throws: a recorder that
/// cannot write logs why and lets the original error go on.
void GraphFailed(const GraphExecutable& executable, const GraphFailure& failure) noexcept;

/// Notes that `executable` ran, for the record rdr.mode 2 writes at exit.
void GraphRan(const GraphExecutable& executable) noexcept;

/// Writes the exit record now when rdr.mode is 2 (what the process does at
/// normal exit); returns its folder, or "" when nothing was written.
std::string WriteExitRecord() noexcept;

}  // namespace recorder
}  // namespace msrt::runtime
