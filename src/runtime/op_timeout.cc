// The op_timeout context key: a time limit on every kernel launch.
//
// Note [Op timeout]
// op_timeout is in seconds; 0 means the default, 900. An observer of
// LaunchKernel arms the launching thread's slot before each kernel (the
// launch's number and its limit, read there so that a thread's scoped
// context applies) and disarms it after. A watchdog thread looks at the
// armed slots twenty times per limit (at most once a second): it notes when
// it first saw each launch, and asks a launch it has seen for the limit to
// stop. A launch is thus stopped between its limit and two looks later
// (about a tenth more), never earlier; the launching thread reads no clock,
// as the watchdog does the timing. The kernel's loops stop at their next CancellationPoint
// (core/thread_pool.h: the start of each ParallelFor chunk, each row of the
// reference float64 products) and the launch raises
// RuntimeError naming the op and the limit. A kernel without cancellation
// points (a oneDNN primitive) raises the same error when it returns late.
// Nothing is left behind: the failed op's outputs carry the error, and the
// next launch runs normally.
//
// A request is tied to one launch: the slot's state holds the launch's
// number, and the watchdog sets the request bit with a compare-exchange
// against the number it saw, so a launch that ended meanwhile (and the next
// one on the same thread) is never hit by a late request.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "context/options.h"
#include "core/thread_pool.h"
#include "msrt/context/context.h"
#include "ops/op_def.h"
#include "runtime/launch.h"

namespace msrt::runtime {
namespace {

namespace opts = context::runtime_options;

constexpr int64_t kDefaultSeconds = 900;

int64_t LimitSeconds() {
  int64_t limit = opts::OpTimeout().Get();
  return limit > 0 ? limit : kDefaultSeconds;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One launching thread's current launch.
class LaunchSlot final : public Cancellable {
 public:
  void Arm(const ops::OpDef* op, int64_t limit_s) {
    op_ = op;
    limit_s_ = limit_s;
    interrupts_seen_ = InterruptCount();
    limit_ns_.store(limit_s * 1'000'000'000, std::memory_order_relaxed);
    launch_ += 2;  // the low bit is kRequested
    state_.store(launch_, std::memory_order_release);
  }
  /// Returns whether the launch was asked to stop.
  bool Disarm() { return (state_.exchange(0, std::memory_order_acq_rel) & kRequested) != 0; }

  /// Called by the watchdog (under its lock): notes a launch it sees for
  /// the first time, and asks one it first saw a limit ago to stop.
  void StopIfLate(int64_t now_ns) {
    uint64_t seen = state_.load(std::memory_order_acquire);
    if (seen == 0 || (seen & kRequested) != 0) return;
    if (seen != watched_launch_) {
      watched_launch_ = seen;
      watched_since_ns_ = now_ns;
      return;
    }
    // Read after `seen` (acquire): the limit of that launch, or of a later
    // one whose number the exchange below then fails on.
    if (now_ns - watched_since_ns_ < limit_ns_.load(std::memory_order_relaxed)) return;
    state_.compare_exchange_strong(seen, seen | kRequested, std::memory_order_acq_rel);
  }

  [[noreturn]] void Throw() const override {
    if (interrupted()) throw Interrupted(StrCat("Interrupted while the operator '", op_->name, "' ran."));
    throw RuntimeError(StrCat("The operator '", op_->name, "' ran longer than op_timeout (", limit_s_,
                              " s) and was cancelled. Give it more time with set_context(op_timeout=...), "
                              "or give it less work."));
  }

  int depth = 0;  // nested launches on this thread; only the outermost is timed
  Cancellable* previous = nullptr;

 private:
  const ops::OpDef* op_ = nullptr;
  int64_t limit_s_ = 0;
  uint64_t launch_ = 0;
  std::atomic<int64_t> limit_ns_{0};
  // The watchdog's own: the launch it last saw armed here, and since when.
  uint64_t watched_launch_ = 0;
  int64_t watched_since_ns_ = 0;
};

class Watchdog {
 public:
  void Register(LaunchSlot* slot) {
    std::lock_guard lock(mutex_);
    slots_.push_back(slot);
    if (!started_) {
      started_ = true;
      std::thread watchdog([this] { Loop(); });
      pthread_setname_np(watchdog.native_handle(), "msrt-watchdog");
      watchdog.detach();
    }
  }
  void Unregister(LaunchSlot* slot) {
    std::lock_guard lock(mutex_);
    std::erase(slots_, slot);
  }

  // The watchdog thread did not come along: a new one watches the slots of
  // this thread (the others' threads are gone too; their slots stay disarmed).
  void ResetInForkChild() {
    new (&mutex_) std::mutex();
    started_ = false;
    if (!slots_.empty()) {
      started_ = true;
      std::thread watchdog([this] { Loop(); });
      pthread_setname_np(watchdog.native_handle(), "msrt-watchdog");
      watchdog.detach();
    }
  }

 private:
  [[noreturn]] void Loop() {
    for (;;) {
      int64_t tick_ms = std::clamp<int64_t>(LimitSeconds() * 1000 / 20, 10, 1000);
      std::this_thread::sleep_for(std::chrono::milliseconds(tick_ms));
      int64_t now = NowNs();
      std::lock_guard lock(mutex_);
      for (LaunchSlot* slot : slots_) slot->StopIfLate(now);
    }
  }

  std::mutex mutex_;
  std::vector<LaunchSlot*> slots_;
  bool started_ = false;
};

Watchdog& GlobalWatchdog() {
  static auto* watchdog = new Watchdog();  // its thread runs until exit
  return *watchdog;
}

// Registered while its thread lives.
struct ThreadSlot {
  ThreadSlot() { GlobalWatchdog().Register(&slot); }
  ~ThreadSlot() { GlobalWatchdog().Unregister(&slot); }
  LaunchSlot slot;
};

LaunchSlot& ThisThreadSlot() {
  thread_local ThreadSlot holder;
  return holder.slot;
}

class OpTimeout final : public KernelObserver {
 public:
  void Before(const LaunchEvent& event) override {
    LaunchSlot& slot = ThisThreadSlot();
    if (slot.depth++ > 0) return;
    slot.Arm(&event.op, LimitSeconds());
    slot.previous = SetThreadCancellable(&slot);
  }
  void After(const LaunchEvent&) override {
    LaunchSlot& slot = ThisThreadSlot();
    if (--slot.depth > 0) return;
    SetThreadCancellable(slot.previous);
    bool interrupted = slot.interrupted();
    if (slot.Disarm() || interrupted) slot.Throw();  // finished, but past its deadline or interrupted
  }
  void Aborted(const LaunchEvent&) noexcept override {
    LaunchSlot& slot = ThisThreadSlot();
    if (--slot.depth > 0) return;
    SetThreadCancellable(slot.previous);
    slot.Disarm();
  }
};

OpTimeout g_op_timeout;
const bool kInstalled = [] {
  AddKernelObserver(&g_op_timeout);
  context::Global().DeclareConsumer(opts::OpTimeout(), "kernel launch watchdog");
  return true;
}();

}  // namespace

void ResetOpTimeoutInForkChild() { GlobalWatchdog().ResetInForkChild(); }

}  // namespace msrt::runtime
