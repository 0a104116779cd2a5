// The profiler: per-kernel spans (a KernelObserver, so both execution modes),
// training-loop spans marked by the host, and memory counters, written as a
// Chrome trace (opens in Perfetto) and an op summary table (Note [Profiler
// output] in profiler.cc). `ms.Profiler` and the context keys
// enable_profiling / profiling_options both drive Sessions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "msrt/core/value.h"

namespace msrt::runtime::profiler {

struct Options {
  std::string output_path = "./data";  // results go to <output_path>/profiler/
  bool training_trace = true;          // record host spans (steps and their phases)
  bool op_details = false;             // op spans carry input dtypes and shapes
  bool profile_memory = false;         // memory counters after each kernel
};

/// Options of ms.Profiler(**kwargs): output_path (str), profile_memory (bool),
/// start_profile (bool, returned in `start`). TypeError for unknown names or
/// wrong types.
Options ParseProfilerArgs(const Dict& kwargs, bool* start);
/// Options of the context key profiling_options (a trace name or a JSON
/// object, already validated by the context).
Options ParseProfilingOptions(const std::string& text);

/// One collection: events recorded between Start and Stop (several pairs
/// allowed), written by Write. Sessions may overlap; each records everything
/// that happens while it runs. Thread-safe.
class Session {
 public:
  explicit Session(Options options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// RuntimeError if already running.
  void Start();
  /// Waits for queued eager kernels, then stops; RuntimeError if not running.
  void Stop();
  bool running() const;
  const Options& options() const;
  /// Whether nothing has been recorded.
  bool empty() const;

  /// Writes trace_<rank>.json and op_summary_<rank>.csv into
  /// <output_path>/profiler/ (created); returns their paths. OSError when
  /// they cannot be written.
  std::vector<std::string> Write() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

/// Host spans: a training step or a phase of one ("data", "forward_backward",
/// "update"), tagged with the current step (runtime/step.h). They nest per
/// thread and are recorded by running sessions with training_trace.
void BeginSpan(std::string name);
void EndSpan();
/// Whether any session is running (callers skip marking spans otherwise).
bool Active();

}  // namespace msrt::runtime::profiler
