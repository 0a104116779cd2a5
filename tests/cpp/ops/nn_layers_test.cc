// layer_norm (a kernel-backed op) and the layer composites from C++: values,
// the statistics' shapes, agreement between ops that compute the same thing,
// and errors that name the op.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "msrt/core/errors.h"
#include "ops/call.h"
#include "ops/op_def.h"
#include "ops/op_test_util.h"

namespace msrt::ops {
namespace {

Tensor Floats(const std::vector<double>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(double), shape, DType::kFloat64);
}

std::vector<double> Values(const Tensor& t) {
  t.Sync();
  const double* p = t.raw<double>();
  return std::vector<double>(p, p + NumElements(t.shape()));
}

TEST(LayerNorm, NormalizesRowsAndReturnsTheirStatistics) {
  Tensor x = Floats({1, 2, 3, 4, -1, 0, 1, 6}, {2, 4});
  Tensor gamma = Floats({1, 2, 1, 1}, {4});
  Tensor beta = Floats({0, 0, 0, 1}, {4});
  std::vector<Tensor> out = Call("layer_norm", {x, gamma, beta}, Dict{{"epsilon", Value(1e-12)}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(Values(out[1]), (std::vector<double>{2.5, 1.5}));
  EXPECT_NEAR(Values(out[2])[0], 1.25, 1e-12);
  const double inv_std = 1.0 / std::sqrt(1.25);
  std::vector<double> y = Values(out[0]);
  EXPECT_NEAR(y[0], -1.5 * inv_std, 1e-9);
  EXPECT_NEAR(y[1], 2 * -0.5 * inv_std, 1e-9);
  EXPECT_NEAR(y[3], 1.5 * inv_std + 1, 1e-9);
}

TEST(LayerNorm, OneGroupOfGroupNormIsLayerNormOverChannelsAndLength) {
  std::vector<double> values;
  for (int i = 0; i < 24; ++i) values.push_back(std::sin(i * 0.7) * 3);
  Tensor x = Floats(values, {2, 3, 4});
  Tensor ones = Floats(std::vector<double>(12, 1.0), {3, 4});
  Tensor zeros = Floats(std::vector<double>(12, 0.0), {3, 4});
  Dict ln{{"begin_norm_axis", Value(1)}, {"begin_params_axis", Value(1)}, {"epsilon", Value(1e-5)}};
  std::vector<double> a = Values(Call("layer_norm", {x, ones, zeros}, ln)[0]);
  std::vector<double> b = Values(
      Call1("group_norm", {x, Tensor(), Tensor()}, Dict{{"num_groups", Value(1)}, {"epsilon", Value(1e-5)}}));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << i;
}

TEST(LayerNorm, BadInputsNameTheOp) {
  Tensor x = Floats({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor g = Floats({1, 1, 1}, {3});
  EXPECT_NE(Message<ValueError>([&] {
              Call("layer_norm", {x, g, g}, Dict{{"begin_norm_axis", Value(5)}});
            }).find("[layer_norm] 'begin_norm_axis' must be in [-2, 2)"),
            std::string::npos);
  Tensor short_gamma = Floats({1, 1}, {2});
  EXPECT_NE(Message<ValueError>([&] {
              Call("layer_norm", {x, short_gamma, g});
            }).find("expected (3,), but got (2,)"),
            std::string::npos);
  EXPECT_NE(Message<ValueError>([&] {
              Call("layer_norm", {x, g, g}, Dict{{"epsilon", Value(0.0)}});
            }).find("'epsilon' must be positive"),
            std::string::npos);
}

TEST(LayerComposites, InterpolateAndAdaptivePoolAgreeOnExactHalving) {
  // Halving by 'bilinear' without align_corners averages each 2x2 block, as adaptive_avg_pool2d does.
  std::vector<double> values;
  for (int i = 0; i < 16; ++i) values.push_back(i * 0.5 - 3);
  Tensor x = Floats(values, {1, 1, 4, 4});
  std::vector<double> pooled = Values(
      Call1("adaptive_avg_pool2d", {x}, Dict{{"output_size", Value(List{Value(2), Value(2)})}}));
  std::vector<double> resized = Values(
      Call1("interpolate", {x},
            Dict{{"size", Value(List{Value(2), Value(2)})}, {"mode", Value(std::string("bilinear"))}}));
  ASSERT_EQ(pooled.size(), 4u);
  for (size_t i = 0; i < pooled.size(); ++i) EXPECT_NEAR(pooled[i], resized[i], 1e-12) << i;
}

}  // namespace
}  // namespace msrt::ops
