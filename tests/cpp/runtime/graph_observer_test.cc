// Graph observers (runtime/graph_executor.h): the executor reports runs and
// failing steps to whoever watches, without knowing who (the running data
// recorder is one).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/capture.h"
#include "ops/call.h"
#include "runtime/graph_executor.h"
#include "runtime/observe_test_util.h"

namespace msrt::runtime {
namespace {

struct Seen : GraphObserver {
  void Ran(const GraphExecutable& exe) noexcept override { runs.push_back(exe.graph().name()); }
  void Failed(const GraphExecutable& exe, const GraphFailure& f) noexcept override {
    failures.push_back(exe.graph().name() + ":" + std::string(f.op) + ":" + std::to_string(f.step));
    kinds.push_back(f.kind);
  }
  std::vector<std::string> runs, failures;
  std::vector<ErrorKind> kinds;
};

TEST(GraphObserver, HearsRunsAndFailingStepsWhileAdded) {
  std::vector<float> v = {0, 1, 2, 3};
  Tensor x = Tensor::FromHost(v.data(), 16, {4}, DType::kFloat32);
  GraphExecutable exe(testing::GatherGraph("observed"), {});
  Seen seen;
  AddGraphObserver(&seen);
  exe.Run({x, testing::Indices(0, 3)});
  EXPECT_THROW(exe.Run({x, testing::Indices(0, 9)}), Error);
  RemoveGraphObserver(&seen);
  exe.Run({x, testing::Indices(1, 2)});  // no longer watched
  EXPECT_EQ(seen.runs, std::vector<std::string>{"observed"});
  ASSERT_EQ(seen.failures.size(), 1u);
  EXPECT_EQ(seen.failures[0], "observed:gather:1");
}

}  // namespace
}  // namespace msrt::runtime
