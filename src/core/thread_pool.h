// The CPU thread pool kernels split their loops over, and the cancellation
// points long loops check. The runtime sizes it from the context (it pushes
// the keys in: core reads no context).
//
// Note [Thread plan]
// runtime_num_threads and inter_op_parallel_num size the runtime's threads
// as MindSpore's actor runtime does: with `cores` hardware threads,
// rt = min(runtime_num_threads, cores) (0: cores) and
// iop = min(inter_op_parallel_num, cores). With iop = 0, scheduler threads
// = max(floor(rt * 0.18), 1) and total = rt if rt > scheduler, else
// scheduler + 1; otherwise scheduler = iop and total = rt + iop. Kernel
// threads = total - scheduler. The scheduler threads launch kernels (the
// eager dispatcher is one); the kernel pool has `kernel` worker threads, and
// the launching thread works on the chunks of its own loops too, so a
// ParallelFor runs on kernel + 1 threads. The pool follows changes of the
// keys; oneDNN's OpenMP team is sized the same (IntraOpThreads).
#pragma once

#include "core/interrupt.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

namespace msrt {

/// How the runtime's threads are sized (Note [Thread plan]).
struct ThreadPlan {
  int hardware = 1;             // hardware threads
  int runtime_threads = 1;      // runtime_num_threads after the cap (0: all)
  int inter_op = 0;             // inter_op_parallel_num after the cap
  int scheduler = 1;            // threads that launch kernels
  int kernel = 1;               // kernel pool workers
  int total = 2;                // scheduler + kernel
  bool oversubscribed = false;  // total > hardware
};
ThreadPlan PlanThreads(int64_t runtime_num_threads, int64_t inter_op_parallel_num, int hardware);
/// The plan in force (the last one ConfigureThreadPool made).
ThreadPlan CurrentThreadPlan();
/// Sizes the kernel pool for these key values (the runtime calls it at load
/// and on every change); returns the plan, which CurrentThreadPlan then gives.
ThreadPlan ConfigureThreadPool(int64_t runtime_num_threads, int64_t inter_op_parallel_num);

/// Threads a ParallelFor uses (the launching thread included): plan.kernel + 1.
int IntraOpThreads();
/// Worker threads the kernel pool has started (OS threads that exist now).
int KernelPoolWorkers();

/// Whether kernels must give bit-identical results whatever the thread
/// count (context key deterministic="ON", pushed in by the runtime).
bool DeterministicKernels();
void SetDeterministicKernels(bool on);

// ---------------------------------------------------------------------------
// Cooperative cancellation (Note [Op timeout] in src/runtime/op_timeout.cc).

/// What a launching thread installs while a kernel runs; someone else may
/// request its cancellation. Loops of that kernel (including their chunks on
/// pool workers) then stop at their next CancellationPoint.
class Cancellable {
 public:
  virtual ~Cancellable() = default;
  /// Cancellation was asked for, or an interrupt came since the owner armed it.
  bool requested() const { return (state_.load(std::memory_order_relaxed) & kRequested) != 0 || interrupted(); }
  bool interrupted() const { return InterruptCount() != interrupts_seen_; }
  /// The error the kernel raises when stopped.
  [[noreturn]] virtual void Throw() const = 0;

 protected:
  static constexpr uint64_t kRequested = 1;
  /// Owner-defined bits, plus kRequested once cancellation was asked for.
  std::atomic<uint64_t> state_{0};
  /// InterruptCount() when it was made or its owner armed it (Note [Interrupts]
  /// in core/interrupt.h): interrupts from before do not stop it.
  uint64_t interrupts_seen_ = InterruptCount();
};

/// In a child process after fork(): the workers did not come along; the pool
/// forgets them and starts new ones on its next parallel loop. Call only
/// while no loop runs (runtime/fork.cc quiesces first).
void ResetThreadPoolInForkChild();

/// Installs `c` (or nothing) for this thread; returns the previous one.
Cancellable* SetThreadCancellable(Cancellable* c);
Cancellable* ThreadCancellable();

namespace detail {
extern thread_local Cancellable* t_cancellable;
}

/// Throws the kernel's cancellation error when it was requested. One
/// thread-local read and one relaxed load otherwise.
inline void CancellationPoint() {
  const Cancellable* c = detail::t_cancellable;
  if (c != nullptr && c->requested()) c->Throw();
}

namespace detail {
using RangeFn = void (*)(void* context, int64_t begin, int64_t end);
void ParallelForImpl(int64_t n, int64_t grain, RangeFn fn, void* context);
}  // namespace detail

/// Calls fn(begin, end) over [0, n) in chunks of at least `grain` items,
/// across the pool. Chunk boundaries depend only on n, grain and the pool
/// size, so a reduction that combines per-chunk partials in chunk order is
/// reproducible for a given thread count. Nested calls run serially. An
/// exception thrown by fn (on any thread) skips the chunks not yet started
/// and is rethrown to the caller; a chunk starts only after a
/// CancellationPoint.
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
