// Checks shared by the inference functions of the elementwise, reduction,
// shape, loss, random and optimizer op families.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ops/op_def.h"

namespace msrt::ops {

/// Classes of dtypes an input may have.
enum class DTypeClass {
  kFloat,            // float16, bfloat16, float32, float64
  kNumber,           // integers and floats, not bool or complex
  kNumberOrComplex,  // integers, floats and complex
  kFloatOrComplex,   // floats and complex
  kBool,
  kIndex,  // int32, int64
  kAny,
};

/// "Float16, BFloat16, Float32 or Float64" — for messages.
std::string DescribeDTypeClass(DTypeClass cls);
bool InDTypeClass(DType dtype, DTypeClass cls);

/// TypeError "[op] input 'name' has an unsupported dtype; expected ..., but got ..."
void CheckDType(std::string_view op, std::string_view input, const TensorMeta& meta, DTypeClass cls);
/// TypeError unless both have the same dtype.
void CheckSameDType(std::string_view op, std::string_view a_name, const TensorMeta& a, std::string_view b_name,
                    const TensorMeta& b);
/// ValueError unless `meta` has rank `rank`.
void CheckRank(std::string_view op, std::string_view input, const TensorMeta& meta, int64_t rank);
/// ValueError unless `meta` holds exactly one element (0-d or shape (1,)).
void CheckScalarLike(std::string_view op, std::string_view input, const TensorMeta& meta);

/// A dtype attribute ("float32", "Float32", "bool_"...); TypeError when unknown.
DType DTypeAttr(std::string_view op, const Dict& attrs, std::string_view name);
/// A string attribute that must be one of `choices`; ValueError otherwise.
std::string ChoiceAttr(std::string_view op, const Dict& attrs, std::string_view name,
                       const std::vector<std::string_view>& choices);
/// A list-of-ints attribute whose entries are all >= `minimum`.
std::vector<int64_t> ShapeAttr(std::string_view op, const Dict& attrs, std::string_view name, int64_t minimum);

/// Attribute accessors whose errors name the op.
int64_t IntAttr(std::string_view op, const Dict& attrs, std::string_view name);
double FloatAttr(std::string_view op, const Dict& attrs, std::string_view name);
bool BoolAttr(std::string_view op, const Dict& attrs, std::string_view name);
/// An int or a list of ints.
std::vector<int64_t> IntsAttr(std::string_view op, const Dict& attrs, std::string_view name);

/// "[2, 3]" — for messages.
std::string IntsRepr(const std::vector<int64_t>& values);

}  // namespace msrt::ops
