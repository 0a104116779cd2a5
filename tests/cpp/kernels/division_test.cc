// The CPU division kernel multiplies by the reciprocal of a power-of-two
// divisor (Note [Division by a power of two] in kernels/cpu/elementwise.cc):
// its results keep the bits of a division for every dividend, subnormal,
// infinite and NaN ones included, and other divisors still divide.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ops/call.h"

namespace msrt {
namespace {

template <typename T, typename Bits>
std::vector<T> Dividends(size_t n) {
  std::mt19937_64 random(7);
  std::vector<T> v;
  // Every class of value: zeros, subnormals, the extremes, infinities, NaNs, and random bit patterns.
  for (T special : {T(0), -T(0), std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                    std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), -std::numeric_limits<T>::max(),
                    std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                    std::numeric_limits<T>::quiet_NaN(), T(1), T(3), T(1) + std::numeric_limits<T>::epsilon()}) {
    v.push_back(special);
  }
  while (v.size() < n) {
    const auto bits = static_cast<Bits>(random());
    T x;
    std::memcpy(&x, &bits, sizeof(T));
    v.push_back(x);
  }
  return v;
}

template <typename T, typename Bits>
void ExpectDivisionBits(DType dtype, const std::vector<T>& divisors) {
  // More elements than one thread's share, so the kernel splits the work.
  const std::vector<T> x = Dividends<T, Bits>(100003);
  const Tensor a = Tensor::FromHost(x.data(), x.size() * sizeof(T), {static_cast<int64_t>(x.size())}, dtype);
  for (T d : divisors) {
    const Tensor b = Tensor::FromHost(&d, sizeof(T), {}, dtype);
    Tensor q = ops::Call1("div", {a, b});
    q.Sync();
    const T* got = q.data<T>();
    for (size_t i = 0; i < x.size(); ++i) {
      volatile T divisor = d;  // a division here, whatever the compiler knows of d
      const T want = x[i] / divisor;
      Bits w, g;
      std::memcpy(&w, &want, sizeof(T));
      std::memcpy(&g, &got[i], sizeof(T));
      ASSERT_EQ(g, w) << "dividend " << x[i] << " divisor " << d << " element " << i;
    }
  }
}

template <typename T>
std::vector<T> Divisors() {
  std::vector<T> d;
  const int max_exponent = std::numeric_limits<T>::max_exponent;  // 2^(max_exponent - 1) is the largest power
  for (int k = std::numeric_limits<T>::min_exponent - 1; k < max_exponent; k += 1) {
    d.push_back(std::ldexp(T(1), k));
    d.push_back(-std::ldexp(T(1), k));
  }
  // Powers whose reciprocal is no normal float, and divisors that are no power of two.
  d.push_back(std::numeric_limits<T>::denorm_min());
  d.push_back(std::ldexp(T(1), max_exponent - 1));
  for (T other : {T(3), T(0.1), T(65504), T(0), -T(0), std::numeric_limits<T>::infinity(),
                  std::numeric_limits<T>::quiet_NaN(), T(1) + std::numeric_limits<T>::epsilon()}) {
    d.push_back(other);
  }
  return d;
}

TEST(Division, ByAScalarKeepsTheBitsOfADivisionFloat32) {
  ExpectDivisionBits<float, uint32_t>(DType::kFloat32, Divisors<float>());
}

TEST(Division, ByAScalarKeepsTheBitsOfADivisionFloat64) {
  // Every 16th power of two of float64's range, and the rest as for float32.
  std::vector<double> divisors;
  const std::vector<double> all = Divisors<double>();
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % 16 == 0 || i + 12 >= all.size()) divisors.push_back(all[i]);
  }
  ExpectDivisionBits<double, uint64_t>(DType::kFloat64, divisors);
}

TEST(Division, ElementwiseDivisorsStillDivide) {
  const std::vector<float> x{1.0f, 3.0f, -7.5f, 1e-40f};
  const std::vector<float> y{4.0f, 3.0f, 0.5f, 0.25f};
  const Tensor a = Tensor::FromHost(x.data(), 16, {4}, DType::kFloat32);
  const Tensor b = Tensor::FromHost(y.data(), 16, {4}, DType::kFloat32);
  Tensor q = ops::Call1("div", {a, b});
  q.Sync();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(q.data<float>()[i], x[i] / y[i]);
}

}  // namespace
}  // namespace msrt
