// Internals of context::Store shared by store.cc and explain.cc.
#pragma once

#include <cstring>

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "context/option_spec.h"
#include "msrt/context/context.h"

namespace msrt::context {

using Warnings = std::vector<std::pair<WarningKind, std::string>>;
using SlotId = std::pair<int, int>;  // (family, slot)

/// One stored value and its history.
struct Slot {
  Value value;
  Source source = Source::kDefault;
  bool in_effect = false;
  std::string in_effect_reason;
};

/// The records and values of one family.
struct FamilyState {
  const FamilyTable* table = nullptr;
  std::vector<const OptionSpec*> specs;             // slot → record
  std::unordered_map<std::string_view, int> index;  // name → slot (hidden too)
  std::unordered_map<std::string_view, std::pair<int, const Alias*>> aliases;
  std::vector<Slot> slots;
  // Scalar slots readable without a lock (see Store::GetSlot).
  std::vector<uint8_t> fast;
  std::unique_ptr<std::atomic<uint64_t>[]> fast_bits;
  // The kind of each slot's default, fixed at construction: a fast slot
  // always holds this kind, and reading it needs no lock.
  std::vector<ValueKind> kinds;
};

/// A value as read, with where it came from.
struct SlotRead {
  Value value;
  Source source = Source::kDefault;
  std::string detail;
};

struct Subscription::Entry {
  Family family;
  std::vector<std::string> keys;
  std::string consumer;
  std::function<void(const Change&)> callback;
  std::function<void(const Store::PendingGet&)> validator;  // AddValidator
  Dict reset_values;                                        // what Reset restores instead of defaults
  std::atomic<bool> active{true};
};

struct Store::Impl {
  uint64_t id = 0;
  std::atomic<Profile> profile{kDefaultProfile};
  std::array<FamilyState, kFamilyCount> families;
  mutable std::shared_mutex state_mutex;  // guards slots
  std::mutex write_mutex;                 // serialises every change
  // Hash of the compile-affecting keys, recomputed lazily after they change.
  // Lock order: hash_mutex, then state_mutex.
  mutable std::mutex hash_mutex;
  mutable uint64_t compile_hash = 0;
  mutable bool compile_hash_valid = false;

  mutable std::mutex subscribers_mutex;
  std::vector<std::shared_ptr<Subscription::Entry>> subscribers;

  FamilyState& family(Family f) { return families[static_cast<int>(f)]; }
  const FamilyState& family(Family f) const { return families[static_cast<int>(f)]; }

  /// Slot of a canonical or hidden name; -1 if none.
  int FindSlot(Family f, std::string_view name) const;
  /// Slot of a public key for user calls, following aliases (warning when
  /// deprecated); raises ValueError with suggestions when unknown.
  int ResolvePublic(Family f, std::string_view key, bool is_set, Warnings* warnings) const;

  static Value DefaultFor(const OptionSpec& spec, Profile p);
  /// Stored value, with this thread's overrides and per-thread values when
  /// `with_thread`, and the environment default when the user set nothing.
  /// `stored`, if given, is the slot as copied by CopySlots (no lock taken).
  SlotRead Read(Family f, int slot, bool with_thread, Warnings* warnings, const Slot* stored = nullptr) const;
  /// Every family's stored slots, copied under one lock: a consistent state
  /// for readers of several keys (Snapshot, the compile-key hash).
  std::array<std::vector<Slot>, kFamilyCount> CopySlots() const;
  /// The value the key's environment variable supplies while the user set
  /// none (EnvRole::kDefault), if the variable is set.
  std::optional<SlotRead> EnvironmentDefault(Family f, int slot, Warnings* warnings) const;
  /// What get returns (read hooks applied), without device warnings.
  Value ReadPublic(Family f, int slot, Warnings* warnings) const;
  /// Read() plus an environment override, if the record has one.
  SlotRead ReadEffective(Family f, int slot, Warnings* warnings) const;
  /// Whether `spec` applies on the device target in force for this thread.
  DeviceTarget CurrentDevice() const;

  std::vector<std::string> ConsumersOf(Family f, std::string_view key);
  uint64_t ComputeCompileHash(bool with_thread) const;
};

/// Keys computed by a `read` hook that some subscriber follows, with their
/// value before a commit; AddChangedDerivedKeys adds those a commit changed
/// to `changed` (per family), so their subscribers hear about it.
using DerivedValues = std::vector<std::pair<SlotId, Value>>;
using ChangedKeys = std::array<std::vector<std::string>, kFamilyCount>;
DerivedValues ReadFollowedDerivedKeys(const Store::Impl& impl);
void AddChangedDerivedKeys(const Store::Impl& impl, const DerivedValues& before, ChangedKeys& changed);

/// Python-ish closest names, for "did you mean".
std::vector<std::string> ClosestNames(std::string_view key, const std::vector<std::string_view>& names);

/// Describes a record for Options()/Explain().
OptionInfo MakeOptionInfo(const FamilyState& state, const OptionSpec& spec, Value default_value);

// ---------------------------------------------------------------------------
// Shared by the store's read path (store.cc) and write path (store_write.cc);
// internal to the store.
namespace store_detail {

// ---------------------------------------------------------------------------
// Per-thread state: scoped overrides and per-thread keys, for every store.

struct OverrideFrame {
  uint64_t store_id;
  std::map<SlotId, Value> values;
};
struct ThreadValue {
  Value value;
  Source source;
};
struct ThreadValues {
  uint64_t store_id;
  std::map<SlotId, ThreadValue> values;
};

inline thread_local std::vector<OverrideFrame> t_frames;
inline thread_local std::vector<ThreadValues> t_thread_values;
// Set before any thread first adds to its t_frames or t_thread_values: until
// then no thread has state, and ThreadHasState (asked by every option read,
// several per op call) need not reach the thread's lists, whose lazily
// constructed thread-locals cost a call each. A thread sees its own setting.
inline std::atomic<bool> g_thread_state_used{false};
inline thread_local bool t_notifying = false;  // a subscriber is being notified

inline std::atomic<uint64_t> g_next_store_id{1};

inline ThreadValues* ThreadValuesFor(uint64_t store_id, bool create) {
  for (ThreadValues& tv : t_thread_values) {
    if (tv.store_id == store_id) return &tv;
  }
  if (!create) return nullptr;
  g_thread_state_used.store(true, std::memory_order_relaxed);
  t_thread_values.push_back(ThreadValues{store_id, {}});
  return &t_thread_values.back();
}

inline bool ThreadHasState() {
  return g_thread_state_used.load(std::memory_order_relaxed) && (!t_frames.empty() || !t_thread_values.empty());
}

inline const Value* FindOverride(uint64_t store_id, SlotId id) {
  for (auto it = t_frames.rbegin(); it != t_frames.rend(); ++it) {
    if (it->store_id != store_id) continue;
    auto found = it->values.find(id);
    if (found != it->values.end()) return &found->second;
  }
  return nullptr;
}

inline uint64_t ScalarBits(const Value& v) {
  if (v.is_float()) {
    double d = v.as_float();
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return bits;
  }
  return static_cast<uint64_t>(v.as_int());
}

inline bool KindMatchesForLoad(const Value& given, const Value& default_value) {
  if (default_value.is_none()) return true;
  if (given.kind() == default_value.kind()) return true;
  if (default_value.is_float() && given.is_int()) return true;
  if (default_value.is_sequence() && given.is_sequence()) return true;
  return false;
}

inline std::string DeviceNotApplicableMessage(const FamilyTable& table, std::string_view key, const OptionSpec& spec,
                                              DeviceTarget device) {
  return StrCat("For '", table.set_function, "', when set the argument '", key,
                "', the argument 'device_target' only supports devices in ", DeviceMaskRepr(spec.devices),
                ", but got '", DeviceTargetName(device), "', ignore it.");
}

// ---------------------------------------------------------------------------
// The transaction a call validates into.

class PendingTransaction final : public Transaction {
 public:
  PendingTransaction(const Store::Impl& impl, Profile profile, bool with_thread, Warnings* warnings)
      : impl_(impl), profile_(profile), with_thread_(with_thread), warnings_(warnings) {}

  Value Get(Family family, std::string_view key) const override {
    int slot = impl_.FindSlot(family, key);
    MSRT_INTERNAL_ASSERT(slot >= 0, "no context key '", key, "' in ", FamilyName(family));
    auto it = writes_.find({static_cast<int>(family), slot});
    if (it != writes_.end()) return it->second;
    return impl_.Read(family, slot, with_thread_, warnings_).value;
  }
  Profile profile() const override { return profile_; }
  void Write(Family family, std::string_view key, Value stored) override {
    int slot = impl_.FindSlot(family, key);
    MSRT_INTERNAL_ASSERT(slot >= 0, "no context key '", key, "' in ", FamilyName(family));
    writes_[{static_cast<int>(family), slot}] = std::move(stored);
  }
  const std::map<SlotId, Value>& writes() const { return writes_; }

 private:
  const Store::Impl& impl_;
  Profile profile_;
  bool with_thread_;
  Warnings* warnings_;
  std::map<SlotId, Value> writes_;
};

/// Reads for get: stored values with this thread's overrides.
class ReadView final : public View {
 public:
  ReadView(const Store::Impl& impl, Warnings* warnings) : impl_(impl), warnings_(warnings) {}
  Value Get(Family family, std::string_view key) const override {
    int slot = impl_.FindSlot(family, key);
    MSRT_INTERNAL_ASSERT(slot >= 0, "no context key '", key, "' in ", FamilyName(family));
    return impl_.Read(family, slot, /*with_thread=*/true, warnings_).value;
  }
  Profile profile() const override { return impl_.profile.load(); }

 private:
  const Store::Impl& impl_;
  Warnings* warnings_;
};

inline void IssueWarnings(const Warnings& warnings) {
  for (const auto& [kind, message] : warnings) Warn(kind, message);
}

}  // namespace store_detail

}  // namespace msrt::context
