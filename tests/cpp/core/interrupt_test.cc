// Interrupts (Note [Interrupts] in src/core/interrupt.h): work started before
// an interrupt stops, work started after it runs.
#include "core/interrupt.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/thread_pool.h"
#include "msrt/core/errors.h"
#include "msrt/tensor/tensor.h"

namespace msrt {
namespace {

TEST(InterruptTest, CheckThrowsOnlyForInterruptsSinceItsMark) {
  uint64_t before = InterruptCount();
  EXPECT_NO_THROW(CheckInterrupt(before, "testing"));
  RequestInterrupt();
  EXPECT_EQ(InterruptCount(), before + 1);
  try {
    CheckInterrupt(before, "testing");
    FAIL() << "no Interrupted";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInterrupted);
    EXPECT_STREQ(ErrorKindName(e.kind()), "KeyboardInterrupt");
    EXPECT_NE(std::string(e.what()).find("testing"), std::string::npos);
  }
  EXPECT_NO_THROW(CheckInterrupt(InterruptCount(), "testing"));
}

TEST(InterruptTest, AWaitStopsWithinASliceOfTheInterrupt) {
  std::mutex mutex;
  std::condition_variable cv;
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    RequestInterrupt();
  });
  auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex);
  EXPECT_THROW(InterruptibleWait(
                   cv, lock, [] { return false; }, "waiting in a test"),
               Interrupted);
  auto waited = std::chrono::steady_clock::now() - start;
  interrupter.join();
  EXPECT_LT(waited, std::chrono::seconds(2));
}

TEST(InterruptTest, AWaitForATensorStopsAndTheTensorCanStillFinish) {
  auto completion = std::make_shared<Completion>();
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    RequestInterrupt();
  });
  EXPECT_THROW(completion->Wait(), Interrupted);
  interrupter.join();
  completion->Finish();
  EXPECT_NO_THROW(completion->Wait());
}

class ArmedHere final : public Cancellable {
 public:
  ArmedHere() { interrupts_seen_ = InterruptCount(); }
  [[noreturn]] void Throw() const override { throw Interrupted("stopped"); }
};

TEST(InterruptTest, CancellationPointsStopKernelsArmedBeforeTheInterrupt) {
  ArmedHere before;
  Cancellable* saved = SetThreadCancellable(&before);
  EXPECT_NO_THROW(CancellationPoint());
  RequestInterrupt();
  EXPECT_THROW(CancellationPoint(), Interrupted);
  ArmedHere after;  // armed after the interrupt: runs
  SetThreadCancellable(&after);
  EXPECT_NO_THROW(CancellationPoint());
  SetThreadCancellable(saved);
}

}  // namespace
}  // namespace msrt
