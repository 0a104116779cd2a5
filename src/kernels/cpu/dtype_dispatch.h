// Calling a templated kernel body for a runtime dtype.
//
//   DispatchDType<kFloatTypes>(t.dtype(), "relu", [&]<typename T>() { ... });
#pragma once

#include <complex>
#include <initializer_list>

#include "ops/op_def.h"

namespace msrt::kernels {

/// Sets of dtypes a kernel body is instantiated for.
enum DTypeSet : unsigned {
  kFloatTypes = 1u << 0,    // float32, float64
  kIntTypes = 1u << 1,      // int8, int16, int32, int64, uint8, uint16, uint32, uint64
  kBoolType = 1u << 2,      // bool
  kHalfTypes = 1u << 3,     // float16, bfloat16 (stored as Half / BFloat16)
  kComplexTypes = 1u << 4,  // complex64, complex128 (std::complex<float> / <double>)
  kNumberTypes = kFloatTypes | kIntTypes,
  kAllTypes = kFloatTypes | kIntTypes | kBoolType | kHalfTypes | kComplexTypes,
};

/// Calls body.template operator()<T>() with the C++ type of `dtype`;
/// TypeError naming `op` when `dtype` is outside `kAllowed` (the body is
/// instantiated only for the types in `kAllowed`).
template <unsigned kAllowed, typename Body>
void DispatchDType(DType dtype, std::string_view op, Body&& body) {
  if constexpr ((kAllowed & kFloatTypes) != 0) {
    if (dtype == DType::kFloat32) return body.template operator()<float>();
    if (dtype == DType::kFloat64) return body.template operator()<double>();
  }
  if constexpr ((kAllowed & kIntTypes) != 0) {
    if (dtype == DType::kInt8) return body.template operator()<int8_t>();
    if (dtype == DType::kInt16) return body.template operator()<int16_t>();
    if (dtype == DType::kInt32) return body.template operator()<int32_t>();
    if (dtype == DType::kInt64) return body.template operator()<int64_t>();
    if (dtype == DType::kUInt8) return body.template operator()<uint8_t>();
    if (dtype == DType::kUInt16) return body.template operator()<uint16_t>();
    if (dtype == DType::kUInt32) return body.template operator()<uint32_t>();
    if (dtype == DType::kUInt64) return body.template operator()<uint64_t>();
  }
  if constexpr ((kAllowed & kBoolType) != 0) {
    if (dtype == DType::kBool) return body.template operator()<bool>();
  }
  if constexpr ((kAllowed & kHalfTypes) != 0) {
    if (dtype == DType::kFloat16) return body.template operator()<Half>();
    if (dtype == DType::kBFloat16) return body.template operator()<BFloat16>();
  }
  if constexpr ((kAllowed & kComplexTypes) != 0) {
    if (dtype == DType::kComplex64) return body.template operator()<std::complex<float>>();
    if (dtype == DType::kComplex128) return body.template operator()<std::complex<double>>();
  }
  // Every other dtype, whatever enum values are added later.
  ops::OpError(ErrorKind::kType, op, StrCat("does not support dtype ", DTypeName(dtype)));
}

}  // namespace msrt::kernels
