// The class losses (Note [Class losses] in ops/loss.cc): their attributes are
// parsed into one canonical form, their class weights are checked, and their
// (N, C, d...) inputs give what the same samples give as rows of (N*d..., C).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
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

Tensor Labels(const std::vector<int32_t>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(int32_t), shape, DType::kInt32);
}

std::vector<double> Values(const Tensor& t) {
  t.Sync();
  const double* p = t.raw<double>();
  return std::vector<double>(p, p + NumElements(t.shape()));
}

TEST(ClassLosses, AttributesTakeOneCanonicalForm) {
  for (std::string_view op : {"cross_entropy", "negative_log_likelihood"}) {
    Dict attrs = NormalizeAttrs(GetOp(op), Dict{{"label_smoothing", Value(1)}});
    EXPECT_EQ(AttrInt(attrs, "ignore_index"), -100);
    EXPECT_EQ(AttrString(attrs, "reduction"), "mean");
    const Value* smoothing = attrs.Find("label_smoothing");
    ASSERT_NE(smoothing, nullptr);
    EXPECT_TRUE(smoothing->is_float());
    EXPECT_EQ(smoothing->as_float(), 1.0);
  }
  EXPECT_FALSE(AttrBool(NormalizeAttrs(GetOp("sparse_softmax_cross_entropy_with_logits"), Dict{}), "is_grad"));
}

TEST(ClassLosses, BadAttributesNameTheOp) {
  EXPECT_NE(Message<ValueError>([] {
              NormalizeAttrs(GetOp("cross_entropy"), Dict{{"reduction", Value("avg")}});
            }).find("[cross_entropy] attribute 'reduction'"),
            std::string::npos);
  EXPECT_NE(Message<TypeError>([] {
              NormalizeAttrs(GetOp("negative_log_likelihood"), Dict{{"ignore_index", Value(0.5)}});
            }).find("[negative_log_likelihood] attribute 'ignore_index'"),
            std::string::npos);
  EXPECT_NE(Message<TypeError>([] {
              NormalizeAttrs(GetOp("sparse_softmax_cross_entropy_with_logits"), Dict{{"is_grad", Value(1)}});
            }).find("'is_grad'"),
            std::string::npos);
}

TEST(ClassLosses, ClassWeightsNeedOneWeightPerClass) {
  Tensor x = Floats({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, {2, 3});
  Tensor labels = Labels({0, 2}, {2});
  std::string message = Message<ValueError>([&] { Call("cross_entropy", {x, labels, Floats({1.0, 2.0}, {2})}); });
  EXPECT_NE(message.find("For 'cross_entropy', the shape of 'weight' must be (C,) = (3,) for inputs with 3 "
                         "classes, but got (2,)"),
            std::string::npos)
      << message;
  message = Message<ValueError>([&] { Call("negative_log_likelihood", {x, labels, Floats({1.0}, {1, 1})}); });
  EXPECT_NE(message.find("For 'nll_loss', the shape of 'weight'"), std::string::npos) << message;
}

TEST(ClassLosses, ExtraDimensionsAreMoreSamples) {
  // x (N=1, C=2, d=3), and the same three samples as rows of (3, 2).
  Tensor x = Floats({0.5, -1.0, 2.0, 1.5, 0.0, -0.5}, {1, 2, 3});
  Tensor rows = Floats({0.5, 1.5, -1.0, 0.0, 2.0, -0.5}, {3, 2});
  Dict none{{"reduction", Value("none")}, {"ignore_index", Value(1)}};
  for (Tensor weight : {Tensor(), Floats({2.0, 0.5}, {2})}) {
    Tensor per_sample = Call1("cross_entropy", {x, Labels({0, 1, 0}, {1, 3}), weight}, none);
    EXPECT_EQ(per_sample.shape(), (Shape{1, 3}));
    std::vector<double> flat = Values(Call1("cross_entropy", {rows, Labels({0, 1, 0}, {3}), weight}, none));
    std::vector<double> got = Values(per_sample);
    for (size_t i = 0; i < flat.size(); ++i) EXPECT_NEAR(got[i], flat[i], 1e-15);
    EXPECT_EQ(flat[1], 0.0);  // the ignored sample
  }
}

TEST(ClassLosses, TotalWeightCountsTheKeptTargets) {
  Tensor lp = Floats({-0.1, -2.0, -3.0, -0.5, -1.0, -1.0}, {3, 2});
  std::vector<Tensor> out = Call("nll_loss_with_total_weight",
                                 {lp, Labels({1, -100, 0}, {3}), Floats({2.0, 3.0}, {2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(Values(out[1])[0], 5.0);
  EXPECT_DOUBLE_EQ(Values(out[0])[0], (3.0 * 2.0 + 2.0 * 1.0) / 5.0);
}

}  // namespace
}  // namespace msrt::ops
