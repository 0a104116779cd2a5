// Eager execution (see Note [Async errors] in eager.cc).
#pragma once

#include <string>

#include "msrt/core/device.h"

namespace msrt::runtime {

/// Returns where the current op call comes from (e.g. "train.py:42"); the
/// Python binding installs one so async errors can name the Python line.
using OriginFn = std::string (*)();
void SetOriginHook(OriginFn hook);
/// Like the origin hook, but the whole Python stack of the call
/// ("model.py:12 <- train.py:40"), for graphs compiled with debug_level=DEBUG.
void SetStackHook(OriginFn hook);
/// Where the current call comes from: the innermost line, or the whole stack.
std::string CallOrigin(bool whole_stack = false);

/// device_target as executors act on it, parsed once per change (Note
/// [Parsed device target] in eager.cc).
DeviceTarget CurrentDevice();

/// Waits until every queued op has run (Interrupted on Ctrl-C).
void Synchronize();

/// Around fork() (runtime/fork.cc): waits for the queue to drain; in the
/// child, starts a new dispatcher.
void DrainForFork();
void ResetDispatcherInForkChild();

}  // namespace msrt::runtime
