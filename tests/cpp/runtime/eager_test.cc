// The eager executor's placement of ops (Note [Inline small ops], Note
// [Kernel cost estimates]): an op above the inline size whose kernel is
// known to be quick runs on the calling thread, an expensive one on the
// dispatcher, with the same results and errors either way.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "msrt/core/errors.h"
#include "msrt/tensor/tensor.h"
#include "ops/call.h"
#include "runtime/launch.h"

namespace msrt {
namespace {

// The threads that launched kernels of one op.
class LaunchThreads final : public runtime::KernelObserver {
 public:
  explicit LaunchThreads(std::string op) : op_(std::move(op)) { runtime::AddKernelObserver(this); }
  ~LaunchThreads() override { runtime::RemoveKernelObserver(this); }
  void Before(const runtime::LaunchEvent& event) override {
    if (event.op.name != op_) return;
    std::lock_guard lock(mutex_);
    threads_.push_back(std::this_thread::get_id());
  }
  std::vector<std::thread::id> threads() {
    std::lock_guard lock(mutex_);
    return threads_;
  }

 private:
  std::string op_;
  std::mutex mutex_;
  std::vector<std::thread::id> threads_;
};

Tensor Ones(const Shape& shape) {
  std::vector<float> data(static_cast<size_t>(NumElements(shape)), 1.0f);
  return Tensor::FromHost(data.data(), data.size() * sizeof(float), shape, DType::kFloat32);
}

TEST(EagerPlacement, AQuickLargeOpRunsAtTheCallOnceItsTimeIsKnown) {
  LaunchThreads log("add");
  static int64_t round = 0;  // a shape no other test (nor an earlier repeat) adds: its cost is unknown
  const int64_t n = 8191 - round++;
  Tensor x = Ones({n});  // above the inline size
  const auto caller = std::this_thread::get_id();
  bool at_call = false;
  for (int i = 0; i < 20 && !at_call; ++i) {
    Tensor y = ops::Call1("add", {x, x});
    y.Sync();
    EXPECT_FLOAT_EQ(y.data<float>()[n - 1], 2.0f);
    at_call = log.threads().back() == caller;
  }
  std::vector<std::thread::id> threads = log.threads();
  ASSERT_GE(threads.size(), 2u);
  EXPECT_NE(threads.front(), caller) << "the first run, of unknown cost, is queued";
  EXPECT_TRUE(at_call) << "an add of " << n << " elements never ran at the call";
}

TEST(EagerPlacement, AnExpensiveOpStaysOnTheDispatcher) {
  LaunchThreads log("matmul");
  Tensor a = Ones({512, 512});  // 134 M multiply-adds: a millisecond or more
  for (int i = 0; i < 4; ++i) {
    Tensor c = ops::Call1("matmul", {a, a});
    c.Sync();
    EXPECT_FLOAT_EQ(c.data<float>()[0], 512.0f);
  }
  for (std::thread::id id : log.threads()) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(EagerPlacement, AKernelErrorAtTheCallRaisesAtTheRead) {
  LaunchThreads log("gather");
  Tensor params = Ones({6000, 2});
  std::vector<int32_t> good{0, 5999}, bad{0, 6000};
  Tensor good_index = Tensor::FromHost(good.data(), sizeof(int32_t) * 2, {2}, DType::kInt32);
  Tensor bad_index = Tensor::FromHost(bad.data(), sizeof(int32_t) * 2, {2}, DType::kInt32);
  const Dict axis{{"axis", Value(0)}};
  bool at_call = false;
  for (int i = 0; i < 20 && !at_call; ++i) {
    ops::Call1("gather", {params, good_index}, axis).Sync();
    Tensor out = ops::Call1("gather", {params, bad_index}, axis);  // returns: the error waits for a read
    at_call = log.threads().back() == std::this_thread::get_id();
    EXPECT_THROW(out.Sync(), IndexError);
    EXPECT_THROW(out.Sync(), IndexError);  // every read raises it
  }
  EXPECT_TRUE(at_call) << "a 12000-element gather never ran at the call";
  Tensor after = ops::Call1("add", {params, params});  // the runtime goes on
  after.Sync();
  EXPECT_FLOAT_EQ(after.data<float>()[0], 2.0f);
}

}  // namespace
}  // namespace msrt
