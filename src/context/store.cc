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

using namespace store_detail;  // NOLINT: the store's own internals

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
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
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
                                    ProfileName(info->deprecated_since), "; use '", state.specs[slot]->name,
                                    "' instead."));
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

Value Store::Impl::DefaultFor(const OptionSpec& spec, Profile p) {
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
  const FamilyTable* tables[kFamilyCount] = {&RuntimeTable(), &AutoParallelTable(), &ParameterServerTable(),
                                             &OffloadTable(), &AlgoTable()};
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
      state.fast.push_back(scalar && spec.scope == Scope::kProcess && spec.env.role == EnvRole::kNone && !spec.read);
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

// Asks about this store's reads (answered conservatively from thread state shared by all stores): not static.
// NOLINTNEXTLINE(readability-convert-member-functions-to-static)
bool Store::ThreadHasOverrides() const { return ThreadHasState(); }

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
