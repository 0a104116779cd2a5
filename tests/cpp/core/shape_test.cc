// Overflow-checked shape sizes (msrt/core/shape.h) and JSON nesting depth.
#include "msrt/core/shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/json_depth.h"
#include "msrt/core/errors.h"
#include "msrt/tensor/tensor.h"
#include "ops/call.h"

namespace msrt {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(Shape, CountsElementsAndBytes) {
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
  EXPECT_EQ(NumElements({2, 0, 4}), 0);
  EXPECT_EQ(NumBytes({2, 3}, DType::kFloat64), 48u);
  EXPECT_EQ(NumBytes({0, 5}, DType::kFloat32), 0u);
  EXPECT_EQ(NumElements({kMax}), kMax);
  EXPECT_EQ(NumBytes({kMax}, DType::kBool), static_cast<size_t>(kMax));
}

TEST(Shape, RefusesNegativeDimensions) {
  EXPECT_THROW(NumElements({2, -1}), ValueError);
  EXPECT_THROW(NumBytes({-3}, DType::kFloat32), ValueError);
  try {
    CheckShape({4, -2}, DType::kFloat32, "reshape");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("For 'reshape'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(4, -2)"), std::string::npos) << e.what();
  }
}

TEST(Shape, RefusesOverflowingProductsNamingTheShape) {
  EXPECT_THROW(NumElements({int64_t{1} << 40, int64_t{1} << 40}), ValueError);
  EXPECT_THROW(NumElements({kMax, 2}), ValueError);
  // The element count fits but the byte count does not.
  EXPECT_NO_THROW(NumElements({int64_t{1} << 62}));
  EXPECT_THROW(NumBytes({int64_t{1} << 62}, DType::kFloat32), ValueError);
  // NumPy's rule: a zero dimension does not excuse the others overflowing,
  // so every partial product a kernel computes fits.
  EXPECT_THROW(NumElements({0, int64_t{1} << 40, int64_t{1} << 40}), ValueError);
  try {
    NumBytes({int64_t{1} << 31, int64_t{1} << 31, 4}, DType::kFloat32);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("(2147483648, 2147483648, 4)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Float32"), std::string::npos) << e.what();
  }
}

TEST(Shape, CheckedArithmetic) {
  EXPECT_EQ(CheckedMul(3, 4, "op"), 12);
  EXPECT_EQ(CheckedAdd(3, 4, "op"), 7);
  EXPECT_THROW(CheckedMul(kMax, 2, "op"), ValueError);
  EXPECT_THROW(CheckedAdd(kMax, 1, "op"), ValueError);
}

TEST(Shape, TensorCreationChecksSizes) {
  EXPECT_THROW(Tensor::Empty({int64_t{1} << 40, int64_t{1} << 40}, DType::kFloat32), ValueError);
  EXPECT_THROW(Tensor::Empty({-1}, DType::kFloat32), ValueError);
  EXPECT_THROW(Tensor::Symbolic({kMax, kMax}, DType::kFloat32, DeviceTarget::kCPU), ValueError);
  // Fits in 64 bits, not in memory.
  EXPECT_THROW(Tensor::Empty({int64_t{1} << 50}, DType::kFloat32), MemoryError);
}

TEST(Shape, EveryOpChecksItsInferredShapes) {
  Tensor x = Tensor::Zeros({2, 2}, DType::kFloat32);
  // fill: shape from an attribute.
  EXPECT_THROW(ops::Call("fill", {},
                         Dict{{"shape", Value(List{Value(int64_t{1} << 40), Value(int64_t{1} << 40)})},
                              {"value", Value(0.0)},
                              {"dtype", Value("float32")}}),
               ValueError);
  // tile: the multiples overflow while the product is formed.
  EXPECT_THROW(ops::Call("tile", {x}, Dict{{"multiples", Value(List{Value(kMax), Value(kMax)})}}), ValueError);
  // broadcast_to: each size is fine, their product is not.
  Tensor one = Tensor::Zeros({1, 1}, DType::kFloat32);
  EXPECT_THROW(ops::Call("broadcast_to", {one},
                         Dict{{"shape", Value(List{Value(int64_t{1} << 40), Value(int64_t{1} << 40)})}}),
               ValueError);
  // reshape: sizes other than -1 must be non-negative; products are checked.
  EXPECT_THROW(ops::Call("reshape", {x}, Dict{{"shape", Value(List{Value(int64_t{-2}), Value(int64_t{-2})})}}),
               ValueError);
  EXPECT_THROW(ops::Call("reshape", {x}, Dict{{"shape", Value(List{Value(kMax), Value(kMax), Value(int64_t{0})})}}),
               ValueError);
}

TEST(Shape, ConvolutionGeometryTakesExtremeStridesWithoutOverflow) {
  Tensor x = Tensor::Zeros({1, 3, 4, 4}, DType::kFloat32);
  Tensor w = Tensor::Zeros({8, 3, 3, 3}, DType::kFloat32);
  // 'same': ceil(4 / stride) is 1 for any stride >= 4 (it overflowed as (4 + stride - 1) / stride).
  Tensor y = ops::Call1("conv2d", {x, w}, Dict{{"stride", Value(kMax)}, {"pad_mode", Value("same")}});
  EXPECT_EQ(y.shape(), (Shape{1, 8, 1, 1}));
  try {
    y.Sync();  // oneDNN may refuse such a stride: a typed error, read here so it is not left pending
  } catch (const Error&) {
  }
  // 'pad': in + padding overflows.
  EXPECT_THROW(ops::Call1("conv2d", {x, w}, Dict{{"pad", Value(kMax)}, {"pad_mode", Value("pad")}}), ValueError);
  // A dilated kernel that overflows.
  EXPECT_THROW(ops::Call1("conv2d", {x, w}, Dict{{"dilation", Value(kMax)}, {"pad_mode", Value("valid")}}), ValueError);
}

TEST(JsonDepth, MeasuresNestingOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth("1"), 0u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": [1, {"b": []}]})"), 4u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "[[[[{{{{"})"), 1u);
  EXPECT_EQ(JsonNestingDepth(R"({"a": "\"[[[["})"), 1u);
  EXPECT_EQ(JsonNestingDepth(std::string(100000, '[')), 100000u);
  EXPECT_EQ(JsonNestingDepth("]]]][[]"), 2u);  // unbalanced closers do not go below 0
}

}  // namespace
}  // namespace msrt
