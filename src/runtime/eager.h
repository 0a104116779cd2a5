// Eager execution (see Note [Async errors] in eager.cc).
#pragma once

#include <string>

namespace msrt::runtime {

/// Returns where the current op call comes from (e.g. "train.py:42"); the
/// Python binding installs one so async errors can name the Python line.
using OriginFn = std::string (*)();
void SetOriginHook(OriginFn hook);

/// Waits until every queued op has run.
void Synchronize();

}  // namespace msrt::runtime
