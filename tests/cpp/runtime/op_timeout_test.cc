// op_timeout (Note [Op timeout]): a kernel running past the limit is
// cancelled at its next cancellation point and fails with a RuntimeError
// naming the op and the limit; the runtime goes on.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/tensor/tensor.h"
#include "ops/call.h"

namespace msrt {
namespace {

TEST(OpTimeout, ALongKernelIsCancelledAndTheRuntimeGoesOn) {
  SetContext(Dict{{"op_timeout", Value(1)}});
  // A float64 product runs on the reference kernel: ~69 GFLOP, a minute or more here.
  Tensor a = Tensor::Zeros({3072, 3072}, DType::kFloat64);
  auto start = std::chrono::steady_clock::now();
  Tensor c = ops::Call1("matmul", {a, a});
  try {
    c.Sync();
    ADD_FAILURE() << "the product finished";
  } catch (const RuntimeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'matmul'"), std::string::npos) << m;
    EXPECT_NE(m.find("op_timeout (1 s)"), std::string::npos) << m;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 1.0);
  EXPECT_LT(seconds, 30.0) << "not cancelled";
  // The next launches run normally.
  Tensor small = Tensor::Zeros({8, 8}, DType::kFloat64);
  Tensor d = ops::Call1("matmul", {small, small});
  d.Sync();
  EXPECT_EQ(d.shape(), (Shape{8, 8}));
  SetContext(Dict{{"op_timeout", Value(900)}});
}

}  // namespace
}  // namespace msrt
