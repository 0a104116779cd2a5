// The parser library tables build their records from.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "context/option_spec.h"
#include "core/file_io.h"

namespace msrt::context {

DeviceTarget View::device() const {
  Value v = Get(Family::kRuntime, "device_target");
  auto target = v.is_string() ? ParseDeviceTarget(v.as_string()) : std::nullopt;
  return target.value_or(DeviceTarget::kCPU);
}

void KeyEnv::Warn(WarningKind kind, std::string message) const {
  if (warnings_ != nullptr) {
    warnings_->emplace_back(kind, std::move(message));
  } else {
    ::msrt::Warn(kind, message);
  }
}

void KeyEnv::FailType(std::string_view expected, const Value& got) const {
  // Python ints beyond 64 bits arrive as objects of type int: a bad value.
  if (got.kind() == ValueKind::kObject && got.type_name() == "int" && expected.find("int") != std::string_view::npos) {
    FailValue("is out of the range of a 64-bit integer", got);
  }
  throw TypeError(StrCat("For '", function, "', the parameter '", key, "' must be ", expected, ", but got ",
                         got.type_name(), " (", got.repr(), ")."));
}

void KeyEnv::FailValue(std::string_view expectation, const Value& got) const {
  throw ValueError(
      StrCat("For '", function, "', the argument '", key, "' ", expectation, ", but got ", got.repr(), "."));
}

void KeyEnv::Fail(ErrorKind kind, std::string_view message) const {
  ThrowError(kind, StrCat("For '", function, "', ", message));
}

namespace {

std::string JoinQuoted(const std::vector<std::string_view>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i ? ", '" : "'");
    out += names[i];
    out += "'";
  }
  return out + "]";
}

}  // namespace

Parser ParseBool() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_bool()) env.FailType("bool", in);
    return in;
  };
}

Parser ParseInt() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_int_like()) env.FailType("int", in);
    return Value(in.as_int());
  };
}

Parser ParseStrictInt() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_int()) env.FailType("int", in);
    return in;
  };
}

Parser ParseString() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", in);
    return in;
  };
}

Parser ParseOptionalString() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (in.is_none()) return Value("");
    if (!in.is_string()) env.FailType("str or None", in);
    return in;
  };
}

Parser ParseStringChoice(std::vector<std::string_view> choices) {
  return [choices = std::move(choices)](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", in);
    if (std::find(choices.begin(), choices.end(), in.as_string()) == choices.end()) {
      env.FailValue(StrCat("must be one of ", JoinQuoted(choices)), in);
    }
    return in;
  };
}

Parser ParseStringMap(std::vector<std::pair<std::string_view, Value>> mapping) {
  return [mapping = std::move(mapping)](const Value& in, const KeyEnv& env) -> Value {
    std::vector<std::string_view> names;
    for (const auto& [name, stored] : mapping) {
      if (env.loading ? in == stored : (in.is_string() && in.as_string() == name)) return stored;
      names.push_back(name);
    }
    if (!env.loading && !in.is_string()) env.FailType("str", in);
    env.FailValue(StrCat("must be one of ", JoinQuoted(names)), in);
  };
}

Parser ParseIntChoice(std::vector<int64_t> choices, std::string expectation) {
  return [choices = std::move(choices), expectation = std::move(expectation)](const Value& in,
                                                                              const KeyEnv& env) -> Value {
    if (!in.is_int_like()) env.FailType("int", in);
    if (std::find(choices.begin(), choices.end(), in.as_int()) == choices.end()) {
      env.FailValue(expectation, in);
    }
    return Value(in.as_int());
  };
}

Parser ParseIntRange(int64_t lo, int64_t hi, bool allow_bool) {
  return [=](const Value& in, const KeyEnv& env) -> Value {
    if (!(allow_bool ? in.is_int_like() : in.is_int())) env.FailType("int", in);
    int64_t v = in.as_int();
    if (v < lo || v > hi) {
      if (hi == INT64_MAX) {
        env.FailValue(StrCat("must be greater than or equal to ", lo), in);
      }
      env.FailValue(StrCat("must be in [", lo, ", ", hi, "]"), in);
    }
    return Value(v);
  };
}

// Note [GB strings]
// MindSpore checks size strings with re.match (anchored at the start only)
// against [1-9][0-9]*(\.)?[0-9]*GB|0\.[0-9]*GB, then converts value[:-2]
// with float() (or int()). Because only the last two characters are cut,
// trailing text after a matching prefix makes the conversion fail, so the
// accepted set is exactly: the whole string matches the pattern, and for
// int() the number has no '.'. We match that directly rather than with a
// regex engine, which keeps the parser linear on hostile input.
double ParseGbText(std::string_view text, bool integer, const KeyEnv& env) {
  static constexpr std::string_view kPattern = R"([1-9][0-9]*(\.)?[0-9]*GB|0\.[0-9]*GB)";
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  bool ok = false;
  if (!text.empty() && text[0] >= '1' && text[0] <= '9') {
    i = 1;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i < text.size() && text[i] == '.') ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    ok = text.substr(i) == "GB";
  } else if (text.size() >= 2 && text[0] == '0' && text[1] == '.') {
    i = 2;
    while (i < text.size() && is_digit(text[i])) ++i;
    ok = text.substr(i) == "GB";
  }
  Value given{std::string(text)};
  if (!ok) {
    env.FailValue(StrCat("should be a size in GB like \"3.5GB\" (matching the regular expression '", kPattern, "')"),
                  given);
  }
  std::string number(text.substr(0, text.size() - 2));
  if (integer && number.find('.') != std::string::npos) {
    env.FailValue("should be a whole number of GB like \"6GB\"", given);
  }
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (errno == ERANGE || end != number.c_str() + number.size()) {
    env.FailValue("should be a finite size in GB", given);
  }
  return value;
}

Parser ParseGb(GbRule rule) {
  return [rule](const Value& in, const KeyEnv& env) -> Value {
    double gb = 0;
    if (env.loading && (in.is_float() || in.is_int())) {
      gb = in.as_float();
    } else {
      if (!in.is_string()) env.FailType("str", in);
      gb = ParseGbText(in.as_string(), rule.integer, env);
    }
    bool too_small = rule.min_exclusive ? !(gb > rule.min) : !(gb >= rule.min);
    if (too_small) env.FailValue(rule.min_message, in);
    if (rule.max >= 0 && gb > rule.max) env.FailValue(rule.max_message, in);
    return Value(gb);
  };
}

Value SubDictDefault(const std::vector<SubKey>& sub_keys) {
  Dict out;
  for (const SubKey& sub : sub_keys) out.Set(std::string(sub.name), sub.default_value);
  return Value(std::move(out));
}

Parser ParseSubDict(std::vector<SubKey> sub_keys) {
  return [sub_keys = std::move(sub_keys)](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_dict()) env.FailType("dict", in);
    std::vector<std::string_view> names;
    for (const SubKey& sub : sub_keys) names.push_back(sub.name);
    // Start from the current value (or the defaults when loading a snapshot).
    Value base = env.loading ? SubDictDefault(sub_keys) : env.view.Get(env.family, env.key);
    Dict merged = base.is_dict() ? base.as_dict() : SubDictDefault(sub_keys).as_dict();
    for (const auto& [name, value] : in.as_dict()) {
      auto it = std::find_if(sub_keys.begin(), sub_keys.end(),
                             [&name = name](const SubKey& s) { return s.name == name; });
      if (it == sub_keys.end()) {
        env.Fail(ErrorKind::kValue, StrCat("the key '", name, "' of the argument '", env.key,
                                           "' is not recognized; the keys it takes are ", JoinQuoted(names), "."));
      }
      std::string sub_name = StrCat(env.key, "['", name, "']");
      KeyEnv sub_env = env;
      sub_env.key = sub_name;
      merged.Set(name, it->parse(value, sub_env));
    }
    return Value(std::move(merged));
  };
}

std::string RealPath(std::string_view path) {
  if (path.empty()) return "";
  // Error-code overloads only: a filesystem error must not escape as an
  // unrelated exception type (a path that can not be resolved stays as given).
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(std::string(path), ec);
  if (ec) return std::filesystem::path(std::string(path)).lexically_normal().string();
  auto canonical = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) return absolute.lexically_normal().string();
  return canonical.string();
}

// Text quoted in a message: bytes outside printable ASCII are escaped so the
// message stays valid UTF-8 for Python.
std::string Printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

/// A str argument naming a path; a NUL byte is refused (as Python's os.path
/// functions do) because the file system would silently cut the name there.
const std::string& PathText(const Value& in, const KeyEnv& env) {
  if (!in.is_string()) env.FailType("str", in);
  if (in.as_string().find('\0') != std::string::npos) {
    env.FailValue("should be a path without NUL bytes", in);
  }
  return in.as_string();
}

std::function<void()> PrepareDirectory(const std::string& dir, const KeyEnv& env) {
  if (dir.empty()) return nullptr;
  auto created = std::make_shared<std::vector<std::string>>();
  try {
    CreateDirectories(dir, created.get());
  } catch (const OSError& e) {
    RemoveCreatedDirectories(*created);
    env.Fail(ErrorKind::kOS, StrCat("the argument '", env.key, "': ", e.message()));
  }
  return [created] { RemoveCreatedDirectories(*created); };
}

Parser ParsePath() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (env.loading) return ParseString()(in, env);  // a snapshot holds what was accepted
    return Value(PathText(in, env));
  };
}

Parser ParseUnitInterval() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (in.is_bool() || !(in.is_float() || in.is_int())) env.FailType("float or int", in);
    double value = in.as_float();
    if (!(value > 0.0 && value <= 1.0)) env.FailValue("should be in range (0, 1]", in);
    return Value(value);
  };
}

Parser StoredWithoutEffect(Parser parse, std::string_view missing) {
  return [parse = std::move(parse), missing](const Value& in, const KeyEnv& env) -> Value {
    Value out = parse(in, env);
    if (!env.loading) {
      env.Warn(WarningKind::kGeneral, StrCat("For '", env.function, "', '", env.key,
                                             "' is stored but has no effect: msrt does not ", missing, " yet."));
    }
    return out;
  };
}

/// Accepts the "unset" stored form ("") when loading a snapshot, for keys
/// whose default is unset but which users may only set to listed values.
Parser OrUnsetWhenLoading(Parser parse) {
  return [parse = std::move(parse)](const Value& in, const KeyEnv& env) -> Value {
    if (env.loading && in.is_string() && in.as_string().empty()) return in;
    return parse(in, env);
  };
}

}  // namespace msrt::context
