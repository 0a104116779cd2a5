// Floating-point to integer conversion with defined results (core/float_to_int.h).
#include "core/float_to_int.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "msrt/tensor/tensor.h"

namespace msrt {
namespace {

TEST(FloatToInt, TruncatesValuesInRange) {
  EXPECT_EQ(FloatToInt<int32_t>(2.9), 2);
  EXPECT_EQ(FloatToInt<int32_t>(-2.9), -2);
  EXPECT_EQ(FloatToInt<int64_t>(1e18), int64_t{1000000000000000000});
  EXPECT_EQ(FloatToInt<int8_t>(100.5f), 100);
}

TEST(FloatToInt, OutOfRangeAndNanGiveTheIndefiniteValueAsOnX86) {
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FloatToInt<int32_t>(kNan), INT32_MIN);
  EXPECT_EQ(FloatToInt<int32_t>(kInf), INT32_MIN);
  EXPECT_EQ(FloatToInt<int32_t>(-1e300), INT32_MIN);
  EXPECT_EQ(FloatToInt<int32_t>(2147483648.0), INT32_MIN);
  EXPECT_EQ(FloatToInt<int32_t>(-2147483648.0), INT32_MIN);
  EXPECT_EQ(FloatToInt<int32_t>(2147483647.0), INT32_MAX);
  EXPECT_EQ(FloatToInt<int64_t>(9.3e18), INT64_MIN);
  EXPECT_EQ(FloatToInt<int64_t>(static_cast<float>(kNan)), INT64_MIN);
  // Narrow types keep the low bits of the int32 result (NumPy on x86 does the same).
  EXPECT_EQ(FloatToInt<int8_t>(300.0), static_cast<int8_t>(300));
  EXPECT_EQ(FloatToInt<uint8_t>(1e10), 0);
  EXPECT_EQ(FloatToInt<int16_t>(kNan), 0);
}

TEST(FloatToInt, ScalarTensorsUseIt) {
  Tensor t = Tensor::Scalar(1e300, DType::kInt32);
  EXPECT_EQ(*t.data<int32_t>(), INT32_MIN);
  Tensor u = Tensor::Scalar(std::nan(""), DType::kUInt8);
  EXPECT_EQ(*u.data<uint8_t>(), 0);
}

}  // namespace
}  // namespace msrt
