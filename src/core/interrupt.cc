#include "core/interrupt.h"

#include <atomic>

#include "msrt/core/errors.h"

namespace msrt {
namespace detail {
std::atomic<uint64_t> g_interrupts{0};
}  // namespace detail
namespace {

using detail::g_interrupts;
static_assert(std::atomic<uint64_t>::is_always_lock_free, "RequestInterrupt must be async-signal-safe");
std::atomic<BlockingHook*> g_hook{nullptr};

}  // namespace

void RequestInterrupt() noexcept { g_interrupts.fetch_add(1, std::memory_order_relaxed); }

void CheckInterrupt(uint64_t seen, const char* what) {
  if (InterruptCount() != seen) throw Interrupted(StrCat("Interrupted while ", what, "."));
}

void SetBlockingHook(BlockingHook hook) {
  // Installed once per binding, never freed: a wait may be using the old one.
  g_hook.store(new BlockingHook(hook), std::memory_order_release);
}

BlockingRegion::BlockingRegion() {
  BlockingHook* hook = g_hook.load(std::memory_order_acquire);
  if (hook != nullptr && hook->enter != nullptr) token_ = hook->enter();
}

BlockingRegion::~BlockingRegion() {
  BlockingHook* hook = g_hook.load(std::memory_order_acquire);
  if (hook != nullptr && hook->leave != nullptr) hook->leave(token_);
}

}  // namespace msrt
