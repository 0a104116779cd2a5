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
    {DType::kBool, 1, "Bool", "bool_"},
    {DType::kUInt8, 1, "UInt8", "uint8"},
    {DType::kInt8, 1, "Int8", "int8"},
    {DType::kInt16, 2, "Int16", "int16"},
    {DType::kInt32, 4, "Int32", "int32"},
    {DType::kInt64, 8, "Int64", "int64"},
    {DType::kFloat16, 2, "Float16", "float16"},
    {DType::kBFloat16, 2, "BFloat16", "bfloat16"},
    {DType::kFloat32, 4, "Float32", "float32"},
    {DType::kFloat64, 8, "Float64", "float64"},
    {DType::kUInt16, 2, "UInt16", "uint16"},
    {DType::kUInt32, 4, "UInt32", "uint32"},
    {DType::kUInt64, 8, "UInt64", "uint64"},
    {DType::kComplex64, 8, "Complex64", "complex64"},
    {DType::kComplex128, 16, "Complex128", "complex128"},
};

const DTypeInfo& Info(DType d) { return kInfo[static_cast<int>(d)]; }

// The kinds of the promotion lattice: a higher kind wins.
enum class Kind { kBool, kInteger, kFloating, kComplex };

Kind KindOf(DType d) {
  if (d == DType::kBool) return Kind::kBool;
  if (IsIntegral(d)) return Kind::kInteger;
  if (IsFloating(d)) return Kind::kFloating;
  return Kind::kComplex;
}

// Order of the floating types: wider (or, at equal width, bfloat16's range) wins.
int FloatRank(DType d) {
  switch (d) {
    case DType::kFloat16: return 0;
    case DType::kBFloat16: return 1;
    case DType::kFloat32: return 2;
    default: return 3;
  }
}

DType SignedOfSize(size_t bytes) {
  switch (bytes) {
    case 1: return DType::kInt8;
    case 2: return DType::kInt16;
    case 4: return DType::kInt32;
    default: return DType::kInt64;
  }
}

DType PromoteIntegers(DType a, DType b) {
  if (IsUnsigned(a) == IsUnsigned(b)) return ItemSize(a) >= ItemSize(b) ? a : b;
  DType u = IsUnsigned(a) ? a : b;
  DType s = IsUnsigned(a) ? b : a;
  if (ItemSize(s) > ItemSize(u)) return s;
  // No integer type holds both uint64 and a signed range: NumPy gives float64.
  if (ItemSize(u) == 8) return DType::kFloat64;
  return SignedOfSize(2 * ItemSize(u));
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

bool IsUnsigned(DType d) {
  return d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64;
}

bool IsComplex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }

bool IsIntegral(DType d) {
  return IsUnsigned(d) || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}

DType RealPartDType(DType d) {
  if (d == DType::kComplex64) return DType::kFloat32;
  if (d == DType::kComplex128) return DType::kFloat64;
  return d;
}

DType ComplexOfDType(DType d) { return d == DType::kFloat64 ? DType::kComplex128 : DType::kComplex64; }

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  const Kind ka = KindOf(a), kb = KindOf(b);
  if (ka != kb) {
    DType high = ka > kb ? a : b;
    DType low = ka > kb ? b : a;
    // A float with a complex: parts wide enough for both.
    if (KindOf(high) == Kind::kComplex && low == DType::kFloat64) return DType::kComplex128;
    return high;
  }
  switch (ka) {
    case Kind::kInteger: return PromoteIntegers(a, b);
    case Kind::kFloating:
      // float16 with bfloat16 has no exact common narrow type.
      if (ItemSize(a) == 2 && ItemSize(b) == 2) return DType::kFloat32;
      return FloatRank(a) >= FloatRank(b) ? a : b;
    case Kind::kComplex: return DType::kComplex128;
    case Kind::kBool: break;
  }
  return a;
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
