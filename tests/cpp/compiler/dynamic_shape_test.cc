// Graphs compiled once for dynamic dimensions (Note [Dynamic shapes]):
// generalizing two captures, running the result at other sizes, refusing
// what does not hold.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/capture_test_util.h"
#include "compiler/dynamic_shape.h"
#include "compiler/pipeline.h"
#include "ir/graph.h"
#include "ops/call.h"

namespace msrt {
namespace {

using compiler::GeneralizeGraphs;
using compiler::kProbeSizes;
using compiler::testing::CaptureOf;
using compiler::testing::Filled;
using compiler::testing::Read;

std::vector<Tensor> ScaleRows(const Tensor& x) {
  Tensor y = ops::Call1("mul", {x, x});
  return {ops::Call1("reduce_sum", {y}, {{"axis", IntList({1})}})};
}

TEST(DynamicShape, DimensionsThatFollowTheSizeBecomeUnknown) {
  auto a = CaptureOf(ScaleRows, {kProbeSizes[0], 2});
  auto b = CaptureOf(ScaleRows, {kProbeSizes[1], 2});
  auto general = GeneralizeGraphs(*a, *b);
  std::string text = ir::PrintText(*general);
  EXPECT_NE(text.find("input \"x\" : Float32(-1, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("mul(%0, %0) : Float32(-1, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find(": Float32(-1,)"), std::string::npos) << text;
  ir::Verify(*general, "generalize");
}

TEST(DynamicShape, OneExecutableRunsEverySize) {
  auto general = GeneralizeGraphs(*CaptureOf(ScaleRows, {kProbeSizes[0], 2}),
                                  *CaptureOf(ScaleRows, {kProbeSizes[1], 2}));
  compiler::Compiled compiled = compiler::Compile(general, compiler::NextGraphId());
  auto& exe = *compiled.executable;
  EXPECT_TRUE(exe.dynamic());
  for (int64_t rows : {1, 4, 1}) {
    std::vector<float> values;
    for (int64_t i = 0; i < rows * 2; ++i) values.push_back(static_cast<float>(i));
    std::vector<Tensor> out = exe.Run({Filled({rows, 2}, values)});
    ASSERT_EQ(out[0].shape(), Shape{rows});
    for (int64_t r = 0; r < rows; ++r) {
      float a = values[static_cast<size_t>(2 * r)], b = values[static_cast<size_t>(2 * r + 1)];
      EXPECT_FLOAT_EQ(Read(out[0])[static_cast<size_t>(r)], a * a + b * b);
    }
  }
  EXPECT_EQ(exe.shape_plans(), 2u);  // rows 1 planned once
  EXPECT_EQ(exe.runs(), 3u);
  EXPECT_THROW(exe.Run({Filled({2, 3}, std::vector<float>(6, 1.0f))}), ValueError);  // the fixed dimension
}

TEST(DynamicShape, AnAttributeThatFollowsTheSizeIsAReason) {
  auto body = [](const Tensor& x) {
    return std::vector<Tensor>{ops::Call1("reshape", {x}, {{"shape", IntList({x.shape()[0] * 2})}})};
  };
  auto a = CaptureOf(body, {kProbeSizes[0], 2});
  auto b = CaptureOf(body, {kProbeSizes[1], 2});
  try {
    GeneralizeGraphs(*a, *b);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("an attribute depends on a dynamic dimension"), std::string::npos) << e.what();
  }
}

TEST(DynamicShape, OtherStructureIsAReason) {
  auto a = CaptureOf([](const Tensor& x) { return std::vector<Tensor>{ops::Call1("exp", {x})}; }, {kProbeSizes[0]});
  auto b = CaptureOf([](const Tensor& x) { return std::vector<Tensor>{ops::Call1("neg", {x})}; }, {kProbeSizes[1]});
  EXPECT_THROW(GeneralizeGraphs(*a, *b), ValueError);
}

TEST(DynamicShape, ShapeHelpers) {
  EXPECT_TRUE(IsDynamic({kDynamicDim, 3}));
  EXPECT_FALSE(IsDynamic({2, 3}));
  EXPECT_TRUE(ShapeMatches({kDynamicDim, 3}, {7, 3}));
  EXPECT_FALSE(ShapeMatches({kDynamicDim, 3}, {7, 4}));
  EXPECT_FALSE(ShapeMatches({kDynamicDim, 3}, {7}));
}

}  // namespace
}  // namespace msrt
