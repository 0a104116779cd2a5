// SelectKernelOrConvert: kernels that lack a dtype run through a substitute
// when enable_reduce_precision is True, and TypeError names op and dtype when
// it is False.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/kernel.h"
#include "msrt/context/context.h"
#include "ops/call.h"

namespace msrt {
namespace {

using kernels::SelectKernelOrConvert;

std::vector<ops::TensorMeta> MatmulMetas(DType dtype) { return {{{2, 3}, dtype}, {{3, 4}, dtype}}; }

TEST(ReducePrecision, ExactKernelIsPreferred) {
  const kernels::KernelDef* k = SelectKernelOrConvert("matmul", DeviceTarget::kCPU, MatmulMetas(DType::kFloat32), {});
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k, kernels::SelectKernel("matmul", DeviceTarget::kCPU, MatmulMetas(DType::kFloat32), {}));
}

Dict PoolAttrs() { return Dict{{"kernel_size", Value(2)}, {"strides", Value(2)}, {"pad_mode", Value("valid")}}; }

Tensor HalfOf(std::vector<float> values, const Shape& shape) {
  return ops::Call1("cast", {Tensor::FromHost(values.data(), values.size() * 4, shape, DType::kFloat32)},
                    Dict{{"dtype", Value("float16")}});
}

TEST(ReducePrecision, Float16AvgPoolRunsThroughFloat32) {
  std::vector<ops::TensorMeta> metas{{{1, 1, 2, 4}, DType::kFloat16}};
  ASSERT_EQ(kernels::SelectKernel("avg_pool2d", DeviceTarget::kCPU, metas, PoolAttrs()), nullptr);
  const kernels::KernelDef* k = SelectKernelOrConvert("avg_pool2d", DeviceTarget::kCPU, metas, PoolAttrs());
  ASSERT_NE(k, nullptr);
  EXPECT_NE(std::string(k->impl).find("via float32"), std::string::npos) << k->impl;
  Tensor x = HalfOf({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  Tensor out = ops::Call1("cast", {ops::Call1("avg_pool2d", {x}, PoolAttrs())}, Dict{{"dtype", Value("float32")}});
  out.Sync();
  ASSERT_EQ(out.shape(), (Shape{1, 1, 1, 2}));
  const float* o = static_cast<const float*>(out.raw());
  EXPECT_FLOAT_EQ(o[0], 3.5f);
  EXPECT_FLOAT_EQ(o[1], 5.5f);
}

// Note [float16 products]: float16 matmul has a kernel of its own (no substitution).
TEST(ReducePrecision, Float16MatmulHasItsOwnKernel) {
  const kernels::KernelDef* k = kernels::SelectKernel("matmul", DeviceTarget::kCPU, MatmulMetas(DType::kFloat16), {});
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(std::string(k->impl), "onednn float32 slices");
  Tensor ta = HalfOf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor tb = HalfOf(std::vector<float>(12, 0.5f), {3, 4});
  Tensor out = ops::Call1("cast", {ops::Call1("matmul", {ta, tb})}, Dict{{"dtype", Value("float32")}});
  out.Sync();
  ASSERT_EQ(out.shape(), (Shape{2, 4}));
  const float* o = static_cast<const float*>(out.raw());
  EXPECT_FLOAT_EQ(o[0], 3.0f);
  EXPECT_FLOAT_EQ(o[7], 7.5f);
}

TEST(ReducePrecision, FalseRaisesTypeErrorNamingOpAndDType) {
  SetContext(Dict{{"enable_reduce_precision", Value(false)}});
  try {
    SelectKernelOrConvert("avg_pool2d", DeviceTarget::kCPU, {{{1, 1, 4, 4}, DType::kFloat16}}, PoolAttrs());
    ADD_FAILURE() << "no error";
  } catch (const TypeError& e) {
    EXPECT_NE(e.message().find("avg_pool2d"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("Float16"), std::string::npos) << e.message();
  }
  SetContext(Dict{{"enable_reduce_precision", Value(true)}});
}

TEST(ReducePrecision, IntegerInputsHaveNoSubstitute) {
  EXPECT_EQ(SelectKernelOrConvert("conv2d", DeviceTarget::kCPU,
                                  {{{1, 1, 4, 4}, DType::kInt32}, {{1, 1, 3, 3}, DType::kInt32}}, {}),
            nullptr);
}

}  // namespace
}  // namespace msrt
