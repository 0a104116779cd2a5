// Internals of context::Store shared by store.cc and explain.cc.
#pragma once

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

  Value DefaultFor(const OptionSpec& spec, Profile p) const;
  /// Stored value, with this thread's overrides and per-thread values when
  /// `with_thread`, and the environment default when the user set nothing.
  /// `stored`, if given, is the slot as copied by CopySlots (no lock taken).
  SlotRead Read(Family f, int slot, bool with_thread, Warnings* warnings,
                const Slot* stored = nullptr) const;
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

}  // namespace msrt::context
