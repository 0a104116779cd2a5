// vecmath::ErfF32 and NormalCdfF32 (the vectorised float32 erf behind gelu)
// against the C library's erf and erfc in double, rounded to float32: ulp
// distance over every 97th float32 from 0 to past where erf rounds to 1,
// both signs, and the special values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/vector_math.h"

namespace msrt::kernels::vecmath {
namespace {

// The distance in representable float32 values (signs ordered through 0).
int64_t UlpDistance(float a, float b) {
  auto key = [](float f) {
    const auto i = static_cast<int64_t>(std::bit_cast<int32_t>(f));
    return i < 0 ? int64_t{INT32_MIN} - i : i;
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

TEST(VectorMath, ErfIsWithinTwoUlpsOfTheCorrectlyRoundedValue) {
  int64_t worst = 0;
  float worst_x = 0;
  const uint32_t last = std::bit_cast<uint32_t>(6.0f);
  for (uint32_t bits = 0; bits <= last; bits += 97) {
    for (float x : {std::bit_cast<float>(bits), -std::bit_cast<float>(bits)}) {
      const auto want = static_cast<float>(std::erf(static_cast<double>(x)));
      const int64_t d = UlpDistance(ErfF32(x), want);
      if (d > worst) {
        worst = d;
        worst_x = x;
      }
    }
  }
  EXPECT_LE(worst, 2) << "at x = " << worst_x;
}

TEST(VectorMath, ErfSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ErfF32(inf), 1.0f);
  EXPECT_EQ(ErfF32(-inf), -1.0f);
  EXPECT_EQ(ErfF32(100.0f), 1.0f);
  EXPECT_EQ(ErfF32(-4.0f), -1.0f);
  EXPECT_TRUE(std::isnan(ErfF32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(ErfF32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(ErfF32(-0.0f)));
  const float tiny = 1e-40f;  // subnormal: erf(x) = 2 x / sqrt(pi)
  EXPECT_LE(UlpDistance(ErfF32(tiny), static_cast<float>(std::erf(static_cast<double>(tiny)))), 1);
}

TEST(VectorMath, NormalCdfKeepsTheLeftTailsRelativeAccuracy) {
  // Phi(x) = erfc(-x / sqrt(2)) / 2: relative error 4e-6 or better down to
  // x = -5.6 (Phi = 1e-8), where 1 + erf(x / sqrt(2)) would have cancelled.
  double worst = 0;
  for (float x = -5.6f; x <= 5.6f; x += 0.0007f) {
    const double want = 0.5 * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
    worst = std::max(worst, std::fabs(NormalCdfF32(x) - want) / want);
  }
  EXPECT_LT(worst, 4e-6);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(NormalCdfF32(inf), 1.0f);
  EXPECT_EQ(NormalCdfF32(-inf), 0.0f);
  EXPECT_EQ(NormalCdfF32(-10.0f), 0.0f);
  EXPECT_EQ(NormalCdfF32(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(NormalCdfF32(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace msrt::kernels::vecmath
