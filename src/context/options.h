// Typed handles of the keys the runtime reads, one per key, defined by the
// family's table file next to its records (runtime_options.cc,
// parallel_options.cc). Consumers read, subscribe, declare and freeze
// through these and never spell a key; the source_option_keys test fails on
// a `Family::kX, "key"` outside src/context/.
//
// Each handle is built on first use (a function-local static), so consumers
// may use them from their own load-time initialisers.
#pragma once

#include <cstdint>
#include <string>

#include "msrt/context/context.h"

// Defines `Name()` returning the handle of `key` in `family`.
#define MSRT_OPTION_HANDLE(family, T, Name, key)                                     \
  const ::msrt::context::OptionRef<T>& Name() {                                      \
    static const ::msrt::context::OptionRef<T> handle(::msrt::context::family, key); \
    return handle;                                                                   \
  }

namespace msrt::context {

namespace runtime_options {
// Device
const OptionRef<std::string>& DeviceTarget();
const OptionRef<int64_t>& DeviceId();
// Memory
const OptionRef<double>& MaxDeviceMemory();             // GB
const OptionRef<std::string>& VariableMemoryMaxSize();  // "N * 1024 * 1024 * 1024"
const OptionRef<double>& MempoolBlockSize();            // GB
const OptionRef<int64_t>& MemoryOptimizeLevel();        // 0 (O0) or 1 (O1)
// Threads and timeouts
const OptionRef<int64_t>& RuntimeNumThreads();
const OptionRef<int64_t>& InterOpParallelNum();
const OptionRef<int64_t>& OpTimeout();
const OptionRef<std::string>& Deterministic();  // "ON" or "OFF"
// Eager execution
const OptionRef<bool>& PynativeSynchronize();
const OptionRef<int64_t>& PynativeQueueDepth();
// Compilation
const OptionRef<bool>& EnableGraphKernel();
const OptionRef<std::string>& GraphKernelFlags();
const OptionRef<Value>& JitConfig();
const OptionRef<int64_t>& JitSyntaxLevel();  // STRICT (0), COMPATIBLE (1), LAX (2)
const OptionRef<bool>& EnableCompileCache();
const OptionRef<std::string>&
CompileCachePath();  // {"jit_level": "" | "O0" | "O1" | "O2", "infer_boost": "on" | "off"}
const OptionRef<bool>& EnableReducePrecision();
// Debugging and observing
const OptionRef<int64_t>& SaveGraphs();
const OptionRef<std::string>& SaveGraphsPath();
const OptionRef<std::string>& EnvConfigPath();
const OptionRef<bool>& EnableDump();
const OptionRef<std::string>& SaveDumpPath();
const OptionRef<bool>& EnableProfiling();
const OptionRef<std::string>& ProfilingOptions();
const OptionRef<std::string>& PrintFilePath();
}  // namespace runtime_options

namespace parallel_options {
const OptionRef<int64_t>& GlobalRank();
const OptionRef<int64_t>& DeviceNum();
}  // namespace parallel_options

}  // namespace msrt::context
