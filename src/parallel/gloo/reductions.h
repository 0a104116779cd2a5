// Elementwise reductions in Gloo's form: out[i] = a[i] op b[i] (out may be a).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "msrt/core/dtype.h"
#include "parallel/communicator.h"

namespace msrt::parallel::gloo_backend {

using ReduceFunction = std::function<void(void*, const void*, const void*, size_t)>;

// NaN wins max and min (as in torch and NumPy's maximum).
template <typename T>
T Max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return std::max(a, b);
}

template <typename T>
T Min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return std::min(a, b);
}

// Integers wrap on overflow (computed unsigned), as the CPU kernels do.
template <typename T, ReduceOp kOp>
void ReduceLoop(void* out, const void* a, const void* b, size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  if constexpr (kOp == ReduceOp::kMax) {
    for (size_t i = 0; i < n; ++i) o[i] = Max(x[i], y[i]);
  } else if constexpr (kOp == ReduceOp::kMin) {
    for (size_t i = 0; i < n; ++i) o[i] = Min(x[i], y[i]);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (size_t i = 0; i < n; ++i) {
      auto u = kOp == ReduceOp::kSum ? static_cast<U>(static_cast<U>(x[i]) + static_cast<U>(y[i]))
                                     : static_cast<U>(static_cast<U>(x[i]) * static_cast<U>(y[i]));
      o[i] = static_cast<T>(u);
    }
  } else if constexpr (kOp == ReduceOp::kSum) {
    for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
  } else {
    for (size_t i = 0; i < n; ++i) o[i] = x[i] * y[i];
  }
}

// float16 and bfloat16: computed in float32, rounded once per element.
template <typename T, float (*kToFloat)(T), T (*kFromFloat)(float), ReduceOp kOp>
void ReduceHalfLoop(void* out, const void* a, const void* b, size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    float u = kToFloat(x[i]);
    float v = kToFloat(y[i]);
    float r = kOp == ReduceOp::kSum    ? u + v
              : kOp == ReduceOp::kProd ? u * v
              : kOp == ReduceOp::kMax  ? Max(u, v)
                                       : Min(u, v);
    o[i] = kFromFloat(r);
  }
}

// bool (one byte, 0 or 1): sum and max are or, prod and min are and.
template <ReduceOp kOp>
void ReduceBoolLoop(void* out, const void* a, const void* b, size_t n) {
  auto* o = static_cast<uint8_t*>(out);
  const auto* x = static_cast<const uint8_t*>(a);
  const auto* y = static_cast<const uint8_t*>(b);
  constexpr bool kOr = kOp == ReduceOp::kSum || kOp == ReduceOp::kMax;
  for (size_t i = 0; i < n; ++i)
    o[i] = kOr ? static_cast<uint8_t>((x[i] | y[i]) != 0) : static_cast<uint8_t>((x[i] & y[i]) != 0);
}

/// The reduction of `op` on `dtype`.
ReduceFunction ReductionFor(DType dtype, ReduceOp op);

}  // namespace msrt::parallel::gloo_backend
