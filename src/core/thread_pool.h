// The CPU thread pool kernels split their loops over.
//
// Its size follows the context key runtime_num_threads (capped by the
// hardware; 0 means all hardware threads) and changes when the key changes.
// The calling thread works too, so a pool of N threads has N - 1 workers.
#pragma once

#include <cstdint>
#include <utility>

namespace msrt {

/// Threads a ParallelFor uses (the caller included).
int IntraOpThreads();

namespace detail {
using RangeFn = void (*)(void* context, int64_t begin, int64_t end);
void ParallelForImpl(int64_t n, int64_t grain, RangeFn fn, void* context);
}  // namespace detail

/// Calls fn(begin, end) over [0, n) in chunks of at least `grain` items,
/// across the pool. Chunk boundaries depend only on n, grain and the pool
/// size, so a reduction that combines per-chunk partials in chunk order is
/// reproducible for a given thread count. Nested calls run serially.
template <typename Fn>
void ParallelFor(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  auto trampoline = [](void* context, int64_t begin, int64_t end) {
    (*static_cast<std::remove_reference_t<Fn>*>(context))(begin, end);
  };
  detail::ParallelForImpl(n, grain, trampoline, const_cast<void*>(static_cast<const void*>(&fn)));
}

/// How a loop of n items is cut: `chunks` pieces of `chunk_size` (the last
/// may be shorter). ParallelFor uses exactly this split.
struct Split {
  int64_t chunks;
  int64_t chunk_size;
};
Split SplitWork(int64_t n, int64_t grain, int threads);

}  // namespace msrt
