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
};
inline constexpr int kDTypeCount = 10;

/// Bytes per element.
size_t ItemSize(DType dtype);
/// MindSpore's printed name: "Float32", "Int64", "Bool", ...
std::string_view DTypeName(DType dtype);
/// The lower-case Python attribute name: "float32", "int64", "bool_", ...
std::string_view DTypeAttrName(DType dtype);
/// Parses either form of name; nullopt when unknown.
std::optional<DType> ParseDType(std::string_view name);

bool IsFloating(DType dtype);
bool IsIntegral(DType dtype);  // ints and uint8, not bool
/// The type both operands of an arithmetic op are computed in (NumPy-like:
/// bool < integers < floats; the wider or floating one wins).
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
