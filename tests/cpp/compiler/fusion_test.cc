// In-place tails (Note [In-place tails] in src/compiler/fusion.cc): a unary
// elementwise op that no kernel applies as an epilogue runs in place right
// after its producer's kernel, with the separate op's results.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/capture_test_util.h"
#include "compiler/pipeline.h"
#include "msrt/context/context.h"
#include "ops/call.h"
#include "runtime/graph_executor.h"

namespace msrt {
namespace {

using compiler::testing::CaptureOf;
using compiler::testing::Filled;
using compiler::testing::Read;

const Shape kShape = {3, 4};
// Values whose floor and product show a wrong order of floor and relu, or a missing floor.
const std::vector<float> kX = {-1.5f, 0.25f, 2.75f, -0.5f, 1.5f, -2.25f, 0.75f, 3.5f, -3.0f, 1.25f, -0.75f, 2.0f};
const std::vector<float> kW = {0.5f,  -1.0f, 1.5f, 0.25f, 2.0f,   -0.5f, 1.0f, -1.5f,
                               -2.0f, 0.75f, 0.5f, 1.25f, -0.25f, 1.0f,  0.5f, -1.0f};

// x (3x4) times the constant w (4x4), then `tail` applied to the product.
std::shared_ptr<ir::Graph> ProductThen(const std::function<std::vector<Tensor>(const Tensor&)>& tail) {
  Tensor w = Filled({4, 4}, kW);
  return CaptureOf([w, tail](const Tensor& x) { return tail(ops::Call1("matmul", {x, w})); }, kShape);
}

compiler::Compiled CompileWith(std::shared_ptr<ir::Graph> graph, bool graph_kernel) {
  context::ScopedOverride keys(context::Family::kRuntime, Dict{{"enable_graph_kernel", Value(graph_kernel)}});
  return compiler::Compile(std::move(graph), compiler::NextGraphId());
}

std::vector<std::vector<float>> RunGraph(const compiler::Compiled& compiled) {
  std::vector<std::vector<float>> out;
  for (const Tensor& t : compiled.executable->Run({Filled(kShape, kX)})) out.push_back(Read(t));
  return out;
}

std::vector<std::vector<float>> RunUnoptimized(std::shared_ptr<ir::Graph> graph) {
  runtime::GraphExecutable plain(std::move(graph), {});
  std::vector<std::vector<float>> out;
  for (const Tensor& t : plain.Run({Filled(kShape, kX)})) out.push_back(Read(t));
  return out;
}

auto FloorOf = [](const Tensor& product) { return std::vector<Tensor>{ops::Call1("floor", {product})}; };

TEST(InPlaceTails, AnOpNoKernelAppliesRunsInPlaceAfterTheProductWithTheSameResults) {
  compiler::Compiled compiled = CompileWith(ProductThen(FloorOf), /*graph_kernel=*/false);
  EXPECT_EQ(compiled.report.in_place_tails, 1u);
  EXPECT_EQ(compiled.report.fused_epilogues, 0u);
  const std::string order = compiled.executable->ExecutionOrderText();
  EXPECT_NE(order.find("matmul [onednn] then floor in place"), std::string::npos) << order;
  EXPECT_EQ(order.find("\n1: "), std::string::npos) << "the floor is no step of its own:\n" << order;
  EXPECT_EQ(RunGraph(compiled), RunUnoptimized(ProductThen(FloorOf)));
}

TEST(InPlaceTails, OpsAfterATailJoinItInOrder) {
  // relu has a oneDNN post-op, but after floor it must run after floor.
  auto floor_then_relu = [](const Tensor& p) {
    return std::vector<Tensor>{ops::Call1("relu", {ops::Call1("neg", {ops::Call1("floor", {p})})})};
  };
  compiler::Compiled compiled = CompileWith(ProductThen(floor_then_relu), /*graph_kernel=*/false);
  const std::string order = compiled.executable->ExecutionOrderText();
  EXPECT_NE(order.find("then floor in place [vectorized] then neg in place [vectorized] then relu in place"),
            std::string::npos)
      << order;
  EXPECT_EQ(compiled.report.in_place_tails, 3u);
  EXPECT_EQ(RunGraph(compiled), RunUnoptimized(ProductThen(floor_then_relu)));
}

TEST(InPlaceTails, AProductOthersReadKeepsItsOpSeparate) {
  auto both = [](const Tensor& p) { return std::vector<Tensor>{ops::Call1("floor", {p}), ops::Call1("neg", {p})}; };
  compiler::Compiled compiled = CompileWith(ProductThen(both), /*graph_kernel=*/false);
  EXPECT_EQ(compiled.report.in_place_tails, 0u);
  EXPECT_EQ(RunGraph(compiled), RunUnoptimized(ProductThen(both)));
}

TEST(InPlaceTails, GraphKernelFusionLeavesTheOpToItsLoops) {
  compiler::Compiled compiled = CompileWith(ProductThen(FloorOf), /*graph_kernel=*/true);
  EXPECT_EQ(compiled.report.in_place_tails, 0u);
  EXPECT_EQ(compiled.executable->ExecutionOrderText().find(" in place ["), std::string::npos);
  EXPECT_EQ(RunGraph(compiled), RunUnoptimized(ProductThen(FloorOf)));
}

TEST(InPlaceTails, AnOpThatWritesItsInputInPlaceTakesNoTail) {
  // assign writes x's copy in place and returns it: a tail there would change the variable, not a fresh result.
  auto assigned = [](const Tensor& p) {
    Tensor copy = ops::Call1("mul", {p, p});
    return std::vector<Tensor>{ops::Call1("floor", {ops::Call1("assign", {copy, p})})};
  };
  compiler::Compiled compiled = CompileWith(ProductThen(assigned), /*graph_kernel=*/false);
  const std::string order = compiled.executable->ExecutionOrderText();
  EXPECT_EQ(order.find("assign [vectorized] then"), std::string::npos) << order;
  EXPECT_EQ(RunGraph(compiled), RunUnoptimized(ProductThen(assigned)));
}

}  // namespace
}  // namespace msrt
