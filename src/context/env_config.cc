// Validation of the env_config_path JSON file.
#include "context/env_config.h"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/json_depth.h"
#include "msrt/core/errors.h"

namespace msrt::context {
namespace {

using Json = nlohmann::json;

// User text quoted in an error: bytes outside printable ASCII are escaped
// (messages become Python strings, which must be valid UTF-8) and long text
// is cut.
std::string Shown(std::string_view text, size_t max_shown = 160) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t n = text.size() < max_shown ? text.size() : max_shown;
  for (size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (text.size() > max_shown) out += "...";
  return out;
}

// A JSON value for a message. Containers are named, not printed: printing
// walks them recursively, and a hostile file may nest them very deeply.
std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return value.dump();
    case Json::value_t::string: return StrCat("\"", Shown(value.get_ref<const std::string&>()), "\"");
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    default: return "an unsupported value";
  }
}

class Checker {
 public:
  explicit Checker(std::string_view file) : file_(Shown(file, 1024)) {}

  [[noreturn]] void Fail(std::string_view what) const {
    throw ValueError(StrCat("The env config file '", file_, "' (env_config_path) is invalid: ", what));
  }

  [[noreturn]] void FailKey(std::string_view key, std::string_view expected, const Json& given) const {
    Fail(StrCat("'", key, "' should be ", expected, ", but got ", Describe(given), "."));
  }

  bool Bool(std::string_view key, const Json& value) const {
    if (!value.is_boolean()) FailKey(key, "true or false", value);
    return value.get<bool>();
  }

  const Json::object_t& Object(std::string_view key, const Json& value) const {
    if (!value.is_object()) FailKey(key, "a JSON object", value);
    return value.get_ref<const Json::object_t&>();
  }

  [[noreturn]] void Unknown(std::string_view where, const std::string& key, std::string_view allowed) const {
    Fail(StrCat("unknown key '", Shown(key), "' in ", where, "; the keys it takes are ", allowed, "."));
  }

 private:
  std::string file_;
};

void ParseRdr(const Checker& check, const Json& section, EnvConfig* config) {
  for (const auto& [key, value] : check.Object("rdr", section)) {
    if (key == "enable") {
      config->rdr_enable = check.Bool("rdr.enable", value);
    } else if (key == "mode") {
      // is_number_integer() covers signed and unsigned JSON integers.
      int mode = 0;
      if (value.is_number_unsigned()) {
        uint64_t given = value.get<uint64_t>();
        if (given == 1 || given == 2) mode = static_cast<int>(given);
      } else if (value.is_number_integer()) {
        int64_t given = value.get<int64_t>();
        if (given == 1 || given == 2) mode = static_cast<int>(given);
      }
      if (mode == 0) {
        check.FailKey("rdr.mode", "1 (save on failure) or 2 (save on failure and at exit)", value);
      }
      config->rdr_mode = mode;
    } else if (key == "path") {
      if (!value.is_string()) check.FailKey("rdr.path", "a string", value);
      const auto& path = value.get_ref<const std::string&>();
      if (path.find('\0') != std::string::npos || !std::filesystem::path(path).is_absolute()) {
        check.FailKey("rdr.path", "an absolute directory path", value);
      }
      config->rdr_path = path;
    } else {
      check.Unknown("section 'rdr'", key, "'enable', 'mode' and 'path'");
    }
  }
}

void ParseSys(const Checker& check, const Json& section, EnvConfig* config) {
  for (const auto& [key, value] : check.Object("sys", section)) {
    if (key == "mem_Reuse") {
      config->mem_reuse = check.Bool("sys.mem_Reuse", value);
    } else {
      check.Unknown("section 'sys'", key, "'mem_Reuse'");
    }
  }
}

}  // namespace

EnvConfig ParseEnvConfigJson(std::string_view json_text, std::string_view file_for_messages) {
  Checker check(file_for_messages);
  if (JsonNestingDepth(json_text) > kMaxJsonDepth) {
    check.Fail(StrCat("it nests arrays or objects deeper than ", kMaxJsonDepth, " levels."));
  }
  Json doc;
  try {
    doc = Json::parse(json_text.begin(), json_text.end());  // nesting checked above
  } catch (const Json::exception& e) {
    // nlohmann quotes the bytes it last read; Shown keeps them printable.
    check.Fail(StrCat("it is not valid JSON (", Shown(e.what(), 400), ")."));
  }
  if (!doc.is_object()) {
    check.Fail(StrCat("the top level should be a JSON object, but got ", Describe(doc), "."));
  }
  EnvConfig config;
  for (const auto& [section, body] : doc.get_ref<const Json::object_t&>()) {
    if (section == "rdr") {
      ParseRdr(check, body, &config);
    } else if (section == "sys") {
      ParseSys(check, body, &config);
    } else {
      check.Fail(StrCat("unknown section '", Shown(section), "'; the sections it takes are 'rdr' and 'sys'."));
    }
  }
  return config;
}

EnvConfig LoadEnvConfigFile(const std::string& path) {
  namespace fs = std::filesystem;
  auto fail = [&](std::string_view why) {
    throw ValueError(StrCat("The env config file '", Shown(path, 1024), "' (env_config_path) ", why, "."));
  };
  if (path.empty()) fail("is an empty path");
  if (path.find('\0') != std::string::npos) fail("contains a NUL byte");
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail("does not exist");
  if (fs::is_directory(status)) fail("is a directory; a JSON file is expected");
  if (!fs::is_regular_file(status)) fail("is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot be opened for reading");
  // Bounded: a path may name a huge "regular" file such as /proc/kcore.
  constexpr size_t kMaxBytes = size_t{16} << 20;
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxBytes) fail("is larger than 16 MiB; a small JSON file is expected");
  }
  if (in.bad()) fail("cannot be read");
  return ParseEnvConfigJson(text, path);
}

}  // namespace msrt::context
