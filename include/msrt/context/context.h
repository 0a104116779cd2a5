// The execution context: set_context / get_context, the auto-parallel
// context and the parameter-server context.
//
// Every key is one record in one table (src/context/*_options.cc). A Store
// holds the values of all three families; `Global()` is the process's store.
// See Note [Context transactions] in src/context/store.cc for how a call is
// validated, applied and announced.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "msrt/core/device.h"
#include "msrt/core/value.h"

namespace msrt::context {

/// The four contexts and auto parallel's strategy-search parameters.
enum class Family : uint8_t { kRuntime = 0, kAutoParallel = 1, kParameterServer = 2, kOffload = 3, kAlgo = 4 };
inline constexpr int kFamilyCount = 5;
/// "context", "auto_parallel_context", "ps_context", "offload_context", "algo_parameters".
std::string_view FamilyName(Family family);

/// A compatibility profile: defaults and deprecations of an older release.
enum class Profile : uint8_t { kR0_5 = 0, kR1_0 = 1, kR1_6 = 2, kR2_3 = 3 };
inline constexpr int kProfileCount = 4;
inline constexpr Profile kDefaultProfile = Profile::kR2_3;
/// "r0.5", "r1.0", "r1.6", "r2.3".
std::string_view ProfileName(Profile profile);
/// Parses a profile name; throws ValueError listing the valid names.
Profile ParseProfile(std::string_view name);

/// Where a key's current value came from.
enum class Source : uint8_t { kDefault, kEnvironment, kApi, kOverride, kLoad, kDerived };
std::string_view SourceName(Source source);

inline constexpr int64_t kGraphMode = 0;
inline constexpr int64_t kPynativeMode = 1;

/// Public description of one key (derived from its record).
struct OptionInfo {
  Family family;
  std::string name;
  std::string type;     // e.g. "int", "str (\"xxGB\")", "dict"
  Value default_value;  // stored form, for the store's profile
  std::string doc;
  DeviceMask devices;            // where msrt applies it
  DeviceMask mindspore_devices;  // where MindSpore applies it
  std::string device_note;       // why the two differ, if they do
  bool affects_compile;
  bool freezes;  // cannot change once in effect
  bool per_thread;
  std::string env_var;   // "" if none
  std::string env_role;  // "default" or "override"
  std::vector<std::string> aliases;
  std::string deprecated_since;    // profile name, "" if live
  std::string deprecation_action;  // "ignored" or "applied"
  std::string moved_to;            // "" unless the key must go through another key
};

/// What a key is set to, what is in effect, and why.
struct Explanation {
  OptionInfo info;
  Value requested;  // what get_context returns
  Value effective;  // after environment overrides
  Source source;
  std::string source_detail;  // e.g. "env DEVICE_ID", "profile r1.6"
  bool applies;               // on the current device target
  std::string applies_reason;
  bool frozen;
  std::string frozen_reason;
  std::vector<std::string> consumers;  // subsystems subscribed to the key
  /// The explanation as a dict (what Python's `explain` returns).
  Dict ToDict() const;
  /// A few readable lines.
  std::string ToString() const;
};

/// Announced to subscribers after a change is stored.
struct Change {
  Family family;
  std::vector<std::string> keys;  // canonical names that changed value
};

/// One key of one family, named once: consumers subscribe, declare and
/// freeze through it instead of spelling the key (src/context/options.h).
class OptionKey {
 public:
  OptionKey(Family family, std::string_view key) : family_(family), key_(key) {}
  Family family() const { return family_; }
  std::string_view key() const { return key_; }

 private:
  Family family_;
  std::string key_;
};

class Store;

namespace testing {
void ForgetInEffect(Store& store, Family family, std::string_view key);  // src/context/testing.h
}

/// Keeps a subscription alive; unsubscribes when destroyed.
class Subscription {
 public:
  Subscription() = default;
  Subscription(Subscription&&) noexcept = default;
  Subscription& operator=(Subscription&&) noexcept;
  ~Subscription();
  void Reset();

  struct Entry;  // defined by the store

 private:
  friend class Store;
  std::shared_ptr<Entry> entry_;
};

/// Values of all four contexts, with their validation, history and
/// subscribers. Thread-safe: any thread may set and get at any time.
class Store {
 public:
  /// `profile` unset: from env MSRT_CONTEXT_PROFILE, else r2.3.
  explicit Store(std::optional<Profile> profile = std::nullopt);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// Validates every key, then stores all of them at once; on any error
  /// nothing changes. device_target is applied first.
  void Set(Family family, const Dict& kwargs);
  /// The stored form of `key` (this thread's override if one is active).
  Value Get(Family family, std::string_view key) const;
  /// Restores defaults: every key but the ones a family keeps on reset.
  void Reset(Family family);

  Profile profile() const;
  /// Switches profile; keys still at their default take the new defaults.
  void SetProfile(Profile profile);

  /// `key` after environment overrides (what consumers act on).
  Value Effective(Family family, std::string_view key) const;
  Explanation Explain(Family family, std::string_view key) const;
  /// A table of the keys that are not at their default, or all keys.
  std::string Summary(bool all = false) const;
  /// Every public key of `family` with its description.
  std::vector<OptionInfo> Options(Family family) const;

  /// The whole state (all families, this thread's per-thread keys) as a
  /// JSON-serialisable dict.
  Value Snapshot() const;
  /// Restores a snapshot atomically: all or nothing.
  void Load(const Value& snapshot);

  /// Records that the runtime has started using `key`; from now on a
  /// different value raises RuntimeError citing `reason`.
  void MarkInEffect(Family family, std::string_view key, std::string reason);
  void MarkInEffect(const OptionKey& key, std::string reason) {
    MarkInEffect(key.family(), key.key(), std::move(reason));
  }
  bool IsInEffect(Family family, std::string_view key) const;

  /// Calls `callback` after any change to one of `keys`, from the thread
  /// that made it. `consumer` names the subsystem (shown by Explain).
  Subscription Subscribe(Family family, const std::vector<std::string>& keys, std::string consumer,
                         std::function<void(const Change&)> callback);
  /// The same through typed handles (all of one family).
  using Keys = std::initializer_list<std::reference_wrapper<const OptionKey>>;
  Subscription Subscribe(Keys keys, std::string consumer, std::function<void(const Change&)> callback) {
    return Subscribe(FamilyOf(keys), KeyNames(keys), std::move(consumer), std::move(callback));
  }

  /// The values a call would store (this call's first, then the stored
  /// ones), as a validator sees them.
  using PendingGet = std::function<Value(Family family, std::string_view key)>;

  /// Lets `consumer` refuse a call that sets one of `keys` before anything
  /// is stored: `check` raises (a typed Error) when the switch can not take
  /// effect, and the call fails with that error, changing nothing. `check`
  /// must only look (it runs for calls that may still fail). A consumer
  /// that holds some of `keys` at values of its own gives them in
  /// `reset_values`: while the subscription lives, resetting the family
  /// restores those values instead of the defaults (which `check` refuses).
  Subscription AddValidator(Family family, const std::vector<std::string>& keys, std::string consumer,
                            std::function<void(const PendingGet& get)> check, Dict reset_values = {});
  Subscription AddValidator(Keys keys, std::string consumer, std::function<void(const PendingGet& get)> check,
                            Dict reset_values = {}) {
    return AddValidator(FamilyOf(keys), KeyNames(keys), std::move(consumer), std::move(check), std::move(reset_values));
  }

  /// Records that `consumer` reads `key` when it runs (without asking to be
  /// called back); Explain and the docs list it.
  void DeclareConsumer(Family family, std::string_view key, std::string consumer);
  void DeclareConsumer(const OptionKey& key, std::string consumer) {
    DeclareConsumer(key.family(), key.key(), std::move(consumer));
  }

  /// Hash of every compile-affecting key (with this thread's overrides and
  /// environment overrides).
  uint64_t CompileKeyHash() const;

  /// Whether this thread has scoped overrides or per-thread values (its
  /// reads may then differ from what subscribers were told).
  bool ThreadHasOverrides() const;

  /// Per-thread scoped overrides; prefer ScopedOverride.
  void PushOverride(Family family, const Dict& kwargs);
  void PopOverride();

  /// Resolves `key` to its slot for fast typed reads (see OptionRef).
  int ResolveSlot(Family family, std::string_view key, ValueKind expected) const;
  /// Reads a slot resolved by ResolveSlot.
  Value GetSlot(Family family, int slot) const;

  struct Impl;

 private:
  friend void testing::ForgetInEffect(Store& store, Family family, std::string_view key);
  static Family FamilyOf(Keys keys);  // ValueError unless all share one family
  static std::vector<std::string> KeyNames(Keys keys);
  uint64_t CompileKeyHashOfState() const;
  std::unique_ptr<Impl> impl_;
};

/// The process-wide store.
Store& Global();

/// Overrides keys for the current thread until destroyed (even when an
/// exception unwinds the scope).
class ScopedOverride {
 public:
  ScopedOverride(Family family, const Dict& kwargs, Store& store = Global());
  ~ScopedOverride();
  ScopedOverride(const ScopedOverride&) = delete;
  ScopedOverride& operator=(const ScopedOverride&) = delete;

 private:
  Store* store_;
};

/// A typed handle for reading one key on hot paths. The keys consumers read
/// have theirs in src/context/options.h, declared by their family's table:
///   int64_t seconds = runtime_options::OpTimeout().Get();
template <typename T>
class OptionRef : public OptionKey {
 public:
  OptionRef(Family family, std::string_view key, Store& store = Global())
      : OptionKey(family, key), store_(&store), slot_(store.ResolveSlot(family, key, ExpectedKind())) {}
  /// The stored form (this thread's override if one is active).
  T Get() const { return Convert(store_->GetSlot(family(), slot_)); }
  /// After environment overrides (what consumers act on).
  T Effective() const { return Convert(store_->Effective(family(), key())); }
  /// What a validator sees: the value the call being checked would store.
  T Pending(const Store::PendingGet& get) const { return Convert(get(family(), key())); }

 private:
  static T Convert(const Value& v) {
    if constexpr (std::is_same_v<T, bool>) {
      return v.as_bool();
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return v.as_int();
    } else if constexpr (std::is_same_v<T, double>) {
      return v.as_float();
    } else if constexpr (std::is_same_v<T, std::string>) {
      return v.as_string();
    } else {
      return v;
    }
  }
  static ValueKind ExpectedKind() {
    if constexpr (std::is_same_v<T, bool>) return ValueKind::kBool;
    if constexpr (std::is_same_v<T, int64_t>) return ValueKind::kInt;
    if constexpr (std::is_same_v<T, double>) return ValueKind::kFloat;
    if constexpr (std::is_same_v<T, std::string>) return ValueKind::kString;
    return ValueKind::kObject;  // any kind
  }
  Store* store_;
  int slot_;
};

}  // namespace msrt::context

namespace msrt {

// MindSpore-named entry points on the global store.
void SetContext(const Dict& kwargs);
Value GetContext(std::string_view key);
void SetAutoParallelContext(const Dict& kwargs);
Value GetAutoParallelContext(std::string_view key);
void ResetAutoParallelContext();
void SetPsContext(const Dict& kwargs);
Value GetPsContext(std::string_view key);
void ResetPsContext();

}  // namespace msrt
