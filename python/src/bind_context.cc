// The four contexts. Every key goes through the same generic calls: the
// binding knows no key by name (DESIGN.md, "one declaration per option").
#include <pybind11/stl.h>

#include "bindings.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"

namespace msrt::python {
namespace {

using context::Family;

Family FamilyFromName(const std::string& name) {
  for (int i = 0; i < context::kFamilyCount; ++i) {
    auto family = static_cast<Family>(i);
    if (context::FamilyName(family) == name) return family;
  }
  throw ValueError(
      "unknown context family '" + name +
      "'; expected 'context', 'auto_parallel_context', 'ps_context', 'offload_context' or 'algo_parameters'.");
}

py::dict OptionInfoToDict(const context::OptionInfo& info) {
  auto devices = [](DeviceMask mask) {
    py::list out;
    for (DeviceTarget t : {DeviceTarget::kCPU, DeviceTarget::kGPU, DeviceTarget::kAscend}) {
      if (mask & MaskOf(t)) out.append(std::string(DeviceTargetName(t)));
    }
    return out;
  };
  py::dict d;
  d["family"] = std::string(context::FamilyName(info.family));
  d["name"] = info.name;
  d["type"] = info.type;
  d["default"] = FromValue(info.default_value);
  d["doc"] = info.doc;
  d["devices"] = devices(info.devices);
  d["mindspore_devices"] = devices(info.mindspore_devices);
  d["device_note"] = info.device_note;
  d["affects_compile"] = info.affects_compile;
  d["freezes"] = info.freezes;
  d["per_thread"] = info.per_thread;
  d["env_var"] = info.env_var;
  d["env_role"] = info.env_role;
  d["aliases"] = info.aliases;
  d["deprecated_since"] = info.deprecated_since;
  d["deprecation_action"] = info.deprecation_action;
  return d;
}

}  // namespace

void BindContext(py::module_& m) {
  // set_*/get_*/reset_* for each family, named as MindSpore names them.
  struct Names {
    Family family;
    const char* set;
    const char* get;
    const char* reset;
  };
  for (const Names& n : {Names{Family::kRuntime, "set_context", "get_context", nullptr},
                         Names{Family::kAutoParallel, "set_auto_parallel_context", "get_auto_parallel_context",
                               "reset_auto_parallel_context"},
                         Names{Family::kParameterServer, "set_ps_context", "get_ps_context", "reset_ps_context"},
                         Names{Family::kAlgo, "set_algo_parameters", "get_algo_parameters", "reset_algo_parameters"}}) {
    Family family = n.family;
    m.def(
        n.set, [family](const py::kwargs& kwargs) { context::Global().Set(family, ToDict(kwargs)); },
        "Validates every key, then stores them all at once; on any error nothing changes.");
    m.def(
        n.get, [family](const std::string& attr_key) { return FromValue(context::Global().Get(family, attr_key)); },
        py::arg("attr_key"), "The value of one key.");
    if (n.reset != nullptr) {
      m.def(
          n.reset, [family] { context::Global().Reset(family); }, "Restores the defaults.");
    }
  }

  // MindSpore's offload context takes and gives one dict.
  m.def(
      "set_offload_context",
      [](py::handle offload_config) {
        if (!py::isinstance<py::dict>(offload_config)) {
          throw TypeError(
              StrCat("For 'context.set_offload_context', the argument 'offload_config' must be dict, but "
                     "got ",
                     std::string(py::str(offload_config.get_type().attr("__name__"))), "."));
        }
        context::Global().Set(Family::kOffload, ToDict(offload_config.cast<py::dict>()));
      },
      py::arg("offload_config"), "Validates every key, then stores them all at once; on any error nothing changes.");
  m.def("get_offload_context", [] {
    py::dict out;
    for (const auto& info : context::Global().Options(Family::kOffload)) {
      out[py::str(info.name)] = FromValue(context::Global().Get(Family::kOffload, info.name));
    }
    return out;
  });
  m.def("family_of", [](const std::string& key) -> py::object {
    for (int i = 0; i < context::kFamilyCount; ++i) {
      auto family = static_cast<Family>(i);
      for (const auto& info : context::Global().Options(family)) {
        if (info.name == key) return py::str(std::string(context::FamilyName(family)));
        for (const auto& alias : info.aliases) {
          if (alias == key) return py::str(std::string(context::FamilyName(family)));
        }
      }
    }
    return py::none();
  });
  m.def("options", [](const std::string& family) {
    py::list out;
    for (const auto& info : context::Global().Options(FamilyFromName(family))) out.append(OptionInfoToDict(info));
    return out;
  });
  m.def("explain", [](const std::string& family, const std::string& key) {
    context::Explanation e = context::Global().Explain(FamilyFromName(family), key);
    return py::make_tuple(FromValue(Value(e.ToDict())), e.ToString());
  });
  m.def("effective", [](const std::string& family, const std::string& key) {
    return FromValue(context::Global().Effective(FamilyFromName(family), key));
  });
  m.def(
      "summary", [](bool all) { return context::Global().Summary(all); }, py::arg("all") = false);
  m.def("snapshot", [] { return FromValue(context::Global().Snapshot()); });
  m.def("load", [](py::handle snapshot) { context::Global().Load(ToValue(snapshot)); });
  m.def("push_override", [](const std::string& family, py::dict kwargs) {
    context::Global().PushOverride(FamilyFromName(family), ToDict(kwargs));
  });
  m.def("pop_override", [] { context::Global().PopOverride(); });
  m.def("set_profile", [](const std::string& name) { context::Global().SetProfile(context::ParseProfile(name)); });
  m.def("get_profile", [] { return std::string(context::ProfileName(context::Global().profile())); });
  m.def("mark_in_effect", [](const std::string& family, const std::string& key, const std::string& reason) {
    context::Global().MarkInEffect(FamilyFromName(family), key, reason);
  });
  m.def("is_in_effect", [](const std::string& family, const std::string& key) {
    return context::Global().IsInEffect(FamilyFromName(family), key);
  });
  m.def("declare_consumer", [](const std::string& family, const std::string& key, const std::string& consumer) {
    context::Global().DeclareConsumer(FamilyFromName(family), key, consumer);
  });
  m.def("compile_key_hash", [] { return context::Global().CompileKeyHash(); });
}

}  // namespace msrt::python
