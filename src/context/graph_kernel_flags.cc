// Parsing of the `graph_kernel_flags` string.
#include "context/graph_kernel_flags.h"

#include <climits>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace msrt::context {

// Note [Graph kernel flags]
// The string is a whitespace-separated list of tokens, each `--key=value` or
// `--key` (a bool flag set to true). Problems never raise; they warn:
//  * a token that does not start with "--", has an empty key, has an '='
//    with nothing after it, or has two '=' is ignored;
//  * a key given twice keeps its first value;
//  * a key no flag reads is reported as unknown;
//  * a value that does not parse as the flag's type leaves the default.
// Bools take true/on/1 (or no value) and false/off/0. Integers must be all
// digits. Lists are comma-separated; empty items are dropped. opt_level
// defaults to 2 with enable_graph_kernel and 0 without, is clamped to 3, and
// is forced to 0 outside GRAPH_MODE; some bool defaults follow opt_level,
// so it is read first. The rules follow MindSpore's GraphKernelFlags, except
// that tabs and newlines separate tokens as spaces do.

namespace {

constexpr std::string_view kPrefix = "graph_kernel_flags: ";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// User text quoted in a warning: bytes outside printable ASCII are escaped
// (warnings become Python strings, which must be valid UTF-8) and long text
// is cut, so no input can make a warning unreadable or huge.
std::string Shown(std::string_view text) {
  constexpr size_t kMaxShown = 96;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t n = text.size() < kMaxShown ? text.size() : kMaxShown;
  out.reserve(n + 8);
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
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::vector<std::string_view> Split(std::string_view text, bool (*is_separator)(char)) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_separator(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !is_separator(text[i])) ++i;
    if (i > start) parts.push_back(text.substr(start, i - start));
  }
  return parts;
}

bool IsComma(char c) { return c == ','; }

// Whole-string non-negative decimal integer that fits an int.
bool ParseCount(std::string_view text, int* out) {
  if (text.empty()) return false;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
    if (value > INT_MAX) return false;
  }
  *out = static_cast<int>(value);
  return true;
}

// The key/value pairs of one flag string, read off flag by flag; what is
// never read is reported as unknown.
class FlagReader {
 public:
  FlagReader(std::string_view flags, std::vector<std::string>* warnings) : warnings_(warnings) {
    for (std::string_view token : Split(flags, IsSpace)) AddToken(token);
  }

  void ReadBool(std::string_view key, bool* out, bool fallback) {
    *out = fallback;
    const std::string* value = Take(key);
    if (value == nullptr) return;
    if (value->empty() || *value == "true" || *value == "on" || *value == "1") {
      *out = true;
    } else if (*value == "false" || *value == "off" || *value == "0") {
      *out = false;
    } else {
      BadValue(key, *value, "a bool (true/on/1 or false/off/0)", fallback ? "true" : "false");
    }
  }

  void ReadInt(std::string_view key, int* out, int fallback) {
    *out = fallback;
    const std::string* value = Take(key);
    if (value == nullptr) return;
    if (!ParseCount(*value, out)) {
      *out = fallback;
      BadValue(key, *value, "a non-negative integer", std::to_string(fallback));
    }
  }

  void ReadString(std::string_view key, std::string* out) {
    out->clear();
    const std::string* value = Take(key);
    if (value == nullptr) return;
    if (value->empty()) {
      BadValue(key, *value, "a non-empty string", "\"\"");
      return;
    }
    *out = *value;
  }

  void ReadList(std::string_view key, std::vector<std::string>* out) {
    out->clear();
    const std::string* value = Take(key);
    if (value == nullptr) return;
    for (std::string_view item : Split(*value, IsComma)) out->emplace_back(item);
    if (out->empty()) BadValue(key, *value, "a comma-separated list", "[]");
  }

  /// Warns about every key no Read* call asked for, in the order given.
  void WarnUnknown() {
    for (const std::string& key : order_) {
      if (!entries_.at(key).used) {
        Warn(StrCatPieces({"unknown flag '--", Shown(key), "'; it is ignored."}));
      }
    }
  }

  void Warn(const std::string& message) {
    if (warnings_ != nullptr) warnings_->push_back(std::string(kPrefix) + message);
  }

 private:
  struct Entry {
    std::string value;
    bool used = false;
  };

  static std::string StrCatPieces(std::initializer_list<std::string_view> pieces) {
    std::string out;
    for (std::string_view piece : pieces) out += piece;
    return out;
  }

  void AddToken(std::string_view token) {
    auto ignore = [&](std::string_view why) {
      Warn(StrCatPieces({"ignoring the token '", Shown(token), "': ", why, "."}));
    };
    if (token.size() < 2 || token.substr(0, 2) != "--") {
      return ignore("a flag is written --key=value or --key");
    }
    std::string_view body = token.substr(2);
    size_t eq = body.find('=');
    std::string_view key = body.substr(0, eq);
    std::string_view value;
    if (key.empty()) return ignore("the flag name is empty");
    if (eq != std::string_view::npos) {
      value = body.substr(eq + 1);
      if (value.find('=') != std::string_view::npos) return ignore("it contains more than one '='");
      if (value.empty()) return ignore("there is no value after '='");
    }
    std::string name(key);
    if (entries_.contains(name)) {
      Warn(StrCatPieces({"the flag '--", Shown(key), "' is given more than once; its first value is used."}));
      return;
    }
    entries_.emplace(name, Entry{std::string(value), false});
    order_.push_back(std::move(name));
  }

  const std::string* Take(std::string_view key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second.used = true;
    return &it->second.value;
  }

  void BadValue(std::string_view key, std::string_view value, std::string_view expected, std::string_view fallback) {
    Warn(StrCatPieces({"'--", Shown(key), "=", Shown(value), "' is not valid: the value should be ", expected,
                       "; the default ", fallback, " is used."}));
  }

  std::map<std::string, Entry, std::less<>> entries_;
  std::vector<std::string> order_;
  std::vector<std::string>* warnings_;
};

}  // namespace

GraphKernelFlags ParseGraphKernelFlags(std::string_view flags, bool enable_graph_kernel, bool graph_mode,
                                       std::vector<std::string>* warnings) {
  GraphKernelFlags out;
  FlagReader reader(flags, warnings);

  // opt_level first: several defaults below depend on it.
  reader.ReadInt("opt_level", &out.opt_level,
                 enable_graph_kernel ? kGraphKernelOptLevelDefault : kGraphKernelOptLevelOff);
  if (out.opt_level > kGraphKernelOptLevelMax) {
    reader.Warn("opt_level should be in [0, 3], but got " + std::to_string(out.opt_level) + "; 3 is used.");
    out.opt_level = kGraphKernelOptLevelMax;
  }

  reader.ReadBool("dump_as_text", &out.dump_as_text, false);
  reader.ReadBool("enable_stitch_fusion", &out.enable_stitch_fusion, out.opt_level == kGraphKernelOptLevelMax);
  reader.ReadBool("enable_recompute_fusion", &out.enable_recompute_fusion,
                  out.opt_level >= kGraphKernelOptLevelDefault);
  reader.ReadBool("enable_parallel_fusion", &out.enable_parallel_fusion, out.opt_level == kGraphKernelOptLevelMax);
  reader.ReadBool("enable_low_precision", &out.enable_low_precision, false);
  reader.ReadBool("enable_trans_op_optimize", &out.enable_trans_op_optimize, false);

  reader.ReadInt("online_tuning", &out.online_tuning, 0);
  reader.ReadInt("fusion_ops_level", &out.fusion_ops_level, 0);

  reader.ReadString("repository_path", &out.repository_path);

  reader.ReadList("enable_expand_ops", &out.enable_expand_ops);
  reader.ReadList("enable_expand_ops_only", &out.enable_expand_ops_only);
  reader.ReadList("disable_expand_ops", &out.disable_expand_ops);
  reader.ReadList("enable_cluster_ops", &out.enable_cluster_ops);
  reader.ReadList("enable_cluster_ops_only", &out.enable_cluster_ops_only);
  reader.ReadList("disable_cluster_ops", &out.disable_cluster_ops);
  reader.ReadList("enable_simplify_exprs_only", &out.enable_simplify_exprs_only);
  reader.ReadList("disable_simplify_exprs", &out.disable_simplify_exprs);
  reader.ReadList("enable_pass", &out.enable_pass);
  reader.ReadList("disable_pass", &out.disable_pass);

  reader.WarnUnknown();

  if (out.enabled() && !graph_mode) {
    reader.Warn("graph-kernel fusion only runs in GRAPH_MODE; opt_level " + std::to_string(out.opt_level) +
                " is replaced by 0 in PYNATIVE_MODE.");
    out.opt_level = kGraphKernelOptLevelOff;
  }
  return out;
}

std::string GraphKernelFlags::ToJson() const {
  nlohmann::ordered_json json;
  json["opt_level"] = opt_level;
  json["dump_as_text"] = dump_as_text;
  json["enable_stitch_fusion"] = enable_stitch_fusion;
  json["enable_recompute_fusion"] = enable_recompute_fusion;
  json["enable_parallel_fusion"] = enable_parallel_fusion;
  json["enable_low_precision"] = enable_low_precision;
  json["enable_trans_op_optimize"] = enable_trans_op_optimize;
  json["online_tuning"] = online_tuning;
  json["fusion_ops_level"] = fusion_ops_level;
  json["repository_path"] = repository_path;
  json["enable_expand_ops"] = enable_expand_ops;
  json["enable_expand_ops_only"] = enable_expand_ops_only;
  json["disable_expand_ops"] = disable_expand_ops;
  json["enable_cluster_ops"] = enable_cluster_ops;
  json["enable_cluster_ops_only"] = enable_cluster_ops_only;
  json["disable_cluster_ops"] = disable_cluster_ops;
  json["enable_simplify_exprs_only"] = enable_simplify_exprs_only;
  json["disable_simplify_exprs"] = disable_simplify_exprs;
  json["enable_pass"] = enable_pass;
  json["disable_pass"] = disable_pass;
  // Flag values may hold any bytes; replace invalid UTF-8 rather than throw.
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace msrt::context
