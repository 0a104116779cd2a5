// What the oneDNN primitive cache has done (for tests and diagnostics); no
// oneDNN types, so readers need not compile against oneDNN.
#pragma once

#include <cstdint>

namespace msrt::kernels::onednn {

struct PrimitiveCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;  // primitives built
  int64_t entries = 0;
  int64_t capacity = 0;
};

PrimitiveCacheStats CacheStats();
/// Drops every cached primitive and zeroes the counters.
void ClearCache();

}  // namespace msrt::kernels::onednn
