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

TEST(ReducePrecision, Float16MatmulRunsThroughFloat32) {
  ASSERT_EQ(kernels::SelectKernel("matmul", DeviceTarget::kCPU, MatmulMetas(DType::kFloat16), {}), nullptr);
  const kernels::KernelDef* k = SelectKernelOrConvert("matmul", DeviceTarget::kCPU, MatmulMetas(DType::kFloat16), {});
  ASSERT_NE(k, nullptr);
  EXPECT_NE(std::string(k->impl).find("via float32"), std::string::npos) << k->impl;
  std::vector<float> a{1, 2, 3, 4, 5, 6}, b(12, 0.5f);
  Tensor ta = ops::Call1("cast", {Tensor::FromHost(a.data(), a.size() * 4, {2, 3}, DType::kFloat32)},
                         Dict{{"dtype", Value("float16")}});
  Tensor tb = ops::Call1("cast", {Tensor::FromHost(b.data(), b.size() * 4, {3, 4}, DType::kFloat32)},
                         Dict{{"dtype", Value("float16")}});
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
    SelectKernelOrConvert("conv2d", DeviceTarget::kCPU,
                          {{{1, 1, 4, 4}, DType::kFloat16}, {{1, 1, 3, 3}, DType::kFloat16}}, {});
    ADD_FAILURE() << "no error";
  } catch (const TypeError& e) {
    EXPECT_NE(e.message().find("conv2d"), std::string::npos) << e.message();
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
