#include "ops/op_checks.h"

namespace msrt::ops {

std::string DescribeDTypeClass(DTypeClass cls) {
  switch (cls) {
    case DTypeClass::kFloat: return "Float16, BFloat16, Float32 or Float64";
    case DTypeClass::kNumber: return "an integer or floating-point dtype";
    case DTypeClass::kNumberOrComplex: return "an integer, floating-point or complex dtype";
    case DTypeClass::kFloatOrComplex: return "Float16, BFloat16, Float32, Float64, Complex64 or Complex128";
    case DTypeClass::kBool: return "Bool";
    case DTypeClass::kIndex: return "Int32 or Int64";
    case DTypeClass::kAny: return "any dtype";
  }
  return "";
}

bool InDTypeClass(DType dtype, DTypeClass cls) {
  switch (cls) {
    case DTypeClass::kFloat: return IsFloating(dtype);
    case DTypeClass::kNumber: return dtype != DType::kBool && !IsComplex(dtype);
    case DTypeClass::kNumberOrComplex: return dtype != DType::kBool;
    case DTypeClass::kFloatOrComplex: return IsFloating(dtype) || IsComplex(dtype);
    case DTypeClass::kBool: return dtype == DType::kBool;
    case DTypeClass::kIndex: return dtype == DType::kInt32 || dtype == DType::kInt64;
    case DTypeClass::kAny: return true;
  }
  return false;
}

void CheckDType(std::string_view op, std::string_view input, const TensorMeta& meta, DTypeClass cls) {
  if (!InDTypeClass(meta.dtype, cls)) {
    OpError(ErrorKind::kType, op,
            StrCat("input '", input, "' has an unsupported dtype; expected ", DescribeDTypeClass(cls), ", but got ",
                   DTypeName(meta.dtype)));
  }
}

void CheckSameDType(std::string_view op, std::string_view a_name, const TensorMeta& a, std::string_view b_name,
                    const TensorMeta& b) {
  if (a.dtype != b.dtype) {
    OpError(ErrorKind::kType, op,
            StrCat("input '", b_name, "' must have the dtype of '", a_name, "'; expected ", DTypeName(a.dtype),
                   ", but got ", DTypeName(b.dtype)));
  }
}

void CheckRank(std::string_view op, std::string_view input, const TensorMeta& meta, int64_t rank) {
  if (static_cast<int64_t>(meta.shape.size()) != rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("input '", input, "' must be ", rank, "-D; expected rank ", rank, ", but got shape ",
                   ShapeRepr(meta.shape)));
  }
}

void CheckScalarLike(std::string_view op, std::string_view input, const TensorMeta& meta) {
  if (NumElements(meta.shape) != 1 || meta.shape.size() > 1) {
    OpError(ErrorKind::kValue, op,
            StrCat("input '", input, "' must hold a single value; expected shape () or (1,), but got ",
                   ShapeRepr(meta.shape)));
  }
}

DType DTypeAttr(std::string_view op, const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  if (!v.is_string()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be a dtype name such as 'float32'; expected str, but got ",
                   v.type_name()));
  }
  auto dtype = ParseDType(v.as_string());
  if (!dtype) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name,
                   "' names an unknown dtype; expected one of bool, uint8, uint16, uint32, uint64, int8, "
                   "int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128, but got '",
                   v.as_string(), "'"));
  }
  return *dtype;
}

std::string ChoiceAttr(std::string_view op, const Dict& attrs, std::string_view name,
                       const std::vector<std::string_view>& choices) {
  const Value& v = Attr(attrs, name);
  std::string expected;
  for (size_t i = 0; i < choices.size(); ++i) {
    expected += StrCat(i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", "), "'", choices[i], "'");
  }
  if (!v.is_string()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be a str; expected ", expected, ", but got ", v.type_name()));
  }
  for (std::string_view c : choices) {
    if (v.as_string() == c) return v.as_string();
  }
  OpError(ErrorKind::kValue, op,
          StrCat("attribute '", name, "' has an unknown value; expected ", expected, ", but got '", v.as_string(),
                 "'"));
}

std::vector<int64_t> ShapeAttr(std::string_view op, const Dict& attrs, std::string_view name, int64_t minimum) {
  const Value& v = Attr(attrs, name);
  if (!v.is_sequence()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be a list of ints; expected list or tuple, but got ", v.type_name()));
  }
  std::vector<int64_t> out;
  for (const Value& item : v.as_list()) {
    if (!item.is_int()) {
      OpError(ErrorKind::kType, op,
              StrCat("attribute '", name, "' must hold ints; expected int, but got ", item.type_name(), " (",
                     item.repr(), ")"));
    }
    if (item.as_int() < minimum) {
      OpError(ErrorKind::kValue, op,
              StrCat("attribute '", name, "' must hold values >= ", minimum, "; expected them in range, but got ",
                     v.repr()));
    }
    out.push_back(item.as_int());
  }
  return out;
}

int64_t IntAttr(std::string_view op, const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  if (!v.is_int_like()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be an int; expected int, but got ", v.type_name()));
  }
  return v.as_int();
}

double FloatAttr(std::string_view op, const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  if (!v.is_float() && !v.is_int()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be a number; expected float, but got ", v.type_name()));
  }
  return v.as_float();
}

bool BoolAttr(std::string_view op, const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  if (!v.is_bool()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be a bool; expected bool, but got ", v.type_name()));
  }
  return v.as_bool();
}

std::vector<int64_t> IntsAttr(std::string_view op, const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  if (v.is_int_like() && !v.is_bool()) return {v.as_int()};
  if (!v.is_sequence()) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be an int or a list of ints; expected int, list or tuple, but got ",
                   v.type_name()));
  }
  std::vector<int64_t> out;
  for (const Value& item : v.as_list()) {
    if (!item.is_int()) {
      OpError(ErrorKind::kType, op,
              StrCat("attribute '", name, "' must hold ints; expected int, but got ", item.type_name(), " (",
                     item.repr(), ")"));
    }
    out.push_back(item.as_int());
  }
  return out;
}

std::string IntsRepr(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += StrCat(i ? ", " : "", values[i]);
  return out + "]";
}

}  // namespace msrt::ops
