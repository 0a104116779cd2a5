// The dtype table and type promotion (msrt/core/dtype.h).
#include "msrt/core/dtype.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/float_to_int.h"

namespace msrt {
namespace {

TEST(DType, TableHoldsEveryDTypeOnceWithItsSizeAndNames) {
  struct Row {
    DType dtype;
    size_t size;
    const char* name;
    const char* attr;
  };
  const Row rows[] = {
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
  ASSERT_EQ(std::size(rows), static_cast<size_t>(kDTypeCount));
  std::set<std::string_view> names;
  for (int code = 0; code < kDTypeCount; ++code) {
    const Row& row = rows[code];
    // Codes are stored in checkpoints: the first ten keep their numbers.
    EXPECT_EQ(static_cast<int>(row.dtype), code);
    EXPECT_EQ(ItemSize(row.dtype), row.size) << row.name;
    EXPECT_EQ(DTypeName(row.dtype), row.name);
    EXPECT_EQ(DTypeAttrName(row.dtype), row.attr);
    EXPECT_EQ(ParseDType(row.name), row.dtype);
    EXPECT_EQ(ParseDType(row.attr), row.dtype);
    EXPECT_TRUE(names.insert(row.name).second);
  }
  EXPECT_EQ(ParseDType("bool"), DType::kBool);
  EXPECT_EQ(ParseDType("complex32"), std::nullopt);
  EXPECT_EQ(ParseDType("uint128"), std::nullopt);
}

TEST(DType, KindsAreDisjoint) {
  for (int code = 0; code < kDTypeCount; ++code) {
    auto d = static_cast<DType>(code);
    int kinds = (d == DType::kBool) + IsIntegral(d) + IsFloating(d) + IsComplex(d);
    EXPECT_EQ(kinds, 1) << DTypeName(d);
    if (IsUnsigned(d)) {
      EXPECT_TRUE(IsIntegral(d)) << DTypeName(d);
    }
  }
  EXPECT_TRUE(IsUnsigned(DType::kUInt64));
  EXPECT_FALSE(IsUnsigned(DType::kInt64));
  EXPECT_EQ(RealPartDType(DType::kComplex64), DType::kFloat32);
  EXPECT_EQ(RealPartDType(DType::kComplex128), DType::kFloat64);
  EXPECT_EQ(RealPartDType(DType::kInt16), DType::kInt16);
  EXPECT_EQ(ComplexOfDType(DType::kFloat64), DType::kComplex128);
  EXPECT_EQ(ComplexOfDType(DType::kFloat32), DType::kComplex64);
}

// NumPy's result_type for the integer and float pairs (float16 with int64 is
// MindSpore's float16), MindSpore's for complex with int.
TEST(DType, PromotionFollowsNumPyAndMindSpore) {
  struct Case {
    DType a, b, want;
  };
  const Case cases[] = {
      {DType::kUInt8, DType::kInt8, DType::kInt16},
      {DType::kUInt16, DType::kInt8, DType::kInt32},
      {DType::kUInt16, DType::kInt16, DType::kInt32},
      {DType::kUInt16, DType::kInt32, DType::kInt32},
      {DType::kUInt32, DType::kInt32, DType::kInt64},
      {DType::kUInt32, DType::kInt8, DType::kInt64},
      {DType::kUInt32, DType::kInt64, DType::kInt64},
      {DType::kUInt64, DType::kInt8, DType::kFloat64},
      {DType::kUInt64, DType::kInt64, DType::kFloat64},
      {DType::kUInt8, DType::kUInt64, DType::kUInt64},
      {DType::kUInt16, DType::kUInt32, DType::kUInt32},
      {DType::kUInt8, DType::kInt16, DType::kInt16},
      {DType::kBool, DType::kUInt16, DType::kUInt16},
      {DType::kUInt64, DType::kFloat16, DType::kFloat16},
      {DType::kUInt32, DType::kFloat32, DType::kFloat32},
      {DType::kInt64, DType::kFloat32, DType::kFloat32},
      {DType::kFloat16, DType::kBFloat16, DType::kFloat32},
      {DType::kFloat32, DType::kFloat64, DType::kFloat64},
      {DType::kFloat32, DType::kComplex64, DType::kComplex64},
      {DType::kFloat16, DType::kComplex64, DType::kComplex64},
      {DType::kBFloat16, DType::kComplex64, DType::kComplex64},
      {DType::kFloat64, DType::kComplex64, DType::kComplex128},
      {DType::kFloat32, DType::kComplex128, DType::kComplex128},
      {DType::kComplex64, DType::kComplex128, DType::kComplex128},
      {DType::kInt64, DType::kComplex64, DType::kComplex64},
      {DType::kUInt64, DType::kComplex64, DType::kComplex64},
      {DType::kBool, DType::kComplex64, DType::kComplex64},
      {DType::kInt8, DType::kComplex128, DType::kComplex128},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PromoteTypes(c.a, c.b), c.want) << DTypeName(c.a) << " with " << DTypeName(c.b);
    EXPECT_EQ(PromoteTypes(c.b, c.a), c.want) << DTypeName(c.b) << " with " << DTypeName(c.a);
  }
  for (int code = 0; code < kDTypeCount; ++code) {
    auto d = static_cast<DType>(code);
    EXPECT_EQ(PromoteTypes(d, d), d);
    EXPECT_EQ(PromoteTypes(d, DType::kBool), d);
  }
}

TEST(DType, FloatToUnsignedAsNumPy) {
  EXPECT_EQ(FloatToInt<uint32_t>(3e9), 3000000000u);
  EXPECT_EQ(FloatToInt<uint32_t>(-1.0), 4294967295u);  // through int64: wraps
  EXPECT_EQ(FloatToInt<uint64_t>(1.5e19), uint64_t{15000000000000000000u});
  EXPECT_EQ(FloatToInt<uint64_t>(-1.0), UINT64_MAX);
  EXPECT_EQ(FloatToInt<uint64_t>(2e19), 0u);  // out of range, as NumPy gives
  EXPECT_EQ(FloatToInt<uint64_t>(-1e19), uint64_t{1} << 63);
  EXPECT_EQ(FloatToInt<uint16_t>(65535.0), 65535u);
  EXPECT_EQ(FloatToInt<uint64_t>(9223372036854775808.0f), uint64_t{1} << 63);
}

}  // namespace
}  // namespace msrt
