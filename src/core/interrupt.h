// Interrupts (Ctrl-C) and waits that give way to them.
//
// Note [Interrupts]
// RequestInterrupt() (async-signal-safe: one atomic increment) is called by
// a SIGINT handler. Whoever starts work remembers InterruptCount() when it
// starts -- a kernel launch, a graph run, a queued eager op, a wait -- and
// stops when the count has moved: kernels at their next CancellationPoint
// (or when they return), graph runs before their next step, queued eager
// ops before they run, waits within kWaitSlice. The one that stops raises
// Interrupted (Python's KeyboardInterrupt). Work started after the interrupt
// runs normally. Blocking waits release the caller's interpreter lock
// through the blocking hook the Python binding installs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace msrt {

/// Asks every running kernel, graph run, queued op and wait to stop.
void RequestInterrupt() noexcept;
namespace detail {
extern std::atomic<uint64_t> g_interrupts;
}
/// How many interrupts were requested since the process started.
inline uint64_t InterruptCount() noexcept { return detail::g_interrupts.load(std::memory_order_relaxed); }
/// Throws Interrupted naming `what` when an interrupt came since `seen`.
void CheckInterrupt(uint64_t seen, const char* what);

/// How often a blocked wait looks for interrupts.
inline constexpr std::chrono::milliseconds kWaitSlice{20};

/// Calls installed by a language binding around a blocking wait (the Python
/// binding releases and retakes the GIL). `enter` returns a token for `leave`.
struct BlockingHook {
  void* (*enter)() = nullptr;
  void (*leave)(void* token) = nullptr;
};
void SetBlockingHook(BlockingHook hook);

/// While alive, the caller is blocked: the binding's hook is in effect.
class BlockingRegion {
 public:
  BlockingRegion();
  ~BlockingRegion();
  BlockingRegion(const BlockingRegion&) = delete;
  BlockingRegion& operator=(const BlockingRegion&) = delete;

 private:
  void* token_ = nullptr;
};

/// Waits on `cv` (with `lock` held) until `ready()`, looking for interrupts
/// every kWaitSlice; Interrupted naming `what` if one comes.
template <typename Lock, typename CondVar, typename Pred>
void InterruptibleWait(CondVar& cv, Lock& lock, Pred ready, const char* what) {
  if (ready()) return;
  const uint64_t seen = InterruptCount();
  while (!cv.wait_for(lock, kWaitSlice, ready)) CheckInterrupt(seen, what);
}

}  // namespace msrt
