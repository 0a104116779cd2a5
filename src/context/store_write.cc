// The context store's write path: validating a call into a transaction,
// committing it and notifying subscribers (Note [Context transactions] in
// store.cc), and snapshots.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "context/store_impl.h"
#include "core/strings.h"

namespace msrt::context {

using namespace store_detail;  // NOLINT: the store's own internals

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
    bool ignored_by_deprecation = dep.action == DeprecationAction::kWarnAndIgnore && profile >= dep.since;
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
                      ProfileName(dep.since), ignore ? " and is ignored." : ".", dep.advice.empty() ? "" : " ",
                      dep.advice));
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
                           : !(Store::Impl::DefaultFor(spec, impl.profile.load()) == value);
        thread_values->values[id] = ThreadValue{value, source};
        if (changed) result.changed[id.first].emplace_back(spec.name);
        continue;
      }
      bool changed = !(slot.value == value);
      slot.value = value;
      // A loaded value equal to its default stays "default", so profile
      // switches and environment defaults keep applying to it.
      slot.source = (source == Source::kLoad && value == Store::Impl::DefaultFor(spec, impl.profile.load()))
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
  // Keys a live validator holds (AddValidator's reset_values) go back to its values.
  {
    std::lock_guard lock(impl_->subscribers_mutex);
    for (const auto& e : impl_->subscribers) {
      if (!e->active || e->family != family) continue;
      for (const auto& [key, value] : e->reset_values) {
        for (size_t slot = 0; slot < state.specs.size(); ++slot) {
          if (state.specs[slot]->name == key) writes[{static_cast<int>(family), static_cast<int>(slot)}] = value;
        }
      }
    }
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
  g_thread_state_used.store(true, std::memory_order_relaxed);
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
      throw TypeError(
          StrCat("For '", kFunction, "', the section '", name, "' must be a dict, but got ", value.type_name(), "."));
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

}  // namespace msrt::context
