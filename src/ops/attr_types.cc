// The attribute parsers every op shares (AttrType in op_def.h). A value is
// checked and brought to its canonical form here, once per call; errors name
// the op and the attribute and say what was expected and what was given.
#include <algorithm>
#include <cctype>

#include "core/strings.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

[[noreturn]] void Bad(ErrorKind kind, std::string_view op, const AttrSpec& spec, std::string_view expected,
                      const Value& got) {
  OpError(kind, op,
          StrCat("attribute '", spec.name, "' must be ", expected, ", but got ",
                 got.is_string() ? StrCat("str '", got.as_string(), "'") : StrCat(got.type_name(), " ", got.repr())));
}

std::string Quoted(const std::vector<std::string_view>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    out += StrCat(i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", "), "'", choices[i], "'");
  }
  return out;
}

bool IsInt(const Value& v) { return v.is_int() && !v.is_bool(); }

// An int or a sequence of ints, each at least `minimum`.
std::vector<int64_t> Ints(std::string_view op, const AttrSpec& spec, const Value& v, int64_t minimum,
                          std::string_view expected) {
  std::vector<int64_t> out;
  if (IsInt(v)) {
    out.push_back(v.as_int());
  } else if (v.is_sequence()) {
    for (const Value& item : v.as_list()) {
      if (!IsInt(item)) Bad(ErrorKind::kType, op, spec, expected, v);
      out.push_back(item.as_int());
    }
  } else {
    Bad(ErrorKind::kType, op, spec, expected, v);
  }
  for (int64_t x : out) {
    if (x < minimum) Bad(ErrorKind::kValue, op, spec, expected, v);
  }
  return out;
}

// Whether `v` is already what Ints then IntList would make of it: a list of
// ints, each at least `minimum`. Such a value is kept as it is (its payload
// is shared, not copied), which spares every call with a shape or axes
// attribute two allocations.
bool IsIntList(const Value& v, int64_t minimum) {
  if (!v.is_list()) return false;
  for (const Value& item : v.as_list()) {
    if (!IsInt(item) || item.as_int() < minimum) return false;
  }
  return true;
}

std::string String(std::string_view op, const AttrSpec& spec, const Value& v, std::string_view expected) {
  if (!v.is_string()) Bad(ErrorKind::kType, op, spec, expected, v);
  return v.as_string();
}

// A layout or padding mode outside its few spellings: "'pad_mode' must be
// one of 'same', 'valid' or 'pad'; but got 'full'" (as the NN ops always said).
[[noreturn]] void BadMode(std::string_view op, const AttrSpec& spec, std::string_view expected, const Value& got) {
  OpError(ErrorKind::kValue, op, StrCat("'", spec.name, "' must be ", expected, "; but got '", got.as_string(), "'"));
}

std::string Choice(std::string_view op, const AttrSpec& spec, const std::string& s,
                   const std::vector<std::string_view>& choices, const Value& given) {
  if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
    Bad(ErrorKind::kValue, op, spec, StrCat("one of ", Quoted(choices)), given);
  }
  return s;
}

}  // namespace

Value ParseAttr(std::string_view op, const AttrSpec& spec, const Value& v) {
  if (spec.optional && v.is_none()) return v;
  Value out;
  switch (spec.type) {
    case AttrType::kAny: out = v; break;
    case AttrType::kBool:
      if (!v.is_bool()) Bad(ErrorKind::kType, op, spec, "a bool", v);
      out = v;
      break;
    case AttrType::kInt:
      if (!IsInt(v)) Bad(ErrorKind::kType, op, spec, "an int", v);
      out = v;
      break;
    case AttrType::kFloat:
      if (!v.is_float() && !IsInt(v)) Bad(ErrorKind::kType, op, spec, "a float", v);
      out = Value(v.as_float());
      break;
    case AttrType::kString: {
      std::string s = String(op, spec, v, spec.choices.empty() ? "a str" : StrCat("one of ", Quoted(spec.choices)));
      out = Value(spec.choices.empty() ? s : Choice(op, spec, s, spec.choices, v));
      break;
    }
    case AttrType::kInts:
      out = IsIntList(v, INT64_MIN) ? v : IntList(Ints(op, spec, v, INT64_MIN, "an int or a sequence of ints"));
      break;
    case AttrType::kAxes:
      if (v.is_none()) {
        out = Value(List{});
      } else {
        out = IsIntList(v, INT64_MIN) ? v : IntList(Ints(op, spec, v, INT64_MIN, "None, an int or a sequence of ints"));
      }
      break;
    case AttrType::kAxis: {
      std::vector<int64_t> axes = Ints(op, spec, v, INT64_MIN, "an int (or a sequence of one int)");
      if (axes.size() != 1) Bad(ErrorKind::kValue, op, spec, "a single axis", v);
      out = Value(axes[0]);
      break;
    }
    case AttrType::kShape: {
      constexpr std::string_view kExpected = "a list or tuple of ints >= -1";
      if (!v.is_sequence()) Bad(ErrorKind::kType, op, spec, kExpected, v);
      out = IsIntList(v, -1) ? v : IntList(Ints(op, spec, v, -1, kExpected));
      break;
    }
    case AttrType::kDType: {
      std::string s = String(op, spec, v, "a dtype such as 'float32'");
      auto dtype = ParseDType(s);
      if (!dtype) {
        OpError(ErrorKind::kType, op,
                StrCat("attribute '", spec.name,
                       "' names an unknown dtype; expected one of bool, uint8, int8, int16, "
                       "int32, int64, float16, bfloat16, float32, float64, but got '",
                       s, "'"));
      }
      out = Value(std::string(DTypeAttrName(*dtype)));
      break;
    }
    case AttrType::kDataFormat: {
      std::string s = String(op, spec, v, "'NCHW' or 'NHWC'");
      if (s != kChannelsFirst && s != kChannelsLast) BadMode(op, spec, "'NCHW' or 'NHWC'", v);
      out = Value(std::move(s));
      break;
    }
    case AttrType::kPadMode: {
      constexpr std::string_view kExpected = "one of 'same', 'valid' or 'pad'";
      std::string s = String(op, spec, v, kExpected);
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
      if (s != "valid" && s != "same" && s != "pad") BadMode(op, spec, kExpected, v);
      out = Value(std::move(s));
      break;
    }
    case AttrType::kPair:
    case AttrType::kTriple: {
      // n positive ints, from one int, n ints, or n + 2 beginning with 1, 1 (NCHW / NCDHW strides).
      size_t n = spec.type == AttrType::kPair ? 2 : 3;
      std::string_view expected = n == 2 ? "a positive int or 2 of them (or 4 beginning with 1, 1)"
                                         : "a positive int or 3 of them (or 5 beginning with 1, 1)";
      std::vector<int64_t> p = Ints(op, spec, v, 1, expected);
      if (p.size() == 1) p.assign(n, p[0]);
      if (p.size() == n + 2) {
        if (p[0] != 1 || p[1] != 1) Bad(ErrorKind::kValue, op, spec, expected, v);
        p.erase(p.begin(), p.begin() + 2);
      }
      if (p.size() != n) Bad(ErrorKind::kValue, op, spec, expected, v);
      out = IntList(p);
      break;
    }
    case AttrType::kPadding:
    case AttrType::kPadding6: {
      size_t n = spec.type == AttrType::kPadding ? 4 : 6;
      std::string_view expected = n == 4 ? "a non-negative int or a list of 4 (top, bottom, left, right)"
                                         : "a non-negative int or a list of 6 (front, back, top, bottom, left, right)";
      std::vector<int64_t> p = Ints(op, spec, v, 0, expected);
      if (p.size() == 1) p.assign(n, p[0]);
      if (p.size() != n) Bad(ErrorKind::kValue, op, spec, expected, v);
      out = IntList(p);
      break;
    }
    case AttrType::kScalar:
      if (!v.is_bool() && !v.is_int() && !v.is_float()) Bad(ErrorKind::kType, op, spec, "a bool, an int or a float", v);
      out = v;
      break;
  }
  if (spec.check) spec.check(op, out);
  return out;
}

}  // namespace msrt::ops
