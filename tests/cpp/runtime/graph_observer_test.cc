// Graph observers (runtime/graph_executor.h): the executor reports runs and
// failing steps to whoever watches, without knowing who (the running data
// recorder is one).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/capture.h"
#include "ops/call.h"
#include "runtime/graph_executor.h"

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

// exp then gather: out-of-range indices fail the second step.
std::shared_ptr<ir::Graph> GatherGraph() {
  compiler::Capture capture("observed", /*max_call_depth=*/100, /*whole_stack=*/false);
  Tensor x = capture.AddInput({4}, DType::kFloat32, DeviceTarget::kCPU, "x");
  Tensor idx = capture.AddInput({2}, DType::kInt32, DeviceTarget::kCPU, "idx");
  std::vector<Tensor> outs;
  {
    compiler::CaptureScope scope(&capture);
    outs = {ops::Call1("gather", {ops::Call1("exp", {x}), idx}, {{"axis", Value(0)}})};
  }
  return capture.Finish(outs);
}

Tensor Indices(int32_t a, int32_t b) {
  std::vector<int32_t> v = {a, b};
  return Tensor::FromHost(v.data(), 8, {2}, DType::kInt32);
}

TEST(GraphObserver, HearsRunsAndFailingStepsWhileAdded) {
  std::vector<float> v = {0, 1, 2, 3};
  Tensor x = Tensor::FromHost(v.data(), 16, {4}, DType::kFloat32);
  GraphExecutable exe(GatherGraph(), {});
  Seen seen;
  AddGraphObserver(&seen);
  exe.Run({x, Indices(0, 3)});
  EXPECT_THROW(exe.Run({x, Indices(0, 9)}), Error);
  RemoveGraphObserver(&seen);
  exe.Run({x, Indices(1, 2)});  // no longer watched
  EXPECT_EQ(seen.runs, std::vector<std::string>{"observed"});
  ASSERT_EQ(seen.failures.size(), 1u);
  EXPECT_EQ(seen.failures[0], "observed:gather:1");
}

}  // namespace
}  // namespace msrt::runtime
