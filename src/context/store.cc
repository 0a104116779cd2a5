// The context store: one generic path for every key of every family.
//
// Note [Context transactions]
// A call (set, override, reset, load, profile switch) runs under the store's
// write mutex and goes through three phases:
//   1. validate: each key is resolved (aliases, moved keys, unknown keys),
//      checked for deprecation and device applicability, parsed by its record
//      and applied into a pending Transaction. Records may read other keys
//      through the transaction (pending values first), which is how
//      `device_target` applied first decides applicability of the others.
//      Freeze rules are checked on the pending writes.
//   2. warn: queued warnings are issued. A host may turn a warning into an
//      exception (Python's "error" filter); nothing has been stored yet.
//   3. commit: all pending writes are stored at once under the state lock,
//      then subscribers hear about the keys whose value changed.
// Any exception before phase 3 leaves the store exactly as it was. Readers
// take the state lock only briefly and never call out while holding it, so a
// warning sink or a subscriber may read the context freely.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "context/store_impl.h"
#include "core/strings.h"

namespace msrt::context {

namespace {

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

thread_local std::vector<OverrideFrame> t_frames;
thread_local std::vector<ThreadValues> t_thread_values;
thread_local bool t_notifying = false;

std::atomic<uint64_t> g_next_store_id{1};

ThreadValues* ThreadValuesFor(uint64_t store_id, bool create) {
  for (ThreadValues& tv : t_thread_values) {
    if (tv.store_id == store_id) return &tv;
  }
  if (!create) return nullptr;
  t_thread_values.push_back(ThreadValues{store_id, {}});
  return &t_thread_values.back();
}

bool ThreadHasState() { return !t_frames.empty() || !t_thread_values.empty(); }

const Value* FindOverride(uint64_t store_id, SlotId id) {
  for (auto it = t_frames.rbegin(); it != t_frames.rend(); ++it) {
    if (it->store_id != store_id) continue;
    auto found = it->values.find(id);
    if (found != it->values.end()) return &found->second;
  }
  return nullptr;
}

uint64_t ScalarBits(const Value& v) {
  if (v.is_float()) {
    double d = v.as_float();
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return bits;
  }
  return static_cast<uint64_t>(v.as_int());
}

bool KindMatchesForLoad(const Value& given, const Value& default_value) {
  if (default_value.is_none()) return true;
  if (given.kind() == default_value.kind()) return true;
  if (default_value.is_float() && given.is_int()) return true;
  if (default_value.is_sequence() && given.is_sequence()) return true;
  return false;
}

std::string DeviceNotApplicableMessage(const FamilyTable& table, std::string_view key,
                                       const OptionSpec& spec, DeviceTarget device) {
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

void IssueWarnings(const Warnings& warnings) {
  for (const auto& [kind, message] : warnings) Warn(kind, message);
}

}  // namespace

// ---------------------------------------------------------------------------
// Impl: lookups and reads.

int Store::Impl::FindSlot(Family f, std::string_view name) const {
  const FamilyState& state = family(f);
  auto it = state.index.find(name);
  return it == state.index.end() ? -1 : it->second;
}

std::vector<std::string> ClosestNames(std::string_view key, const std::vector<std::string_view>& names) {
  std::vector<std::pair<size_t, std::string_view>> scored;
  size_t limit = std::max<size_t>(2, key.size() / 3);
  for (std::string_view name : names) {
    size_t d = EditDistance(key.substr(0, 200), name);
    bool contains = key.size() >= 4 && name.find(key) != std::string_view::npos;
    if (d <= limit || contains) scored.emplace_back(contains ? std::min(d, limit) : d, name);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) out.emplace_back(scored[i].second);
  return out;
}

int Store::Impl::ResolvePublic(Family f, std::string_view key, bool is_set, Warnings* warnings) const {
  const FamilyState& state = family(f);
  auto it = state.index.find(key);
  if (it != state.index.end() && state.specs[it->second]->visibility == Visibility::kPublic) {
    return it->second;
  }
  auto alias = state.aliases.find(key);
  if (alias != state.aliases.end()) {
    const auto& [slot, info] = alias->second;
    if (profile.load() >= info->deprecated_since && warnings != nullptr) {
      warnings->emplace_back(WarningKind::kDeprecated,
                             StrCat("For '", is_set ? state.table->set_function : state.table->get_function,
                                    "', the argument '", key, "' is deprecated since ",
                                    ProfileName(info->deprecated_since), "; use '",
                                    state.specs[slot]->name, "' instead."));
    }
    return slot;
  }
  if (is_set) {
    for (const MovedKey& moved : state.table->moved) {
      if (moved.name == key) {
        throw ValueError(StrCat("For '", state.table->set_function, "', the argument '", key,
                                "' can no longer be set directly. Please set '", key, "' through parameter ",
                                moved.moved_to, ", e.g. ", moved.moved_to, "={'", key, "': ...}."));
      }
    }
  }
  std::vector<std::string_view> names;
  for (const OptionSpec* spec : state.specs) {
    if (spec->visibility == Visibility::kPublic) names.push_back(spec->name);
  }
  std::string message = state.table->unknown_key(profile.load(), is_set, key);
  auto closest = ClosestNames(key, names);
  if (!closest.empty()) {
    message += closest.size() == 1 ? " Did you mean '" : " Did you mean one of '";
    for (size_t i = 0; i < closest.size(); ++i) message += (i ? "', '" : "") + closest[i];
    message += "'?";
  }
  throw ValueError(message);
}

Value Store::Impl::DefaultFor(const OptionSpec& spec, Profile p) const {
  for (const auto& [profile_id, value] : spec.profile_defaults) {
    if (profile_id == p) return value;
  }
  if (spec.default_fn) return spec.default_fn();
  return spec.default_value;
}

std::array<std::vector<Slot>, kFamilyCount> Store::Impl::CopySlots() const {
  std::array<std::vector<Slot>, kFamilyCount> out;
  std::shared_lock lock(state_mutex);
  for (int fi = 0; fi < kFamilyCount; ++fi) out[fi] = families[fi].slots;
  return out;
}

SlotRead Store::Impl::Read(Family f, int slot, bool with_thread, Warnings* warnings, const Slot* stored) const {
  const FamilyState& state = family(f);
  const OptionSpec& spec = *state.specs[slot];
  SlotId id{static_cast<int>(f), slot};
  SlotRead out;
  if (with_thread && ThreadHasState()) {
    if (const Value* v = FindOverride(this->id, id)) {
      out.value = *v;
      out.source = Source::kOverride;
      out.detail = "this thread's context.override";
      return out;
    }
    if (spec.scope == Scope::kThread) {
      if (ThreadValues* tv = ThreadValuesFor(this->id, false)) {
        auto it = tv->values.find(id);
        if (it != tv->values.end()) {
          out.value = it->second.value;
          out.source = it->second.source;
          out.detail = "set on this thread";
          return out;
        }
      }
    }
  }
  if (stored != nullptr) {
    out.value = stored->value;
    out.source = stored->source;
  } else {
    std::shared_lock lock(state_mutex);
    const Slot& s = state.slots[slot];
    out.value = s.value;
    out.source = s.source;
  }
  if (spec.scope == Scope::kThread) {
    // Each thread starts from the default; its own values live in ThreadValues.
    out.value = DefaultFor(spec, profile.load());
    out.source = Source::kDefault;
  }
  if (out.source == Source::kDefault) {
    if (std::optional<SlotRead> env = EnvironmentDefault(f, slot, warnings)) return *env;
  }
  if (out.source == Source::kDefault && !spec.profile_defaults.empty()) {
    for (const auto& [p, v] : spec.profile_defaults) {
      if (p == profile.load()) out.detail = StrCat("profile ", ProfileName(p));
    }
  }
  return out;
}

std::optional<SlotRead> Store::Impl::EnvironmentDefault(Family f, int slot, Warnings* warnings) const {
  const FamilyState& state = family(f);
  const OptionSpec& spec = *state.specs[slot];
  if (spec.env.role != EnvRole::kDefault) return std::nullopt;
  const char* text = std::getenv(std::string(spec.env.var).c_str());
  if (text == nullptr || text[0] == '\0') return std::nullopt;
  ReadView view(*this, warnings);
  KeyEnv env(f, spec.name, state.table->get_function, view, warnings);
  SlotRead out;
  out.value = spec.env.parse(text, env);
  out.source = Source::kEnvironment;
  out.detail = StrCat("env ", spec.env.var, "=", text);
  return out;
}

Value Store::Impl::ReadPublic(Family f, int slot, Warnings* warnings) const {
  const FamilyState& state = family(f);
  const OptionSpec& spec = *state.specs[slot];
  if (spec.read) {
    ReadView view(*this, warnings);
    KeyEnv env(f, spec.name, state.table->get_function, view, warnings);
    return spec.read(view, env);
  }
  return Read(f, slot, /*with_thread=*/true, warnings).value;
}

SlotRead Store::Impl::ReadEffective(Family f, int slot, Warnings* warnings) const {
  const FamilyState& state = family(f);
  const OptionSpec& spec = *state.specs[slot];
  SlotRead out = Read(f, slot, /*with_thread=*/true, warnings);
  if (spec.read) out.value = ReadPublic(f, slot, warnings);
  if (spec.env.role == EnvRole::kOverride) {
    const char* text = std::getenv(std::string(spec.env.var).c_str());
    if (text != nullptr && text[0] != '\0') {
      ReadView view(*this, warnings);
      KeyEnv env(f, spec.name, state.table->get_function, view, warnings);
      out.value = spec.env.parse(text, env);
      out.source = Source::kEnvironment;
      out.detail = StrCat("env ", spec.env.var, "=", text, " overrides the context value");
    }
  }
  return out;
}

DeviceTarget Store::Impl::CurrentDevice() const { return ReadView(*this, nullptr).device(); }

std::vector<std::string> Store::Impl::ConsumersOf(Family f, std::string_view key) {
  std::lock_guard lock(subscribers_mutex);
  std::vector<std::string> out;
  for (const auto& entry : subscribers) {
    if (!entry->active || entry->family != f) continue;
    if (std::find(entry->keys.begin(), entry->keys.end(), key) != entry->keys.end() &&
        std::find(out.begin(), out.end(), entry->consumer) == out.end()) {
      out.push_back(entry->consumer);
    }
  }
  return out;
}

uint64_t Store::Impl::ComputeCompileHash(bool with_thread) const {
  uint64_t h = 1469598103934665603ull;
  auto slots = CopySlots();  // one consistent state, not key by key
  for (int fi = 0; fi < kFamilyCount; ++fi) {
    const FamilyState& state = families[fi];
    for (size_t slot = 0; slot < state.specs.size(); ++slot) {
      const OptionSpec& spec = *state.specs[slot];
      if (!spec.affects_compile) continue;
      Value v = Read(static_cast<Family>(fi), static_cast<int>(slot), with_thread, nullptr, &slots[fi][slot]).value;
      uint64_t name_hash = 1469598103934665603ull;
      for (char c : spec.name) name_hash = (name_hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
      uint64_t parts[2] = {name_hash, v.StableHash()};
      for (uint64_t part : parts) {
        h ^= part;
        h *= 1099511628211ull;
      }
    }
  }
  return h;
}

// ---------------------------------------------------------------------------
// Store: construction.

Store::Store(std::optional<Profile> profile) : impl_(std::make_unique<Impl>()) {
  impl_->id = g_next_store_id.fetch_add(1);
  if (!profile) {
    const char* text = std::getenv("MSRT_CONTEXT_PROFILE");
    profile = kDefaultProfile;
    if (text != nullptr && text[0] != '\0') {
      try {
        profile = ParseProfile(text);
      } catch (const ValueError&) {
        Warn(WarningKind::kGeneral, StrCat("MSRT_CONTEXT_PROFILE='", text,
                                           "' is not one of 'r0.5', 'r1.0', 'r1.6', 'r2.3'; using the default profile ",
                                           ProfileName(kDefaultProfile), "."));
      }
    }
  }
  impl_->profile = *profile;
  const FamilyTable* tables[kFamilyCount] = {&RuntimeTable(), &AutoParallelTable(), &ParameterServerTable()};
  for (int fi = 0; fi < kFamilyCount; ++fi) {
    FamilyState& state = impl_->families[fi];
    state.table = tables[fi];
    MSRT_INTERNAL_ASSERT(static_cast<int>(state.table->family) == fi, "table order");
    for (const OptionSpec& spec : state.table->options) {
      int slot = static_cast<int>(state.specs.size());
      MSRT_INTERNAL_ASSERT(state.index.emplace(spec.name, slot).second, "duplicate key ", spec.name);
      state.specs.push_back(&spec);
      for (const Alias& alias : spec.aliases) state.aliases.emplace(alias.name, std::make_pair(slot, &alias));
      Slot s;
      s.value = impl_->DefaultFor(spec, *profile);
      state.slots.push_back(std::move(s));
      const Value& v = state.slots.back().value;
      state.kinds.push_back(v.kind());
      bool scalar = v.is_bool() || v.is_int() || v.is_float();
      state.fast.push_back(scalar && spec.scope == Scope::kProcess && spec.env.role == EnvRole::kNone &&
                           !spec.read);
    }
    state.fast_bits = std::make_unique<std::atomic<uint64_t>[]>(state.specs.size());
    for (size_t slot = 0; slot < state.specs.size(); ++slot) {
      if (state.fast[slot]) state.fast_bits[slot].store(ScalarBits(state.slots[slot].value));
    }
  }
}

Store::~Store() = default;

Profile Store::profile() const { return impl_->profile.load(); }

// ---------------------------------------------------------------------------
// Store: the write path.

namespace {

struct Validated {
  std::map<SlotId, Value> writes;
  Warnings warnings;
};

/// Refuses writes that would change a key the runtime already uses. Values
/// are compared as read, so a key whose value comes from its environment
/// default (DEVICE_ID) is compared with that, and a write of the default
/// (`source` kDefault: reset, profile switch) counts as the environment's
/// value when the variable supplies one. Runs under the write mutex.
void CheckFrozen(const Store::Impl& impl, const std::map<SlotId, Value>& writes, std::string_view function,
                 Source source) {
  for (const auto& [id, value] : writes) {
    const FamilyState& state = impl.families[id.first];
    const OptionSpec& spec = *state.specs[id.second];
    if (spec.freeze != Freeze::kOnceInEffect) continue;
    std::string reason;
    {
      std::shared_lock lock(impl.state_mutex);
      const Slot& slot = state.slots[id.second];
      if (!slot.in_effect) continue;
      reason = slot.in_effect_reason;
    }
    auto family = static_cast<Family>(id.first);
    Warnings ignored;  // about the environment variable itself; reported when it is read
    Value current = impl.Read(family, id.second, /*with_thread=*/false, &ignored).value;
    Value next = value;
    if (source == Source::kDefault) {
      if (std::optional<SlotRead> env = impl.EnvironmentDefault(family, id.second, &ignored)) next = env->value;
    }
    if (next != current) {
      throw RuntimeError(StrCat("For '", function, "', '", spec.name, "' can not be changed to ", value.repr(),
                                ": its value ", current.repr(), " has been in effect since ", reason,
                                ". Set it before that happens (e.g. at the top of the script), "
                                "or start a new process."));
    }
  }
}

}  // namespace

// Note [A failed call changes nothing]
//   A call is parsed and checked whole before anything is stored: key
//   parsers only look; consumers' validators (Store::AddValidator) refuse a
//   switch that can not take effect; then the keys' preparations (creating
//   the folders they name) run, undone if one fails. Only then is anything
//   stored, so a failed call leaves the context and the disk as they were.
static void RunValidators(const Store::Impl& impl, const std::map<SlotId, Value>& writes, const View& view) {
  std::vector<std::shared_ptr<Subscription::Entry>> entries;
  {
    std::lock_guard lock(impl.subscribers_mutex);
    for (const auto& e : impl.subscribers) {
      if (e->active && e->validator) entries.push_back(e);
    }
  }
  if (entries.empty()) return;
  auto get = [&view](Family f, std::string_view key) { return view.Get(f, key); };
  for (const auto& entry : entries) {
    bool touched = false;
    for (const auto& [id, value] : writes) {
      if (id.first != static_cast<int>(entry->family)) continue;
      std::string_view name = impl.family(entry->family).specs[id.second]->name;
      if (std::find(entry->keys.begin(), entry->keys.end(), name) != entry->keys.end()) touched = true;
    }
    if (touched) entry->validator(get);
  }
}

static Validated ValidateCall(const Store::Impl& impl, Family family, const Dict& kwargs, bool for_override) {
  const FamilyState& state = impl.family(family);
  Validated out;
  PendingTransaction tx(impl, impl.profile.load(), for_override, &out.warnings);
  // Resolve every key first: an unknown key fails the call before any work.
  struct Item {
    int slot;
    const Value* value;
  };
  std::vector<Item> items;
  for (const auto& [key, value] : kwargs) {
    items.push_back({impl.ResolvePublic(family, key, /*is_set=*/true, &out.warnings), &value});
  }
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    return state.specs[a.slot]->order < state.specs[b.slot]->order;
  });
  Profile profile = impl.profile.load();
  struct Preparation {
    const OptionSpec* spec;
    Value stored;
  };
  std::vector<Preparation> preparations;
  for (const Item& item : items) {
    const OptionSpec& spec = *state.specs[item.slot];
    KeyEnv env(family, spec.name, state.table->set_function, tx, &out.warnings);
    const Deprecation& dep = spec.deprecation;
    bool ignored_by_deprecation =
        dep.action == DeprecationAction::kWarnAndIgnore && profile >= dep.since;
    bool ignored_by_device = !(spec.devices & MaskOf(tx.device()));
    if (ignored_by_deprecation || ignored_by_device) {
      // As MindSpore's type check runs before its filters: a wrong type is
      // an error even for a key that is then ignored; a bad value only warns.
      try {
        Warnings discarded;
        KeyEnv probe(family, spec.name, state.table->set_function, tx, &discarded);
        spec.parse(*item.value, probe);
      } catch (const TypeError&) {
        throw;
      } catch (const Error&) {
      }
    }
    if (dep.action != DeprecationAction::kNone && profile >= dep.since) {
      bool ignore = dep.action == DeprecationAction::kWarnAndIgnore;
      env.Warn(WarningKind::kDeprecated,
               StrCat("For '", state.table->set_function, "', the argument '", spec.name, "' is deprecated since ",
                      ProfileName(dep.since), ignore ? " and is ignored." : ".",
                      dep.advice.empty() ? "" : " ", dep.advice));
      if (ignore) continue;
    }
    DeviceTarget device = tx.device();
    if (!(spec.devices & MaskOf(device))) {
      env.Warn(WarningKind::kNotApplicable, DeviceNotApplicableMessage(*state.table, spec.name, spec, device));
      continue;
    }
    MSRT_INTERNAL_ASSERT(spec.parse != nullptr, "context key '", spec.name, "' has no parser");
    Value stored = spec.parse(*item.value, env);
    if (spec.prepare) preparations.push_back({&spec, stored});
    if (spec.apply) {
      spec.apply(stored, tx, env);
    } else {
      tx.Write(family, spec.name, std::move(stored));
    }
  }
  out.writes = tx.writes();
  CheckFrozen(impl, out.writes, state.table->set_function, for_override ? Source::kOverride : Source::kApi);
  RunValidators(impl, out.writes, tx);
  // Side effects last (Note [A failed call changes nothing]): undone in
  // reverse when a later one fails.
  std::vector<std::function<void()>> undo;
  try {
    for (const Preparation& p : preparations) {
      KeyEnv env(family, p.spec->name, state.table->set_function, tx, &out.warnings);
      if (auto u = p.spec->prepare(p.stored, env)) undo.push_back(std::move(u));
    }
  } catch (...) {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) (*it)();
    throw;
  }
  return out;
}

namespace {

struct CommitResult {
  std::array<std::vector<std::string>, kFamilyCount> changed;
};

CommitResult Commit(Store::Impl& impl, const std::map<SlotId, Value>& writes, Source source) {
  CommitResult result;
  ThreadValues* thread_values = nullptr;
  {
    std::unique_lock lock(impl.state_mutex);
    for (const auto& [id, value] : writes) {
      FamilyState& state = impl.families[id.first];
      const OptionSpec& spec = *state.specs[id.second];
      Slot& slot = state.slots[id.second];
      if (spec.scope == Scope::kThread) {
        if (thread_values == nullptr) thread_values = ThreadValuesFor(impl.id, true);
        auto existing = thread_values->values.find(id);
        bool changed = existing != thread_values->values.end()
                           ? !(existing->second.value == value)
                           : !(impl.DefaultFor(spec, impl.profile.load()) == value);
        thread_values->values[id] = ThreadValue{value, source};
        if (changed) result.changed[id.first].emplace_back(spec.name);
        continue;
      }
      bool changed = !(slot.value == value);
      slot.value = value;
      // A loaded value equal to its default stays "default", so profile
      // switches and environment defaults keep applying to it.
      slot.source = (source == Source::kLoad && value == impl.DefaultFor(spec, impl.profile.load()))
                        ? Source::kDefault
                        : source;
      if (state.fast[id.second]) state.fast_bits[id.second].store(ScalarBits(value), std::memory_order_release);
      if (changed) result.changed[id.first].emplace_back(spec.name);
    }
  }
  for (const auto& [id, value] : writes) {
    if (impl.families[id.first].specs[id.second]->affects_compile) {
      std::lock_guard hash_lock(impl.hash_mutex);
      impl.compile_hash_valid = false;
      break;
    }
  }
  return result;
}

void Notify(Store::Impl& impl, const CommitResult& result) {
  std::vector<std::shared_ptr<Subscription::Entry>> entries;
  {
    std::lock_guard lock(impl.subscribers_mutex);
    std::erase_if(impl.subscribers, [](const auto& e) { return !e->active; });
    entries = impl.subscribers;
  }
  // Cleared however the loop ends, so this thread can set the context again.
  struct NotifyingScope {
    NotifyingScope() { t_notifying = true; }
    ~NotifyingScope() { t_notifying = false; }
  } notifying;
  for (const auto& entry : entries) {
    const auto& changed = result.changed[static_cast<int>(entry->family)];
    Change change{entry->family, {}};
    for (const std::string& key : changed) {
      if (std::find(entry->keys.begin(), entry->keys.end(), key) != entry->keys.end()) change.keys.push_back(key);
    }
    if (change.keys.empty() || !entry->active || !entry->callback) continue;
    try {
      entry->callback(change);
    } catch (const std::exception& e) {
      MSRT_LOG(Error) << "context subscriber '" << entry->consumer << "' failed: " << e.what();
    } catch (...) {
      MSRT_LOG(Error) << "context subscriber '" << entry->consumer << "' failed with a non-standard exception";
    }
  }
}

void CommitAndNotify(Store::Impl& impl, const std::map<SlotId, Value>& writes, Source source) {
  DerivedValues before = ReadFollowedDerivedKeys(impl);
  CommitResult result = Commit(impl, writes, source);
  AddChangedDerivedKeys(impl, before, result.changed);
  Notify(impl, result);
}

void RefuseFromSubscriber() {
  if (t_notifying) {
    throw RuntimeError("The context can not be changed from inside a context subscriber callback.");
  }
}

}  // namespace

void Store::Set(Family family, const Dict& kwargs) {
  RefuseFromSubscriber();
  std::lock_guard write_lock(impl_->write_mutex);
  Validated v = ValidateCall(*impl_, family, kwargs, /*for_override=*/false);
  IssueWarnings(v.warnings);
  CommitAndNotify(*impl_, v.writes, Source::kApi);
}

void Store::Reset(Family family) {
  RefuseFromSubscriber();
  std::lock_guard write_lock(impl_->write_mutex);
  const FamilyState& state = impl_->family(family);
  std::map<SlotId, Value> writes;
  for (size_t slot = 0; slot < state.specs.size(); ++slot) {
    const OptionSpec& spec = *state.specs[slot];
    if (spec.kept_on_reset) continue;
    writes[{static_cast<int>(family), static_cast<int>(slot)}] = impl_->DefaultFor(spec, impl_->profile.load());
  }
  CheckFrozen(*impl_, writes, state.table->set_function, Source::kDefault);
  CommitAndNotify(*impl_, writes, Source::kDefault);
}

void Store::SetProfile(Profile profile) {
  RefuseFromSubscriber();
  std::lock_guard write_lock(impl_->write_mutex);
  std::map<SlotId, Value> writes;
  {
    std::shared_lock lock(impl_->state_mutex);
    for (int fi = 0; fi < kFamilyCount; ++fi) {
      const FamilyState& state = impl_->families[fi];
      for (size_t slot = 0; slot < state.specs.size(); ++slot) {
        if (state.slots[slot].source != Source::kDefault) continue;
        writes[{fi, static_cast<int>(slot)}] = impl_->DefaultFor(*state.specs[slot], profile);
      }
    }
  }
  CheckFrozen(*impl_, writes, "context.set_profile", Source::kDefault);
  impl_->profile = profile;
  // Per-thread keys follow their (new) default on every thread.
  std::erase_if(writes, [&](const auto& w) {
    return impl_->families[w.first.first].specs[w.first.second]->scope == Scope::kThread;
  });
  CommitAndNotify(*impl_, writes, Source::kDefault);
}

void Store::PushOverride(Family family, const Dict& kwargs) {
  RefuseFromSubscriber();
  std::lock_guard write_lock(impl_->write_mutex);
  Validated v = ValidateCall(*impl_, family, kwargs, /*for_override=*/true);
  IssueWarnings(v.warnings);
  t_frames.push_back(OverrideFrame{impl_->id, std::move(v.writes)});
}

void Store::PopOverride() {
  for (auto it = t_frames.rbegin(); it != t_frames.rend(); ++it) {
    if (it->store_id == impl_->id) {
      t_frames.erase(std::next(it).base());
      return;
    }
  }
  throw RuntimeError("context.override: there is no active override on this thread to end.");
}

// ---------------------------------------------------------------------------
// Store: the read path.

Value Store::Get(Family family, std::string_view key) const {
  Warnings warnings;
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, &warnings);
  const FamilyState& state = impl_->family(family);
  const OptionSpec& spec = *state.specs[slot];
  if (spec.devices != kAllDevices) {
    DeviceTarget device = impl_->CurrentDevice();
    if (!(spec.devices & MaskOf(device))) {
      warnings.emplace_back(WarningKind::kNotApplicable,
                            StrCat("For '", state.table->get_function, "', the argument '", spec.name,
                                   "' only applies on devices in ", DeviceMaskRepr(spec.devices),
                                   ", but the device target is '", DeviceTargetName(device), "'."));
    }
  }
  Value value = impl_->ReadPublic(family, slot, &warnings);
  IssueWarnings(warnings);
  return value;
}

Value Store::Effective(Family family, std::string_view key) const {
  Warnings warnings;
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, &warnings);
  Value value = impl_->ReadEffective(family, slot, &warnings).value;
  IssueWarnings(warnings);
  return value;
}

int Store::ResolveSlot(Family family, std::string_view key, ValueKind expected) const {
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, nullptr);
  const FamilyState& state = impl_->family(family);
  ValueKind kind;
  {
    std::shared_lock lock(impl_->state_mutex);
    kind = state.slots[slot].value.kind();
  }
  if (expected != ValueKind::kObject && kind != expected) {
    throw ValueError(StrCat("OptionRef: the context key '", key, "' holds ", KindName(kind), " values, not ",
                            KindName(expected), "."));
  }
  return slot;
}

Value Store::GetSlot(Family family, int slot) const {
  const FamilyState& state = impl_->family(family);
  if (state.fast[slot] && !ThreadHasState()) {
    uint64_t bits = state.fast_bits[slot].load(std::memory_order_acquire);
    switch (state.kinds[slot]) {  // the kind of a fast slot never changes
      case ValueKind::kBool: return Value(bits != 0);
      case ValueKind::kInt: return Value(static_cast<int64_t>(bits));
      default: {
        double d;
        std::memcpy(&d, &bits, sizeof(d));
        return Value(d);
      }
    }
  }
  Warnings warnings;
  Value v = impl_->ReadPublic(family, slot, &warnings);
  IssueWarnings(warnings);
  return v;
}

namespace {
// Compile-affecting keys overridden by environment variables (read on every
// call: the variables may change while the process runs).
uint64_t EnvironmentOverrideHash(const Store::Impl& impl) {
  uint64_t h = 0;
  for (const FamilyState& state : impl.families) {
    for (const OptionSpec* spec : state.specs) {
      if (!spec->affects_compile || spec->env.role != EnvRole::kOverride) continue;
      const char* text = std::getenv(std::string(spec->env.var).c_str());
      if (text == nullptr || text[0] == '\0') continue;
      h = (h ^ Value(std::string(spec->env.var) + "=" + text).StableHash()) * 1099511628211ull;
    }
  }
  return h;
}
}  // namespace

uint64_t Store::CompileKeyHash() const { return CompileKeyHashOfState() ^ EnvironmentOverrideHash(*impl_); }

uint64_t Store::CompileKeyHashOfState() const {
  if (!ThreadHasState()) {
    std::lock_guard hash_lock(impl_->hash_mutex);
    if (!impl_->compile_hash_valid) {
      impl_->compile_hash = impl_->ComputeCompileHash(false);
      impl_->compile_hash_valid = true;
    }
    return impl_->compile_hash;
  }
  return impl_->ComputeCompileHash(true);
}

// ---------------------------------------------------------------------------
// Snapshots.

Value Store::Snapshot() const {
  Dict out;
  out.Set("profile", Value(ProfileName(impl_->profile.load())));
  auto slots = impl_->CopySlots();  // all keys as one call left them, never half of a call
  for (int fi = 0; fi < kFamilyCount; ++fi) {
    const FamilyState& state = impl_->families[fi];
    Dict values;
    for (size_t slot = 0; slot < state.specs.size(); ++slot) {
      // This thread's own per-thread keys, but not its scoped overrides:
      // loading the snapshot later must not make an override permanent.
      bool per_thread = state.specs[slot]->scope == Scope::kThread;
      SlotRead r = impl_->Read(static_cast<Family>(fi), static_cast<int>(slot), /*with_thread=*/per_thread, nullptr,
                               &slots[fi][slot]);
      values.Set(std::string(state.specs[slot]->name), r.value);
    }
    out.Set(std::string(FamilyName(static_cast<Family>(fi))), Value(std::move(values)));
  }
  return Value(std::move(out));
}

void Store::Load(const Value& snapshot) {
  RefuseFromSubscriber();
  std::lock_guard write_lock(impl_->write_mutex);
  constexpr std::string_view kFunction = "context.load";
  if (!snapshot.is_dict()) {
    throw TypeError(StrCat("For '", kFunction, "', the snapshot must be a dict, but got ", snapshot.type_name(), "."));
  }
  Profile profile = impl_->profile.load();
  for (const auto& [name, value] : snapshot.as_dict()) {
    if (name == "profile") {
      if (!value.is_string()) {
        throw TypeError(StrCat("For '", kFunction, "', 'profile' must be str, but got ", value.type_name(), "."));
      }
      profile = ParseProfile(value.as_string());
      continue;
    }
    bool known = false;
    for (int fi = 0; fi < kFamilyCount; ++fi) known |= FamilyName(static_cast<Family>(fi)) == name;
    if (!known) {
      throw ValueError(StrCat("For '", kFunction, "', the snapshot holds an unknown section '", name,
                              "'; expected 'profile', 'context', 'auto_parallel_context' and 'ps_context'."));
    }
    if (!value.is_dict()) {
      throw TypeError(StrCat("For '", kFunction, "', the section '", name, "' must be a dict, but got ",
                             value.type_name(), "."));
    }
  }
  Warnings warnings;
  PendingTransaction tx(*impl_, profile, /*with_thread=*/false, &warnings);
  std::map<SlotId, Value> writes;
  for (int fi = 0; fi < kFamilyCount; ++fi) {
    auto family = static_cast<Family>(fi);
    const FamilyState& state = impl_->families[fi];
    // Keys the snapshot leaves out return to their defaults.
    for (size_t slot = 0; slot < state.specs.size(); ++slot) {
      writes[{fi, static_cast<int>(slot)}] = impl_->DefaultFor(*state.specs[slot], profile);
    }
    const Value* section = snapshot.as_dict().Find(FamilyName(family));
    if (section == nullptr) continue;
    for (const auto& [key, value] : section->as_dict()) {
      int slot = impl_->FindSlot(family, key);
      if (slot < 0) {
        throw ValueError(StrCat("For '", kFunction, "', the snapshot section '", FamilyName(family),
                                "' holds an unknown key '", key, "'."));
      }
      const OptionSpec& spec = *state.specs[slot];
      Value stored = value;
      // Every slot with a parser is validated in its stored form (hidden
      // slots too); the rest are restored by kind.
      if (spec.parse) {
        KeyEnv env(family, spec.name, kFunction, tx, &warnings);
        env.loading = true;
        stored = spec.parse(value, env);
      } else if (!KindMatchesForLoad(value, writes[{fi, slot}])) {
        throw TypeError(StrCat("For '", kFunction, "', the snapshot value of '", key, "' must be ",
                               KindName(writes[{fi, slot}].kind()), ", but got ", value.type_name(), "."));
      }
      if (writes[{fi, slot}].is_float() && stored.is_int()) stored = Value(stored.as_float());
      writes[{fi, slot}] = std::move(stored);
      tx.Write(family, key, writes[{fi, slot}]);
    }
  }
  CheckFrozen(*impl_, writes, kFunction, Source::kLoad);
  IssueWarnings(warnings);
  impl_->profile = profile;
  CommitAndNotify(*impl_, writes, Source::kLoad);
}

// ---------------------------------------------------------------------------

Store& Global() {
  static Store* store = new Store();  // never destroyed: threads may read at exit
  return *store;
}

ScopedOverride::ScopedOverride(Family family, const Dict& kwargs, Store& store) : store_(&store) {
  store.PushOverride(family, kwargs);
}

ScopedOverride::~ScopedOverride() {
  try {
    store_->PopOverride();
  } catch (const std::exception& e) {
    MSRT_LOG(Error) << e.what();
  }
}

}  // namespace msrt::context

namespace msrt {

using context::Family;
void SetContext(const Dict& kwargs) { context::Global().Set(Family::kRuntime, kwargs); }
Value GetContext(std::string_view key) { return context::Global().Get(Family::kRuntime, key); }
void SetAutoParallelContext(const Dict& kwargs) { context::Global().Set(Family::kAutoParallel, kwargs); }
Value GetAutoParallelContext(std::string_view key) { return context::Global().Get(Family::kAutoParallel, key); }
void ResetAutoParallelContext() { context::Global().Reset(Family::kAutoParallel); }
void SetPsContext(const Dict& kwargs) { context::Global().Set(Family::kParameterServer, kwargs); }
Value GetPsContext(std::string_view key) { return context::Global().Get(Family::kParameterServer, key); }
void ResetPsContext() { context::Global().Reset(Family::kParameterServer); }

}  // namespace msrt
