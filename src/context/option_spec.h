// The record that declares one context key, and the small library of parsers
// and checks the tables build records from.
//
// A key is declared once, in its family's table (runtime_options.cc,
// parallel_options.cc, ps_options.cc, offload_options.cc, algo_options.cc). Setter, getter, Python binding, error
// messages, docs, the compile-cache key and the schema tests all derive from
// the record. Consumers subscribe from their own folder; a record never names
// who reads it.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "msrt/context/context.h"
#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"
#include "msrt/core/value.h"

namespace msrt::context {

class Transaction;

/// Read access to the state a record's hooks may consult: the values being
/// set in this call (pending), else the stored ones.
class View {
 public:
  virtual ~View() = default;
  /// The stored form of a key of any family (hidden keys included).
  virtual Value Get(Family family, std::string_view key) const = 0;
  virtual Profile profile() const = 0;
  /// The device target in force for this call.
  DeviceTarget device() const;
};

/// Everything a parse/check/apply/read hook sees about the key at hand.
class KeyEnv {
 public:
  KeyEnv(Family family, std::string_view key, std::string_view function, const View& view,
         std::vector<std::pair<WarningKind, std::string>>* warnings)
      : family(family), key(key), function(function), view(view), warnings_(warnings) {}

  Family family;
  std::string_view key;       // the canonical key name
  std::string_view function;  // "context.set_context", ... (for messages)
  const View& view;
  bool loading = false;  // validating a snapshot's stored form

  Profile profile() const { return view.profile(); }
  /// Queues a warning; it is issued before anything is stored.
  void Warn(WarningKind kind, std::string message) const;

  /// TypeError: "For '<function>', the parameter '<key>' must be <expected>,
  /// but got <type> (<repr>)."
  [[noreturn]] void FailType(std::string_view expected, const Value& got) const;
  /// ValueError: "For '<function>', the argument '<key>' <expectation>,
  /// but got <repr>."
  [[noreturn]] void FailValue(std::string_view expectation, const Value& got) const;
  /// Any error kind with a message that starts "For '<function>', ".
  [[noreturn]] void Fail(ErrorKind kind, std::string_view message) const;

 private:
  std::vector<std::pair<WarningKind, std::string>>* warnings_;
};

/// Turns what the user passed into the stored form; raises TypeError or
/// ValueError naming the key, what was expected and what was given. When
/// `env.loading` is set the input is a stored form from a snapshot: the
/// parser validates it and returns it (without side effects).
using Parser = std::function<Value(const Value& input, const KeyEnv& env)>;
/// Writes the parsed value; the default writes the key's own slot. A record
/// whose key is a view of other keys writes those instead.
using Applier = std::function<void(const Value& stored, Transaction& tx, const KeyEnv& env)>;
/// Makes a parsed value usable outside the context, e.g. creates the folder
/// it names. Runs once every key of the call is validated and before any is
/// stored (never while loading a snapshot); returns what undoes it, called
/// when a later key's preparation fails, so a failed call changes nothing on
/// disk either. Raises a typed error naming the key.
using Preparer = std::function<std::function<void()>(const Value& stored, const KeyEnv& env)>;
/// Computes what get returns, for keys derived from other keys.
using Reader = std::function<Value(const View& view, const KeyEnv& env)>;
/// A default computed when the store is created (e.g. the best device).
using DefaultFn = std::function<Value()>;

/// Pending writes of one call. Also a View (pending first, then stored).
class Transaction : public View {
 public:
  virtual void Write(Family family, std::string_view key, Value stored) = 0;
};

enum class Freeze : uint8_t {
  kNever,
  kOnceInEffect,  // a different value is refused once the runtime used it
};

enum class EnvRole : uint8_t {
  kNone,
  kDefault,   // the variable supplies the value while the user set none
  kOverride,  // the variable wins over the stored value when consumed
};

struct EnvBinding {
  std::string_view var;
  EnvRole role = EnvRole::kNone;
  /// Variable text → stored form; raises ValueError naming the variable.
  std::function<Value(const std::string& text, const KeyEnv& env)> parse = nullptr;
};

enum class DeprecationAction : uint8_t { kNone, kWarnAndApply, kWarnAndIgnore };

struct Deprecation {
  Profile since = Profile::kR2_3;
  DeprecationAction action = DeprecationAction::kNone;
  std::string_view advice;  // e.g. "Use 'max_device_memory' instead."
};

/// An older name of a key; a deprecation warning once `deprecated_since`.
struct Alias {
  std::string_view name;
  Profile deprecated_since;
};

enum class Scope : uint8_t { kProcess, kThread };
enum class Visibility : uint8_t {
  kPublic,
  kHidden,  // internal state of a key family: not settable or readable by name
};

/// One context key.
struct OptionSpec {
  std::string_view name;
  std::string_view type;  // for docs: "int", "str (\"xxGB\")", "dict", ...
  Value default_value;
  std::vector<std::pair<Profile, Value>> profile_defaults = {};
  DefaultFn default_fn = nullptr;
  Parser parse = nullptr;
  DeviceMask devices = kAllDevices;
  DeviceMask mindspore_devices = kAllDevices;
  std::string_view device_note = {};
  Freeze freeze = Freeze::kNever;
  bool affects_compile = false;
  EnvBinding env = {};
  std::vector<Alias> aliases = {};
  Deprecation deprecation = {};
  Scope scope = Scope::kProcess;
  Visibility visibility = Visibility::kPublic;
  bool kept_on_reset = false;  // Reset(family) leaves it alone
  bool in_summary = false;     // always listed by Summary()
  int order = 1;               // lower is applied first within a call
  Applier apply = nullptr;
  Preparer prepare = nullptr;
  Reader read = nullptr;
  std::string_view doc;
};

/// A key MindSpore moved under another key: set_context rejects it with a
/// ValueError that says where it goes now.
struct MovedKey {
  std::string_view name;
  std::string_view moved_to;
};

/// One family's table.
struct FamilyTable {
  Family family;
  std::string_view set_function;  // "context.set_context"
  std::string_view get_function;  // "context.get_context"
  std::vector<OptionSpec> options;
  std::vector<MovedKey> moved = {};
  /// Unknown-key message for set (`is_set`) or get, per profile; the store
  /// appends the closest known keys.
  std::function<std::string(Profile profile, bool is_set, std::string_view key)> unknown_key;
};

const FamilyTable& RuntimeTable();
const FamilyTable& AutoParallelTable();
const FamilyTable& ParameterServerTable();
const FamilyTable& OffloadTable();
const FamilyTable& AlgoTable();

// ---------------------------------------------------------------------------
// Parsers. Each raises TypeError for a wrong Python type and ValueError for a
// bad value, through KeyEnv so messages name the key and function.

/// bool only (ints are refused, as MindSpore's bool checks do).
Parser ParseBool();
/// int; a bool is accepted as 0/1 (Python's isinstance(True, int)).
Parser ParseInt();
/// int; a bool is refused.
Parser ParseStrictInt();
/// str.
Parser ParseString();
/// str or None (None stored as "").
Parser ParseOptionalString();
/// str, one of `choices` (case-sensitive); stored as given.
Parser ParseStringChoice(std::vector<std::string_view> choices);
/// str, one of the keys of `mapping`; stored as the mapped value.
Parser ParseStringMap(std::vector<std::pair<std::string_view, Value>> mapping);
/// int (bool accepted), one of `choices`; `expectation` completes "the
/// argument 'k' ..." in the error, e.g. "should be 0 or 1".
Parser ParseIntChoice(std::vector<int64_t> choices, std::string expectation);
/// int (bool refused unless `allow_bool`) in [lo, hi].
Parser ParseIntRange(int64_t lo, int64_t hi, bool allow_bool = true);

/// The "xxGB" size rule (see Note [GB strings] in parsers.cc).
struct GbRule {
  bool integer = false;          // parse the number with int() instead of float()
  double min = 0.0;              // smallest allowed value
  bool min_exclusive = true;     // value must be > min (else >= min)
  double max = -1.0;             // largest allowed value (< 0: none)
  std::string_view min_message;  // VE wording for too small
  std::string_view max_message;  // VE wording for too large
};
/// The number of GB in an "xxGB" string; raises ValueError.
double ParseGbText(std::string_view text, bool integer, const KeyEnv& env);
/// str "xxGB" → float GB (or int GB with `integer`).
Parser ParseGb(GbRule rule);

/// One sub-key of a dict-valued key.
struct SubKey {
  std::string_view name;
  Value default_value;
  Parser parse;
  std::string_view doc = {};
};
/// A dict whose keys are among `sub_keys`: unknown key → ValueError listing
/// the allowed ones; each value goes through its sub-parser. The stored form
/// is the full dict (defaults filled in), with this call's keys merged over
/// the key's current stored value.
Parser ParseSubDict(std::vector<SubKey> sub_keys);
/// The full default dict of `sub_keys`.
Value SubDictDefault(const std::vector<SubKey>& sub_keys);

/// Realpath of a path string; "" for "".
std::string RealPath(std::string_view path);
/// Text quoted in a message, with bytes outside printable ASCII escaped so
/// the message stays valid UTF-8 for Python.
std::string Printable(std::string_view text);
/// A str argument naming a path; NUL bytes are refused (the file system would
/// silently cut the name there).
const std::string& PathText(const Value& in, const KeyEnv& env);
/// Creates the folder `dir` (and missing parents) once the call is validated;
/// the returned undo removes what it made if the call fails later. OSError
/// naming the key when it cannot be made. Nothing for "".
std::function<void()> PrepareDirectory(const std::string& dir, const KeyEnv& env);
/// str naming a path (NUL bytes refused, see PathText).
Parser ParsePath();
/// A float (or int) in (0, 1].
Parser ParseUnitInterval();
/// `parse`, then (unless loading a snapshot) a warning that the key is stored
/// but has no effect because msrt does not `missing` yet.
Parser StoredWithoutEffect(Parser parse, std::string_view missing);

/// Accepts the "unset" stored form ("") when loading a snapshot, for keys
/// whose default is unset but which users may only set to listed values.
Parser OrUnsetWhenLoading(Parser parse);

}  // namespace msrt::context
