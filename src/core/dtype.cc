#include "msrt/core/dtype.h"

#include <cmath>

namespace msrt {
namespace {

struct DTypeInfo {
  DType dtype;
  size_t size;
  std::string_view name;
  std::string_view attr;
};

constexpr DTypeInfo kInfo[kDTypeCount] = {
    {DType::kBool, 1, "Bool", "bool_"},         {DType::kUInt8, 1, "UInt8", "uint8"},
    {DType::kInt8, 1, "Int8", "int8"},          {DType::kInt16, 2, "Int16", "int16"},
    {DType::kInt32, 4, "Int32", "int32"},       {DType::kInt64, 8, "Int64", "int64"},
    {DType::kFloat16, 2, "Float16", "float16"}, {DType::kBFloat16, 2, "BFloat16", "bfloat16"},
    {DType::kFloat32, 4, "Float32", "float32"}, {DType::kFloat64, 8, "Float64", "float64"},
};

const DTypeInfo& Info(DType d) { return kInfo[static_cast<int>(d)]; }

// Rank in the promotion lattice and the result for mixed signed/unsigned.
int Rank(DType d) {
  switch (d) {
    case DType::kBool: return 0;
    case DType::kUInt8: return 1;
    case DType::kInt8: return 2;
    case DType::kInt16: return 3;
    case DType::kInt32: return 4;
    case DType::kInt64: return 5;
    case DType::kFloat16: return 6;
    case DType::kBFloat16: return 7;
    case DType::kFloat32: return 8;
    case DType::kFloat64: return 9;
  }
  return 0;
}

}  // namespace

size_t ItemSize(DType dtype) { return Info(dtype).size; }
std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
std::string_view DTypeAttrName(DType dtype) { return Info(dtype).attr; }

std::optional<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kInfo) {
    if (info.name == name || info.attr == name) return info.dtype;
  }
  if (name == "bool") return DType::kBool;
  return std::nullopt;
}

bool IsFloating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

bool IsIntegral(DType d) { return !IsFloating(d) && d != DType::kBool; }

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  // float16 with bfloat16 has no exact common narrow type.
  if ((a == DType::kFloat16 && b == DType::kBFloat16) || (a == DType::kBFloat16 && b == DType::kFloat16)) {
    return DType::kFloat32;
  }
  // uint8 with int8 needs int16, as NumPy does.
  if ((a == DType::kUInt8 && b == DType::kInt8) || (a == DType::kInt8 && b == DType::kUInt8)) return DType::kInt16;
  return Rank(a) >= Rank(b) ? a : b;
}

float HalfToFloat(Half h) {
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1fu;
  uint32_t mantissa = h.bits & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int shift = 0;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      bits = sign | (static_cast<uint32_t>(127 - 15 - shift + 1) << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

Half FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return Half{static_cast<uint16_t>(sign | 0x7e00u)};   // NaN
  if (abs >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // overflow → inf
  if (abs < 0x38800000u) {                                                     // subnormal or zero in half
    if (abs < 0x33000000u) return Half{sign};
    uint32_t exponent = abs >> 23;
    uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;  // 113 + 13
    uint32_t rounded = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (rounded & 1u))) ++rounded;
    return Half{static_cast<uint16_t>(sign | rounded)};
  }
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u) - (112u << 23);
  return Half{static_cast<uint16_t>(sign | (rounded >> 13))};
}

}  // namespace msrt
