// Describing keys to people: options(), explain(key) and summary().
#include <algorithm>

#include "context/store_impl.h"

namespace msrt::context {

std::string_view FamilyName(Family family) {
  switch (family) {
    case Family::kRuntime: return "context";
    case Family::kAutoParallel: return "auto_parallel_context";
    case Family::kParameterServer: return "ps_context";
    case Family::kOffload: return "offload_context";
    case Family::kAlgo: return "algo_parameters";
  }
  return "context";
}

std::string_view ProfileName(Profile profile) {
  switch (profile) {
    case Profile::kR0_5: return "r0.5";
    case Profile::kR1_0: return "r1.0";
    case Profile::kR1_6: return "r1.6";
    case Profile::kR2_3: return "r2.3";
  }
  return "r2.3";
}

Profile ParseProfile(std::string_view name) {
  for (int i = 0; i < kProfileCount; ++i) {
    auto p = static_cast<Profile>(i);
    if (ProfileName(p) == name) return p;
  }
  throw ValueError(
      StrCat("The context profile must be one of ['r0.5', 'r1.0', 'r1.6', 'r2.3'], but got '", name, "'."));
}

std::string_view SourceName(Source source) {
  switch (source) {
    case Source::kDefault: return "default";
    case Source::kEnvironment: return "environment";
    case Source::kApi: return "api";
    case Source::kOverride: return "override";
    case Source::kLoad: return "load";
    case Source::kDerived: return "derived";
  }
  return "default";
}

OptionInfo MakeOptionInfo(const FamilyState& state, const OptionSpec& spec, Value default_value) {
  OptionInfo info;
  info.family = state.table->family;
  info.name = std::string(spec.name);
  info.type = std::string(spec.type);
  info.default_value = std::move(default_value);
  info.doc = std::string(spec.doc);
  info.devices = spec.devices;
  info.mindspore_devices = spec.mindspore_devices;
  info.device_note = std::string(spec.device_note);
  info.affects_compile = spec.affects_compile;
  info.freezes = spec.freeze == Freeze::kOnceInEffect;
  info.per_thread = spec.scope == Scope::kThread;
  info.env_var = std::string(spec.env.var);
  info.env_role = spec.env.role == EnvRole::kDefault    ? "default"
                  : spec.env.role == EnvRole::kOverride ? "override"
                                                        : "";
  for (const Alias& alias : spec.aliases) info.aliases.emplace_back(alias.name);
  if (spec.deprecation.action != DeprecationAction::kNone) {
    info.deprecated_since = std::string(ProfileName(spec.deprecation.since));
    info.deprecation_action = spec.deprecation.action == DeprecationAction::kWarnAndIgnore ? "ignored" : "applied";
  }
  return info;
}

std::vector<OptionInfo> Store::Options(Family family) const {
  const FamilyState& state = impl_->family(family);
  std::vector<OptionInfo> out;
  for (const OptionSpec* spec : state.specs) {
    if (spec->visibility != Visibility::kPublic) continue;
    out.push_back(MakeOptionInfo(state, *spec, Impl::DefaultFor(*spec, impl_->profile.load())));
  }
  return out;
}

Explanation Store::Explain(Family family, std::string_view key) const {
  Warnings warnings;
  int slot = impl_->ResolvePublic(family, key, /*is_set=*/false, nullptr);
  const FamilyState& state = impl_->family(family);
  const OptionSpec& spec = *state.specs[slot];
  Explanation out;
  out.info = MakeOptionInfo(state, spec, Impl::DefaultFor(spec, impl_->profile.load()));
  SlotRead read = impl_->Read(family, slot, /*with_thread=*/true, &warnings);
  out.requested = impl_->ReadPublic(family, slot, &warnings);
  SlotRead effective = impl_->ReadEffective(family, slot, &warnings);
  out.effective = effective.value;
  out.source = effective.source == Source::kEnvironment ? effective.source : read.source;
  out.source_detail = effective.source == Source::kEnvironment ? effective.detail : read.detail;
  if (spec.read) {
    out.source = Source::kDerived;
    out.source_detail = "computed from other keys";
  }
  DeviceTarget device = impl_->CurrentDevice();
  out.applies = (spec.devices & MaskOf(device)) != 0;
  if (!out.applies) {
    out.applies_reason = StrCat("msrt uses '", spec.name, "' only on ", DeviceMaskRepr(spec.devices),
                                "; the device target is '", DeviceTargetName(device), "'");
  } else if (spec.devices != spec.mindspore_devices) {
    out.applies_reason = std::string(spec.device_note);
  }
  {
    std::shared_lock lock(impl_->state_mutex);
    const Slot& s = state.slots[slot];
    out.frozen = s.in_effect && spec.freeze == Freeze::kOnceInEffect;
    if (s.in_effect) out.frozen_reason = s.in_effect_reason;
  }
  out.consumers = impl_->ConsumersOf(family, spec.name);
  for (const auto& [kind, message] : warnings) Warn(kind, message);
  return out;
}

Dict Explanation::ToDict() const {
  List aliases;
  for (const auto& a : info.aliases) aliases.emplace_back(a);
  List consumers_list;
  for (const auto& c : consumers) consumers_list.emplace_back(c);
  auto devices = [](DeviceMask mask) {
    List out;
    for (DeviceTarget t : {DeviceTarget::kCPU, DeviceTarget::kGPU, DeviceTarget::kAscend}) {
      if (mask & MaskOf(t)) out.emplace_back(DeviceTargetName(t));
    }
    return Value(std::move(out));
  };
  Dict d;
  d.Set("key", Value(info.name));
  d.Set("family", Value(FamilyName(info.family)));
  d.Set("type", Value(info.type));
  d.Set("requested", requested);
  d.Set("effective", effective);
  d.Set("default", info.default_value);
  d.Set("source", Value(SourceName(source)));
  d.Set("source_detail", Value(source_detail));
  d.Set("applies", Value(applies));
  d.Set("applies_reason", Value(applies_reason));
  d.Set("devices", devices(info.devices));
  d.Set("mindspore_devices", devices(info.mindspore_devices));
  d.Set("frozen", Value(frozen));
  d.Set("frozen_reason", Value(frozen_reason));
  d.Set("affects_compile", Value(info.affects_compile));
  d.Set("per_thread", Value(info.per_thread));
  d.Set("env_var", Value(info.env_var));
  d.Set("env_role", Value(info.env_role));
  d.Set("aliases", Value(std::move(aliases)));
  d.Set("deprecated_since", Value(info.deprecated_since));
  d.Set("consumers", Value(std::move(consumers_list)));
  d.Set("doc", Value(info.doc));
  return d;
}

std::string Explanation::ToString() const {
  std::string out = StrCat(FamilyName(info.family), ".", info.name, " (", info.type, "): ", info.doc, "\n");
  out += StrCat("  requested: ", requested.repr(), "  [", SourceName(source), source_detail.empty() ? "" : ": ",
                source_detail, "]\n");
  if (effective != requested) out += StrCat("  effective: ", effective.repr(), "\n");
  out += StrCat("  default:   ", info.default_value.repr(), "\n");
  out += StrCat("  applies:   ", applies ? "yes" : "no", applies_reason.empty() ? "" : " — ", applies_reason, "\n");
  if (frozen) out += StrCat("  frozen:    yes — in effect since ", frozen_reason, "\n");
  if (!info.env_var.empty()) out += StrCat("  env:       ", info.env_var, " (", info.env_role, ")\n");
  if (!info.deprecated_since.empty()) {
    out += StrCat("  deprecated since ", info.deprecated_since, " (", info.deprecation_action, ")\n");
  }
  if (info.affects_compile) out += "  changing it recompiles graphs\n";
  if (!consumers.empty()) {
    out += "  used by:   ";
    for (size_t i = 0; i < consumers.size(); ++i) out += (i ? ", " : "") + consumers[i];
    out += "\n";
  }
  return out;
}

std::string Store::Summary(bool all) const {
  Warnings ignored;
  std::string out = StrCat("msrt context (profile ", ProfileName(impl_->profile.load()), ", device ",
                           DeviceTargetName(impl_->CurrentDevice()), ")\n");
  struct Row {
    std::string key, value, source, note;
  };
  std::vector<Row> rows;
  for (int fi = 0; fi < kFamilyCount; ++fi) {
    auto family = static_cast<Family>(fi);
    const FamilyState& state = impl_->families[fi];
    for (size_t slot = 0; slot < state.specs.size(); ++slot) {
      const OptionSpec& spec = *state.specs[slot];
      if (spec.visibility != Visibility::kPublic) continue;
      int s = static_cast<int>(slot);
      SlotRead read = impl_->Read(family, s, true, &ignored);
      SlotRead effective = read;
      try {
        effective = impl_->ReadEffective(family, s, &ignored);
      } catch (const Error&) {
        // A bad environment override: shown by explain(key), not here.
      }
      bool in_effect;
      {
        std::shared_lock lock(impl_->state_mutex);
        in_effect = state.slots[slot].in_effect;
      }
      bool differs = effective.value != read.value && !spec.read;
      bool applies = (spec.devices & MaskOf(impl_->CurrentDevice())) != 0;
      if (!(all || spec.in_summary || read.source != Source::kDefault || in_effect || differs)) continue;
      Row row;
      row.key = fi == 0 ? std::string(spec.name) : StrCat(FamilyName(family), ".", spec.name);
      try {
        row.value = impl_->ReadPublic(family, s, &ignored).repr();
      } catch (const Error& e) {
        row.value = StrCat("<", ErrorKindName(e.kind()), ">");
      }
      if (row.value.size() > 48) row.value = row.value.substr(0, 45) + "...";
      row.source = std::string(SourceName(differs ? effective.source : read.source));
      std::vector<std::string> notes;
      if (differs) notes.push_back(StrCat("effective ", effective.value.repr(), " (", effective.detail, ")"));
      if (!read.detail.empty() && !differs) notes.push_back(read.detail);
      if (in_effect && spec.freeze == Freeze::kOnceInEffect) notes.emplace_back("frozen");
      if (!applies) notes.emplace_back("not used on this device");
      for (size_t i = 0; i < notes.size(); ++i) row.note += (i ? "; " : "") + notes[i];
      rows.push_back(std::move(row));
    }
  }
  size_t key_width = 3, value_width = 5, source_width = 6;
  for (const Row& r : rows) {
    key_width = std::max(key_width, r.key.size());
    value_width = std::max(value_width, r.value.size());
    source_width = std::max(source_width, r.source.size());
  }
  auto pad = [](const std::string& s, size_t width) { return s + std::string(width - std::min(width, s.size()), ' '); };
  out += "  " + pad("key", key_width) + "  " + pad("value", value_width) + "  " + pad("source", source_width) +
         "  note\n";
  for (const Row& r : rows) {
    std::string line = "  " + pad(r.key, key_width) + "  " + pad(r.value, value_width) + "  " +
                       pad(r.source, source_width) + "  " + r.note;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace msrt::context
