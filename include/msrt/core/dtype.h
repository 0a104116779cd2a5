// Element types of tensors.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace msrt {

/// Element types, as MindSpore names them (ms.float32, ms.int64, ...).
enum class DType : uint8_t {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  // Appended after the first ten so that stored dtype codes keep their meaning.
  kUInt16,
  kUInt32,
  kUInt64,
  kComplex64,   // two float32: real, imaginary
  kComplex128,  // two float64
};
inline constexpr int kDTypeCount = 15;

/// Bytes per element.
size_t ItemSize(DType dtype);
/// MindSpore's printed name: "Float32", "Int64", "Bool", ...
std::string_view DTypeName(DType dtype);
/// The lower-case Python attribute name: "float32", "int64", "bool_", ...
std::string_view DTypeAttrName(DType dtype);
/// Parses either form of name; nullopt when unknown.
std::optional<DType> ParseDType(std::string_view name);

bool IsFloating(DType dtype);  // real floating point: float16, bfloat16, float32, float64
bool IsIntegral(DType dtype);  // signed and unsigned integers, not bool
bool IsUnsigned(DType dtype);  // uint8, uint16, uint32, uint64
bool IsComplex(DType dtype);   // complex64, complex128
/// The real dtype of a complex one's parts (complex64 -> float32); other dtypes unchanged.
DType RealPartDType(DType dtype);
/// The complex dtype with parts of a floating dtype (float64 -> complex128;
/// float16, bfloat16 and float32 -> complex64).
DType ComplexOfDType(DType dtype);
/// The type both operands of an arithmetic op are computed in, as MindSpore
/// and NumPy promote: bool < integers < floats < complex, the higher kind
/// wins; among integers the narrowest type holding both ranges (uint8 with
/// int8 -> int16, uint64 with a signed integer -> float64); a float with a
/// complex gives the complex type wide enough for both (float64 with
/// complex64 -> complex128).
DType PromoteTypes(DType a, DType b);

/// IEEE half and bfloat16, stored as raw bits.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

float HalfToFloat(Half h);
Half FloatToHalf(float f);
inline float BFloat16ToFloat(BFloat16 b) {
  uint32_t bits = static_cast<uint32_t>(b.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
inline BFloat16 FloatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((bits >> 16) | 0x40)};  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return BFloat16{static_cast<uint16_t>(bits >> 16)};
}

}  // namespace msrt
