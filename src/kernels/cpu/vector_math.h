// Elementary functions written so that loops calling them vectorise.
//
// std::exp and friends are opaque calls the compiler cannot vectorise (and
// libmvec needs -ffast-math, which would also break NaN handling), so the
// float32 versions here are branch-free polynomial approximations (Cephes
// style, about 2 ulp), with NaN and infinities handled by selects. float64
// goes to the C library.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace msrt::kernels::vecmath {

/// exp(x) for float32: exact range reduction by ln 2, degree-6 polynomial,
/// scaling by 2^n in two steps so results down to the subnormals are right.
inline float ExpF32(float x) {
  const float lo = -104.0f, hi = 89.0f;
  float c = x < lo ? lo : x;
  c = c > hi ? hi : c;
  c = (x != x) ? 0.0f : c;  // NaN: compute on 0, select x at the end
  float fx = std::floor(c * 1.44269504088896341f + 0.5f);
  float r = c - fx * 0.693359375f;
  r = r + fx * 2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  int32_t n = static_cast<int32_t>(fx);
  int32_t n1 = n / 2;
  int32_t n2 = n - n1;
  float s1 = std::bit_cast<float>(static_cast<int32_t>((n1 + 127) << 23));
  float s2 = std::bit_cast<float>(static_cast<int32_t>((n2 + 127) << 23));
  float y = p * s1 * s2;
  return (x != x) ? x : y;
}

/// tanh(x) for float32: an odd polynomial near 0, 1 - 2 / (exp(2|x|) + 1) elsewhere.
inline float TanhF32(float x) {
  float a = std::fabs(x);
  float z = x * x;
  float small = -5.70498872745e-3f;
  small = small * z + 2.06390887954e-2f;
  small = small * z - 5.37397155531e-2f;
  small = small * z + 1.33314422036e-1f;
  small = small * z - 3.33332819422e-1f;
  small = small * z * x + x;
  float e = ExpF32(2.0f * (a > 20.0f ? 20.0f : a));
  float large = 1.0f - 2.0f / (e + 1.0f);
  large = std::copysign(large, x);
  float y = a < 0.625f ? small : large;
  return (x != x) ? x : y;
}

/// log(x) for float32 (Cephes logf, within 1 ulp): x = m 2^e with m in
/// [sqrt(1/2), sqrt(2)), a degree-9 polynomial in m - 1; subnormals are
/// scaled first, and 0, negatives, infinity and NaN are selected at the end.
inline float LogF32(float x) {
  const bool tiny = x < 1.17549435e-38f;  // below the normal range (zero and negatives fixed below)
  const float xs = tiny ? x * 8388608.0f : x;
  const int32_t bits = std::bit_cast<int32_t>(xs);
  int32_t e = ((bits >> 23) & 0xff) - 126 - (tiny ? 23 : 0);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1 : e;
  m = low ? m + m - 1.0f : m - 1.0f;
  const float ef = static_cast<float>(e);
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  float y = p * m * z;
  y += -2.12194440e-4f * ef;
  y += -0.5f * z;
  float r = m + y + 0.693359375f * ef;
  r = x == 0.0f ? -std::numeric_limits<float>::infinity() : r;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  r = (x < 0.0f || x != x) ? std::numeric_limits<float>::quiet_NaN() : r;
  return r;
}

/// erf(x) for |x| <= kErfSplit: x P(x^2), P a degree-6 fit of erf(x) / x.
inline constexpr float kErfSplit = 0.921875f;
inline float ErfSmallF32(float x) {
  const float s = x * x;
  float p = 8.365006215e-05f;
  p = std::fma(p, s, -8.141392027e-04f);
  p = std::fma(p, s, 5.200905260e-03f);
  p = std::fma(p, s, -2.685934119e-02f);
  p = std::fma(p, s, 1.128369421e-01f);
  p = std::fma(p, s, -3.761263490e-01f);
  p = std::fma(p, s, 1.128379226e+00f);
  return x * p;
}

/// erfc(t) for t in [kErfSplit, 4]: exp(g(t) - t^2), g(t) = log(erfc(t)) + t^2
/// a slowly varying function fitted by a degree-8 polynomial in t - 2.4609375;
/// t^2 is split into a rounded part and its rounding error, so the exponent
/// is exact to float32 accuracy.
inline float ErfcTailF32(float t) {
  const float u = t - 2.4609375f;
  float g = 1.613101858e-06f;
  g = std::fma(g, u, -1.381324091e-05f);
  g = std::fma(g, u, 8.110696217e-05f);
  g = std::fma(g, u, -4.387179215e-04f);
  g = std::fma(g, u, 2.249013400e-03f);
  g = std::fma(g, u, -1.120332535e-02f);
  g = std::fma(g, u, 5.739891902e-02f);
  g = std::fma(g, u, -3.571142256e-01f);
  g = std::fma(g, u, -1.542952418e+00f);
  const float t2 = t * t;
  const float t2_error = std::fma(t, t, -t2);
  return ExpF32((g - t2) - t2_error);
}

/// erf(x) for float32, within about 1 ulp of the correctly rounded value:
/// x P(x^2) near 0, 1 - erfc(|x|) with the sign of x beyond kErfSplit, and
/// exactly +-1 from |x| = 4 on (erf rounds to 1 there); both forms are
/// computed and one selected, so loops vectorise. NaN stays NaN.
inline float ErfF32(float x) {
  const float a = std::fabs(x);
  const float small = ErfSmallF32(x);
  const float t = a < kErfSplit ? kErfSplit : (a > 4.0f ? 4.0f : a);
  float large = 1.0f - ErfcTailF32(t);
  large = a >= 4.0f ? 1.0f : large;
  large = std::copysign(large, x);
  const float y = a <= kErfSplit ? small : large;
  return (x != x) ? x : y;
}

/// Phi(x) = (1 + erf(x / sqrt(2))) / 2, the standard normal CDF, for float32.
/// Below -kErfSplit sqrt(2) it is erfc(|x| / sqrt(2)) / 2 directly, so the
/// left tail keeps its relative accuracy instead of cancelling in 1 + erf;
/// it is 0 below -4 sqrt(2), where Phi < 8e-9. NaN stays NaN.
inline float NormalCdfF32(float x) {
  const float z = x * 0.707106781186547524f;
  const float a = std::fabs(z);
  const float small = 0.5f + 0.5f * ErfSmallF32(z);
  const float t = a < kErfSplit ? kErfSplit : (a > 4.0f ? 4.0f : a);
  const float half_tail = 0.5f * ErfcTailF32(t);
  float large = z < 0.0f ? half_tail : 1.0f - half_tail;
  large = a >= 4.0f ? (z < 0.0f ? 0.0f : 1.0f) : large;
  const float y = a <= kErfSplit ? small : large;
  return (x != x) ? x : y;
}

/// 1 / (1 + exp(-x)).
inline float SigmoidF32(float x) { return 1.0f / (1.0f + ExpF32(-x)); }

// Type-generic entry points used by kernel templates.
template <typename T>
inline T Exp(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return ExpF32(x);
  } else {
    return std::exp(x);
  }
}

template <typename T>
inline T Log(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return LogF32(x);
  } else {
    return std::log(x);
  }
}

template <typename T>
inline T Tanh(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return TanhF32(x);
  } else {
    return std::tanh(x);
  }
}

template <typename T>
inline T Erf(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return ErfF32(x);
  } else {
    return std::erf(x);
  }
}

/// The standard normal CDF (1 + erf(x / sqrt(2))) / 2.
template <typename T>
inline T NormalCdf(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return NormalCdfF32(x);
  } else {
    return T(0.5) * std::erfc(-x * T(0.70710678118654752440));
  }
}

template <typename T>
inline T Sigmoid(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return SigmoidF32(x);
  } else {
    return T(1) / (T(1) + std::exp(-x));
  }
}

}  // namespace msrt::kernels::vecmath
