// Optional inputs (Note [Optional inputs] in ops/op_def.h): a composite takes
// an undefined Tensor for one left out, a Python form binds it by its name
// without the "?", and nothing else may be left out.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/call.h"

namespace msrt {
namespace {

Tensor Floats(const std::vector<double>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(double), shape, DType::kFloat64);
}

double Item(const Tensor& t) {
  t.Sync();
  return *t.raw<double>();
}

ops::OpDef Weighted() {
  return ops::OpDef{.name = "weighted",
                    .inputs = {"x", "weight?"},
                    .attrs = {{"scale", 1.0, "a factor", ops::AttrType::kFloat}},
                    .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                      return {in[1].defined() ? ops::Call1("mul", {in[0], in[1]}) : in[0]};
                    }};
}

TEST(OptionalInput, IsOptionalInputReadsTheQuestionMark) {
  ops::OpDef op = Weighted();
  EXPECT_FALSE(ops::IsOptionalInput(op, 0));
  EXPECT_TRUE(ops::IsOptionalInput(op, 1));
  EXPECT_FALSE(ops::IsOptionalInput(op, 2));
  const ops::OpDef& bce = ops::GetOp("binary_cross_entropy_with_logits");
  EXPECT_FALSE(ops::IsOptionalInput(bce, 1));
  EXPECT_TRUE(ops::IsOptionalInput(bce, 2));
  EXPECT_TRUE(ops::IsOptionalInput(bce, 3));
}

TEST(OptionalInput, AFormBindsItByItsNameWithoutTheMark) {
  ops::OpDef op = Weighted();
  ops::ParsedForm form = ops::ParseApiForm(op, ops::Function("weighted(input->x, weight=None, scale=1.0)"));
  ASSERT_EQ(form.params.size(), 3u);
  EXPECT_EQ(form.params[0].binds, ops::ApiParam::Binds::kInput);
  EXPECT_EQ(form.params[1].binds, ops::ApiParam::Binds::kOptionalInput);
  EXPECT_EQ(form.params[1].target, "weight");
  EXPECT_TRUE(form.params[1].default_value->is_none());
  EXPECT_EQ(form.params[2].binds, ops::ApiParam::Binds::kAttr);
  // A primitive's call may require it (None still means absent).
  form = ops::ParseApiForm(op, ops::Primitive("Weighted(scale=1.0)(x, w->weight)"));
  EXPECT_EQ(form.params[1].binds, ops::ApiParam::Binds::kOptionalInput);
}

TEST(OptionalInput, ItsDefaultCanOnlyBeNone) {
  ops::OpDef op = Weighted();
  try {
    ops::ParseApiForm(op, ops::Function("weighted(x, weight=1.0)"));
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(e.message().find("optional input parameter 'weight' may only default to None"), std::string::npos)
        << e.message();
  }
  EXPECT_THROW(ops::ParseApiForm(op, ops::Function("weighted(x, weight?=None)")), ValueError);
}

TEST(OptionalInput, ACompositeSeesAnUndefinedTensorForOneLeftOut) {
  Tensor x = Floats({0.5, -2.0, 3.0}, {3});
  Tensor y = Floats({1.0, 0.0, 1.0}, {3});
  Tensor plain = ops::Call1("binary_cross_entropy_with_logits", {x, y, Tensor(), Tensor()});
  Tensor ones = Floats({1.0, 1.0, 1.0}, {3});
  Tensor weighted = ops::Call1("binary_cross_entropy_with_logits", {x, y, ones, ones});
  double expected = 0.0;
  for (auto [xi, yi] : {std::pair{0.5, 1.0}, {-2.0, 0.0}, {3.0, 1.0}}) {
    expected += std::max(xi, 0.0) - xi * yi + std::log1p(std::exp(-std::abs(xi)));
  }
  EXPECT_NEAR(Item(plain), expected / 3, 1e-12);
  EXPECT_NEAR(Item(weighted), expected / 3, 1e-12);
}

TEST(OptionalInput, NoOtherInputMayBeUndefined) {
  Tensor x = Floats({0.5}, {1});
  try {
    ops::Call("binary_cross_entropy_with_logits", {x, Tensor(), Tensor(), Tensor()});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(e.message().find("[binary_cross_entropy_with_logits] input 1 is an undefined tensor"), std::string::npos)
        << e.message();
  }
  EXPECT_THROW(ops::Call("mse_loss", {x, Tensor()}), ValueError);
}

}  // namespace
}  // namespace msrt
