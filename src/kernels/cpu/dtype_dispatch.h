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
  auto fail = [&] { ops::OpError(ErrorKind::kType, op, StrCat("does not support dtype ", DTypeName(dtype))); };
  switch (dtype) {
    case DType::kFloat32:
      if constexpr ((kAllowed & kFloatTypes) != 0) return body.template operator()<float>();
      break;
    case DType::kFloat64:
      if constexpr ((kAllowed & kFloatTypes) != 0) return body.template operator()<double>();
      break;
    case DType::kInt32:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<int32_t>();
      break;
    case DType::kInt64:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<int64_t>();
      break;
    case DType::kInt16:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<int16_t>();
      break;
    case DType::kInt8:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<int8_t>();
      break;
    case DType::kUInt8:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<uint8_t>();
      break;
    case DType::kUInt16:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<uint16_t>();
      break;
    case DType::kUInt32:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<uint32_t>();
      break;
    case DType::kUInt64:
      if constexpr ((kAllowed & kIntTypes) != 0) return body.template operator()<uint64_t>();
      break;
    case DType::kComplex64:
      if constexpr ((kAllowed & kComplexTypes) != 0) return body.template operator()<std::complex<float>>();
      break;
    case DType::kComplex128:
      if constexpr ((kAllowed & kComplexTypes) != 0) return body.template operator()<std::complex<double>>();
      break;
    case DType::kBool:
      if constexpr ((kAllowed & kBoolType) != 0) return body.template operator()<bool>();
      break;
    case DType::kFloat16:
      if constexpr ((kAllowed & kHalfTypes) != 0) return body.template operator()<Half>();
      break;
    case DType::kBFloat16:
      if constexpr ((kAllowed & kHalfTypes) != 0) return body.template operator()<BFloat16>();
      break;
  }
  fail();
}

}  // namespace msrt::kernels
