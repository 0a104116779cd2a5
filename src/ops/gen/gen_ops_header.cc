// Writes msrt/ops.h, the public C++ op API: one inline function per
// registered op, named as the op, taking its inputs and then its attributes
// (typed after their AttrType; required ones first, defaulted ones after,
// with the declared defaults), and calling CallOp. Run by the build, so the
// header always matches the op declarations.
//   gen_ops_header OUTPUT
#include <cmath>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/strings.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

// C++ keywords and names an op may not take as a function or parameter name.
const std::set<std::string_view> kReserved = {"and",      "or",   "not",      "xor",      "default",
                                              "delete",   "new",  "operator", "register", "switch",
                                              "template", "this", "union",    "bool",     "int"};

std::string Identifier(std::string_view name) {
  std::string out(name);
  if (out.ends_with("...")) out.resize(out.size() - 3);
  if (out.ends_with("?")) out.pop_back();  // an optional input: the caller passes Tensor() to leave it out
  if (kReserved.contains(out)) out += "_";
  return out;
}

bool IsIntList(const Value& v) {
  if (!v.is_sequence()) return false;
  for (const Value& item : v.as_list()) {
    if (!item.is_int() || item.is_bool()) return false;
  }
  return true;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The parameter type of an attribute, and whether its default can be written
// as a literal of that type.
struct AttrParam {
  std::string type;
  std::string default_text;  // empty: required
};

AttrParam ForAttr(const AttrSpec& spec) {
  const Value& d = spec.default_value;
  bool required = d.is_none() && !spec.optional;
  auto value_param = [&] { return AttrParam{"const Value&", required ? "" : (d.is_none() ? "Value()" : "")}; };
  switch (spec.type) {
    case AttrType::kBool:
      if (required || d.is_bool()) return {"bool", required ? "" : (d.as_bool() ? "true" : "false")};
      break;
    case AttrType::kInt:
    case AttrType::kAxis:
      if (required || d.is_int()) return {"int64_t", required ? "" : std::to_string(d.as_int())};
      break;
    case AttrType::kFloat:
      if (required || d.is_float() || d.is_int()) {
        std::ostringstream text;
        text.precision(17);
        if (!required) text << d.as_float();
        std::string s = text.str();
        if (!required && s.find_first_of(".en") == std::string::npos) s += ".0";
        return {"double", s};
      }
      break;
    case AttrType::kString:
    case AttrType::kDType:
    case AttrType::kDataFormat:
    case AttrType::kPadMode:
      if (required || d.is_string()) return {"const std::string&", required ? "" : Quote(d.as_string())};
      break;
    case AttrType::kInts:
    case AttrType::kAxes:
    case AttrType::kShape:
    case AttrType::kPair:
    case AttrType::kPadding:
    case AttrType::kTriple:
    case AttrType::kPadding6:
      if (required || IsIntList(d)) {
        std::string text;
        if (!required) {
          text = "{";
          for (size_t i = 0; i < d.as_list().size(); ++i) text += StrCat(i ? ", " : "", d.as_list()[i].as_int());
          text += "}";
        }
        return {"const std::vector<int64_t>&", text};
      }
      break;
    case AttrType::kAny:
    case AttrType::kScalar: break;
  }
  AttrParam p = value_param();
  if (!required && p.default_text.empty()) {
    // A default only a Value can hold: the function leaves the attribute out
    // unless the caller gives one, and the op fills its own default.
    p.type = "const std::optional<Value>&";
    p.default_text = "std::nullopt";
  }
  return p;
}

std::string ValueOf(const AttrParam& p, const std::string& name) {
  if (p.type == "const std::vector<int64_t>&") return StrCat("detail::IntList(", name, ")");
  if (p.type == "const std::optional<Value>&") return StrCat("*", name);
  return StrCat("Value(", name, ")");
}

std::string Comment(std::string_view doc) {
  std::string out(doc);
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  return out;
}

void WriteOp(std::ostream& os, const OpDef& op) {
  std::vector<std::string> params;
  bool variadic = op.inputs.size() == 1 && op.inputs[0].ends_with("...");
  std::string inputs;
  if (variadic) {
    params.push_back(StrCat("const std::vector<Tensor>& ", Identifier(op.inputs[0])));
    inputs = Identifier(op.inputs[0]);
  } else {
    inputs = "{";
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      params.push_back(StrCat("const Tensor& ", Identifier(op.inputs[i])));
      inputs += StrCat(i ? ", " : "", Identifier(op.inputs[i]));
    }
    inputs += "}";
  }
  std::vector<std::pair<const AttrSpec*, AttrParam>> attrs;
  for (const AttrSpec& spec : op.attrs) attrs.emplace_back(&spec, ForAttr(spec));
  std::stable_sort(attrs.begin(), attrs.end(), [](const auto& a, const auto& b) {
    return a.second.default_text.empty() && !b.second.default_text.empty();
  });
  std::string body = "  Dict attrs;\n";
  for (const auto& [spec, p] : attrs) {
    std::string name = Identifier(spec->name);
    params.push_back(StrCat(p.type, " ", name, p.default_text.empty() ? "" : StrCat(" = ", p.default_text)));
    std::string set = StrCat("attrs.Set(", Quote(std::string(spec->name)), ", ", ValueOf(p, name), ");");
    if (p.type == "const std::optional<Value>&") {
      body += StrCat("  if (", name, ") ", set, "\n");
    } else {
      body += StrCat("  ", set, "\n");
    }
  }
  os << "/// " << (op.doc.empty() ? std::string(op.name) : Comment(op.doc)) << "\n";
  os << "inline Outputs " << Identifier(op.name) << "(";
  for (size_t i = 0; i < params.size(); ++i) os << (i ? ", " : "") << params[i];
  os << ") {\n";
  if (attrs.empty()) {
    os << "  return CallOp(" << Quote(std::string(op.name)) << ", " << inputs << ");\n}\n\n";
  } else {
    os << body << "  return CallOp(" << Quote(std::string(op.name)) << ", " << inputs << ", attrs);\n}\n\n";
  }
}

}  // namespace
}  // namespace msrt::ops

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gen_ops_header OUTPUT\n";
    return 2;
  }
  std::ostringstream os;
  os << "// Generated by src/ops/gen/gen_ops_header.cc from the op declarations; do not edit.\n"
        "// One function per op: its inputs, then its attributes (required ones first).\n"
        "#pragma once\n\n"
        "#include <cstdint>\n#include <optional>\n#include <string>\n#include <vector>\n\n"
        "#include \"msrt/op_call.h\"\n\n"
        "namespace msrt::ops {\nnamespace detail {\n"
        "inline Value IntList(const std::vector<int64_t>& values) {\n"
        "  List items;\n  for (int64_t v : values) items.emplace_back(v);\n  return Value(std::move(items));\n}\n"
        "}  // namespace detail\n\n";
  for (const msrt::ops::OpDef* op : msrt::ops::AllOps()) msrt::ops::WriteOp(os, *op);
  os << "}  // namespace msrt::ops\n";
  std::string text = os.str();
  std::ofstream out(argv[1], std::ios::trunc);
  out << text;
  return out ? 0 : 1;
}
