// Calling a templated kernel body for a runtime dtype.
//
//   DispatchDType(t.dtype(), "relu", kFloatTypes, [&]<typename T>() { ... });
#pragma once

#include <initializer_list>

#include "ops/op_def.h"

namespace msrt::kernels {

/// Sets of dtypes a kernel body is instantiated for.
enum DTypeSet : unsigned {
  kFloatTypes = 1u << 0,  // float32, float64
  kIntTypes = 1u << 1,    // uint8, int8, int16, int32, int64
  kBoolType = 1u << 2,    // bool
  kHalfTypes = 1u << 3,   // float16, bfloat16 (stored as Half / BFloat16)
  kNumberTypes = kFloatTypes | kIntTypes,
  kAllTypes = kFloatTypes | kIntTypes | kBoolType | kHalfTypes,
};

/// Calls body.template operator()<T>() with the C++ type of `dtype`;
/// TypeError naming `op` when `dtype` is outside `allowed`.
template <typename Body>
void DispatchDType(DType dtype, std::string_view op, unsigned allowed, Body&& body) {
  auto fail = [&] { ops::OpError(ErrorKind::kType, op, StrCat("does not support dtype ", DTypeName(dtype))); };
  switch (dtype) {
    case DType::kFloat32:
      if (allowed & kFloatTypes) return body.template operator()<float>();
      break;
    case DType::kFloat64:
      if (allowed & kFloatTypes) return body.template operator()<double>();
      break;
    case DType::kInt32:
      if (allowed & kIntTypes) return body.template operator()<int32_t>();
      break;
    case DType::kInt64:
      if (allowed & kIntTypes) return body.template operator()<int64_t>();
      break;
    case DType::kInt16:
      if (allowed & kIntTypes) return body.template operator()<int16_t>();
      break;
    case DType::kInt8:
      if (allowed & kIntTypes) return body.template operator()<int8_t>();
      break;
    case DType::kUInt8:
      if (allowed & kIntTypes) return body.template operator()<uint8_t>();
      break;
    case DType::kBool:
      if (allowed & kBoolType) return body.template operator()<bool>();
      break;
    case DType::kFloat16:
      if (allowed & kHalfTypes) return body.template operator()<Half>();
      break;
    case DType::kBFloat16:
      if (allowed & kHalfTypes) return body.template operator()<BFloat16>();
      break;
  }
  fail();
}

}  // namespace msrt::kernels
