// Capture, passes, verifier and graph executor from C++ (the same path the
// Python front end drives).
#include <gtest/gtest.h>

#include <vector>

#include "compiler/capture.h"
#include "compiler/capture_test_util.h"
#include "compiler/fusion.h"
#include "compiler/pass_manager.h"
#include "compiler/pipeline.h"
#include "msrt/context/context.h"
#include "ops/call.h"

namespace msrt {
namespace {

using compiler::Capture;
using compiler::CaptureScope;

using compiler::testing::CaptureOf;
using compiler::testing::Read;
using compiler::testing::Vec;

TEST(Capture, RecordsOpsWithoutRunningThemAndSymbolicValuesHaveNoData) {
  Tensor seen;
  auto graph = CaptureOf([&seen](const Tensor& x) {
    seen = ops::Call1("exp", {x});
    return std::vector<Tensor>{seen};
  });
  EXPECT_TRUE(seen.symbolic());
  EXPECT_THROW(seen.data(), GraphCaptureError);
  EXPECT_EQ(graph->OpCount(), 1u);
  ir::Verify(*graph, "capture");
  EXPECT_NE(ir::PrintText(*graph).find("exp(%0) : Float32(3,)"), std::string::npos);
}

TEST(Capture, NestedScopesBeyondTheLimitRaise) {
  Capture capture("deep", 2, false);
  capture.PushScope("Default/a");
  capture.PushScope("Default/a/b");
  try {
    capture.PushScope("Default/a/b/c");
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("Exceed function call depth limit 2"), std::string::npos);
  }
}

TEST(Passes, DeadCodeGoesButSideEffectsStay) {
  Tensor state = Vec({0, 0, 0});
  state.impl()->name = "state";
  auto graph = CaptureOf([&state](const Tensor& x) {
    ops::Call1("exp", {x});           // unused: dead
    ops::Call("assign", {state, x});  // in place: kept although unused
    return std::vector<Tensor>{ops::Call1("neg", {x})};
  });
  EXPECT_EQ(graph->OpCount(), 3u);
  EXPECT_TRUE(compiler::EliminateDeadCode(*graph));
  EXPECT_EQ(graph->OpCount(), 2u);
  ir::Verify(*graph, "eliminate_dead_code");
}

TEST(Passes, CommonSubexpressionsMergeButNotAcrossWrites) {
  Tensor w = Vec({1, 2, 3});
  w.impl()->name = "w";
  auto graph = CaptureOf([&w](const Tensor& x) {
    Tensor a = ops::Call1("mul", {w, x});
    Tensor b = ops::Call1("mul", {w, x});  // same as a
    ops::Call("assign", {w, x});
    Tensor c = ops::Call1("mul", {w, x});  // w changed: not the same
    return std::vector<Tensor>{a, b, c};
  });
  EXPECT_TRUE(compiler::EliminateCommonSubexpressions(*graph));
  EXPECT_EQ(graph->OpCount(), 3u);  // mul, assign, mul
  EXPECT_EQ(graph->outputs()[0], graph->outputs()[1]);
  EXPECT_NE(graph->outputs()[0], graph->outputs()[2]);
}

TEST(Passes, ConstantsFoldAndIdentitiesDisappear) {
  Tensor two = Vec({2, 2, 2});
  Tensor zero = Tensor::Scalar(0.0, DType::kFloat32);
  auto graph = CaptureOf([&](const Tensor& x) {
    Tensor four = ops::Call1("add", {two, two});                         // folds
    Tensor y = ops::Call1("add", {ops::Call1("mul", {x, four}), zero});  // + 0 goes
    return std::vector<Tensor>{y};
  });
  compiler::FoldConstants(*graph);
  compiler::SimplifyAlgebra(*graph);
  ir::Verify(*graph, "simplify");
  EXPECT_EQ(graph->OpCount(), 1u);
  auto compiled = compiler::Compile(graph, compiler::NextGraphId());
  auto out = compiled.executable->Run({Vec({1, 2, 3})});
  EXPECT_EQ(Read(out[0]), (std::vector<float>{4, 8, 12}));
}

TEST(Verifier, CatchesAUseBeforeDefinition) {
  auto graph = CaptureOf(
      [](const Tensor& x) { return std::vector<Tensor>{ops::Call1("neg", {ops::Call1("exp", {x})})}; });
  graph->nodes()[2].inputs[0] = {3, 0};  // neg now reads a later node (itself)
  EXPECT_THROW(ir::Verify(*graph, "broken_pass"), InternalError);
}

TEST(Executor, PlansO1MemoryWithoutOverlapsAndGivesO0Results) {
  auto body = [](const Tensor& x) {
    Tensor a = ops::Call1("exp", {x});
    Tensor b = ops::Call1("neg", {a});
    Tensor c = ops::Call1("exp", {b});
    Tensor d = ops::Call1("neg", {c});
    return std::vector<Tensor>{ops::Call1("add", {d, x})};
  };
  runtime::GraphOptions o0, o1;
  o1.memory_level = 1;
  auto g0 = CaptureOf(body, {1024});
  auto g1 = CaptureOf(body, {1024});
  runtime::GraphExecutable e0(g0, o0), e1(g1, o1);
  std::vector<float> input(1024, 0.5f);
  Tensor x = Tensor::FromHost(input.data(), input.size() * 4, {1024}, DType::kFloat32);
  EXPECT_EQ(Read(e0.Run({x})[0]), Read(e1.Run({x})[0]));
  // Four 4 KiB intermediates, at most two alive at once; each elementwise
  // step takes the bytes of the one before, which dies there (Note
  // [Elementwise buffer handover]), so O1 holds one buffer.
  EXPECT_EQ(e0.memory_stats().planned_bytes, 4u * 4096);
  EXPECT_EQ(e1.memory_stats().planned_bytes, 4096u);
  EXPECT_EQ(e1.memory_stats().peak_live_bytes, 4096u);
  EXPECT_THROW(e1.Run({Vec({1, 2})}), ValueError);  // wrong input shape
}

TEST(Fusion, ChainsRunAsOneKernelWithTheSameResults) {
  auto body = [](const Tensor& x) {
    Tensor half = Tensor::Scalar(0.5, DType::kFloat32);
    Tensor y = ops::Call1("mul", {ops::Call1("tanh", {ops::Call1("add", {x, x})}), half});
    return std::vector<Tensor>{ops::Call1("neg", {y})};
  };
  std::vector<float> input(10000);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 17) * 0.1f - 0.8f;
  Tensor x = Tensor::FromHost(input.data(), input.size() * 4, {10000}, DType::kFloat32);
  auto plain = CaptureOf(body, {10000});
  auto fused = CaptureOf(body, {10000});
  std::string report;
  EXPECT_TRUE(compiler::FuseElementwise(*fused, DeviceTarget::kCPU, &report));
  ir::Verify(*fused, "fuse_elementwise");
  EXPECT_EQ(fused->OpCount(), 1u);
  EXPECT_NE(report.find("fused 4 ops"), std::string::npos);
  runtime::GraphExecutable a(plain, {}), b(fused, {});
  EXPECT_EQ(Read(a.Run({x})[0]), Read(b.Run({x})[0]));
}

// Independent branches and an in-place update under inter_op_parallel_num
// (also run by `make tsan`).
TEST(GraphConcurrency, ThreadsRunIndependentStepsWithSerialResults) {
  Tensor state = Vec(std::vector<float>(4096, 0.0f));
  state.impl()->name = "state";
  auto body = [&state](const Tensor& x) {
    Tensor a = x, b = x;
    for (int i = 0; i < 8; ++i) {
      a = ops::Call1("exp", {ops::Call1("neg", {a})});
      b = ops::Call1("tanh", {ops::Call1("add", {b, x})});
    }
    Tensor sum = ops::Call1("add", {a, b});
    ops::Call("assign_add", {state, sum});
    return std::vector<Tensor>{ops::Call1("mul", {state, sum})};
  };
  std::vector<float> input(4096);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 13) * 0.05f;
  Tensor x = Tensor::FromHost(input.data(), input.size() * 4, {4096}, DType::kFloat32);
  runtime::GraphOptions o1;
  o1.memory_level = 1;
  runtime::GraphExecutable serial(CaptureOf(body, {4096}), o1);
  std::vector<float> expected = Read(serial.Run({x})[0]);
  std::fill(state.mutable_data<float>(), state.mutable_data<float>() + 4096, 0.0f);
  context::ScopedOverride threads(context::Family::kRuntime, Dict{{"inter_op_parallel_num", Value(int64_t{2})}});
  runtime::GraphExecutable concurrent(CaptureOf(body, {4096}), o1);
  for (int run = 0; run < 20; ++run) {
    std::fill(state.mutable_data<float>(), state.mutable_data<float>() + 4096, 0.0f);
    EXPECT_EQ(Read(concurrent.Run({x})[0]), expected);
  }
  EXPECT_GE(concurrent.max_concurrent_kernels(), 1);
}

}  // namespace
}  // namespace msrt
