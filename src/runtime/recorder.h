// The running data recorder (RDR): with env_config_path's rdr.enable on, a
// failing graph execution or eager kernel leaves what is needed to find out
// why under rdr.path (Note [Running data recorder] in recorder.cc). It
// observes the executors (a KernelObserver and a GraphObserver); they do not
// know it.
#pragma once

#include <atomic>
#include <string>

namespace msrt::runtime::recorder {

namespace detail {
extern std::atomic<bool> g_enabled;
}

/// Whether rdr.enable is on.
inline bool Enabled() { return detail::g_enabled.load(std::memory_order_relaxed); }

/// Writes the exit record now when rdr.mode is 2 (what the process does at
/// normal exit); returns its folder, or "" when nothing was written.
std::string WriteExitRecord() noexcept;

}  // namespace msrt::runtime::recorder
