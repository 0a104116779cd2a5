// The Python forms of ops (ApiForm in op_def.h): their signatures, written
// in Python syntax in each op's declaration, parsed here once per op and
// checked against the op's inputs and attributes. The binding turns them
// into ms.ops functions, Tensor methods and Primitive classes.
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "core/strings.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

class SignatureParser {
 public:
  SignatureParser(const OpDef& op, std::string_view text) : op_(op), text_(text) {}

  ParsedForm Parse(ApiKind kind) {
    ParsedForm form;
    form.kind = kind;
    form.names.push_back(Name());
    if (kind == ApiKind::kPrimitive && Peek('.')) {  // "nn_ops.ReLU..."
      form.module = std::move(form.names.back());
      if (std::find(std::begin(kPrimitiveModules), std::end(kPrimitiveModules), form.module) ==
          std::end(kPrimitiveModules)) {
        Fail(StrCat("unknown module '", form.module, "' of ops.operations"));
      }
      ++pos_;
      form.names.back() = Name();
    }
    while (Peek('|')) {
      ++pos_;
      form.names.push_back(Name());
    }
    std::vector<ApiParam> first = Params();
    if (kind == ApiKind::kPrimitive) {
      form.init = std::move(first);
      for (ApiParam& p : form.init) {
        if (p.binds == ApiParam::Binds::kInput || p.binds == ApiParam::Binds::kInputs) {
          Fail(StrCat("constructor parameter '", p.name, "' must bind an attribute"));
        }
      }
      form.params = Params();
    } else {
      form.params = std::move(first);
    }
    Space();
    if (text_.substr(pos_, 2) == "->") {
      pos_ += 2;
      form.returns = Returns(form.params);
      Space();
    }
    if (pos_ != text_.size()) Fail("unexpected text after the parameters");
    CheckTargets(form);
    if (kind == ApiKind::kMethod && (form.params.empty() || form.params[0].binds != ApiParam::Binds::kInput)) {
      Fail("a method's first parameter must be the Tensor (an input)");
    }
    return form;
  }

 private:
  [[noreturn]] void Fail(std::string_view what) const {
    throw ValueError(StrCat("op '", op_.name, "': malformed Python form \"", text_, "\" at ", pos_, ": ", what));
  }
  void Space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool Peek(char c) {
    Space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void Expect(char c) {
    if (!Peek(c)) Fail(StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
  }
  std::string Name() {
    Space();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) Fail("expected a name");
    return std::string(text_.substr(start, pos_ - start));
  }

  std::vector<ApiParam> Params() {
    Expect('(');
    std::vector<ApiParam> params;
    bool keyword_only = false;
    bool seen_default = false;
    while (!Peek(')')) {
      if (!params.empty() || keyword_only) Expect(',');
      bool varargs = false;
      if (Peek('*')) {
        ++pos_;
        if (keyword_only) Fail("'*' appears twice");
        keyword_only = true;
        Space();
        if (pos_ >= text_.size() || !(std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
          continue;  // a bare '*': keyword-only parameters follow
        }
        varargs = true;
      }
      ApiParam p;
      p.name = Name();
      p.varargs = varargs;
      p.target = p.name;
      p.keyword_only = keyword_only && !varargs;
      Space();
      if (text_.substr(pos_, 2) == "->") {
        pos_ += 2;
        Space();
        if (Peek('!') || Peek('~')) {
          p.target = std::string(1, text_[pos_++]);
        } else {
          p.target = Name();
          if (text_.substr(pos_, 3) == "...") {
            pos_ += 3;
            p.target += "...";
          }
        }
      }
      p.binds = Bind(p);
      if (p.varargs && p.binds != ApiParam::Binds::kAttr && p.binds != ApiParam::Binds::kInputs) {
        Fail(StrCat("'*", p.name, "' must bind an attribute or a variadic input"));
      }
      if (p.varargs && Peek('=')) Fail(StrCat("'*", p.name, "' cannot have a default"));
      if (Peek('=')) {
        ++pos_;
        p.default_value = Literal();
        seen_default = true;
        if (p.binds == ApiParam::Binds::kOptionalInput && !p.default_value->is_none()) {
          Fail(StrCat("optional input parameter '", p.name, "' may only default to None"));
        }
      } else if (p.binds == ApiParam::Binds::kUnsupported) {
        Fail(StrCat("unsupported parameter '", p.name, "' needs a default"));
      } else if (seen_default && !keyword_only) {
        Fail(StrCat("parameter '", p.name, "' without a default follows one with a default"));
      }
      for (const ApiParam& other : params) {
        if (other.name == p.name) Fail(StrCat("parameter '", p.name, "' appears twice"));
      }
      params.push_back(std::move(p));
    }
    ++pos_;
    return params;
  }

  // Every input the op requires is given by the call, and nothing is given
  // twice (the binding passes inputs in the op's order, whatever the form's).
  void CheckTargets(const ParsedForm& form) {
    std::vector<std::string_view> seen;
    for (const std::vector<ApiParam>* list : {&form.init, &form.params}) {
      for (const ApiParam& p : *list) {
        if (p.binds == ApiParam::Binds::kUnsupported || p.binds == ApiParam::Binds::kRecorded) continue;
        if (std::find(seen.begin(), seen.end(), p.target) != seen.end()) {
          Fail(StrCat("'", p.target, "' is given by two parameters"));
        }
        seen.push_back(p.target);
      }
    }
    for (std::string_view input : op_.inputs) {
      if (input.ends_with("?")) continue;
      if (std::find(seen.begin(), seen.end(), input) == seen.end()) {
        Fail(StrCat("the op's input '", input, "' is not given by any parameter"));
      }
    }
  }

  // `-> p` or `-> (p, q)`: the form returns the objects it was given for
  // these tensor parameters (the inputs an in-place op updates).
  std::vector<std::string> Returns(const std::vector<ApiParam>& params) {
    bool several = Peek('(');
    if (several) ++pos_;
    std::vector<std::string> names;
    do {
      if (!names.empty()) Expect(',');
      std::string name = Name();
      auto it = std::find_if(params.begin(), params.end(), [&](const ApiParam& p) { return p.name == name; });
      if (it == params.end() || it->binds != ApiParam::Binds::kInput) {
        Fail(StrCat("returned '", name, "' must be a tensor parameter of the call"));
      }
      names.push_back(std::move(name));
    } while (several && !Peek(')'));
    if (several) Expect(')');
    return names;
  }

  ApiParam::Binds Bind(const ApiParam& p) {
    if (p.target == "!") return ApiParam::Binds::kUnsupported;
    if (p.target == "~") return ApiParam::Binds::kRecorded;
    for (std::string_view input : op_.inputs) {
      if (input == p.target) return input.ends_with("...") ? ApiParam::Binds::kInputs : ApiParam::Binds::kInput;
      if (input.ends_with("?") && input.substr(0, input.size() - 1) == p.target) {
        return ApiParam::Binds::kOptionalInput;  // Note [Optional inputs]
      }
    }
    for (const AttrSpec& a : op_.attrs) {
      if (a.name == p.target) return ApiParam::Binds::kAttr;
    }
    Fail(StrCat("'", p.target, "' is neither an input nor an attribute of the op"));
  }

  Value Literal() {
    Space();
    if (Peek('(') || Peek('[')) {
      char close = text_[pos_] == '(' ? ')' : ']';
      bool tuple = close == ')';
      ++pos_;
      List items;
      while (!Peek(close)) {
        if (!items.empty()) {
          Expect(',');
          if (Peek(close)) break;  // (1,)
        }
        items.push_back(Literal());
      }
      ++pos_;
      return tuple ? Value::Tuple(std::move(items)) : Value(std::move(items));
    }
    if (Peek('\'') || Peek('"')) {
      char quote = text_[pos_++];
      size_t end = text_.find(quote, pos_);
      if (end == std::string_view::npos) Fail("unterminated string");
      std::string s(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return Value(std::move(s));
    }
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ')' && text_[pos_] != ']' &&
           text_[pos_] != ' ') {
      ++pos_;
    }
    std::string word(text_.substr(start, pos_ - start));
    if (word == "None") return Value();
    if (word == "True") return Value(true);
    if (word == "False") return Value(false);
    try {
      size_t used = 0;
      if (word.find_first_of(".eE") == std::string::npos) {
        int64_t v = std::stoll(word, &used);
        if (used == word.size()) return Value(v);
      } else {
        double v = std::stod(word, &used);
        if (used == word.size()) return Value(v);
      }
    } catch (const std::exception&) {
    }
    Fail(StrCat("expected a literal (None, True, False, a number, a string, a tuple or a list), but got '", word, "'"));
  }

  const OpDef& op_;
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

ParsedForm ParseApiForm(const OpDef& op, const ApiForm& form) {
  return SignatureParser(op, form.signature).Parse(form.kind);
}

const std::vector<ParsedForm>& ApiForms(const OpDef& op) {
  static std::mutex mutex;
  static auto* parsed = new std::map<const OpDef*, std::vector<ParsedForm>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = parsed->find(&op);
  if (it != parsed->end()) return it->second;
  std::vector<ParsedForm> forms;
  for (const ApiForm& form : op.api) forms.push_back(ParseApiForm(op, form));
  return parsed->emplace(&op, std::move(forms)).first->second;
}

std::string_view AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kAny: return "any";
    case AttrType::kBool: return "bool";
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "str";
    case AttrType::kInts: return "ints";
    case AttrType::kAxes: return "axes";
    case AttrType::kAxis: return "axis";
    case AttrType::kShape: return "shape";
    case AttrType::kDType: return "dtype";
    case AttrType::kDataFormat: return "data_format";
    case AttrType::kPadMode: return "pad_mode";
    case AttrType::kPair: return "pair";
    case AttrType::kPadding: return "padding";
    case AttrType::kTriple: return "triple";
    case AttrType::kPadding6: return "padding6";
    case AttrType::kScalar: return "scalar";
  }
  return "any";
}

std::string_view BindsName(ApiParam::Binds binds) {
  switch (binds) {
    case ApiParam::Binds::kInput: return "input";
    case ApiParam::Binds::kInputs: return "inputs";
    case ApiParam::Binds::kAttr: return "attr";
    case ApiParam::Binds::kUnsupported: return "unsupported";
    case ApiParam::Binds::kRecorded: return "recorded";
    case ApiParam::Binds::kOptionalInput: return "optional_input";
  }
  return "input";
}

std::string_view ApiKindName(ApiKind kind) {
  switch (kind) {
    case ApiKind::kFunction: return "function";
    case ApiKind::kMethod: return "method";
    case ApiKind::kPrimitive: return "primitive";
  }
  return "function";
}

}  // namespace msrt::ops
