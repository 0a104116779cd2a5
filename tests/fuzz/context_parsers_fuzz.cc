// libFuzzer target over the context's value parsers: "xxGB" sizes,
// graph_kernel_flags, env_config JSON, comm_fusion and the other structured
// auto-parallel values. The first input byte picks the parser.
//
// Properties checked on every input:
//   - nothing crashes and only msrt::Error escapes a parser;
//   - a rejected call leaves the whole context exactly as it was;
//   - an accepted size is a positive number read from text that ends in "GB".
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "context/env_config.h"
#include "context/graph_kernel_flags.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"

namespace {

using msrt::Dict;
using msrt::List;
using msrt::Value;
using msrt::context::Family;

Value FromJson(const nlohmann::json& j, int depth = 0) {
  if (depth > 16) return Value();
  switch (j.type()) {
    case nlohmann::json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return Value(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      List items;
      for (const auto& item : j) items.push_back(FromJson(item, depth + 1));
      // Arrays whose first element is the string "tuple" become tuples.
      if (!items.empty() && items[0] == Value("tuple")) {
        items.erase(items.begin());
        return Value::Tuple(std::move(items));
      }
      return Value(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (const auto& [k, v] : j.items()) d.Set(k, FromJson(v, depth + 1));
      return Value(std::move(d));
    }
    default: return Value();
  }
}

void SilentWarnings(msrt::WarningKind, const std::string&) {}

// Sets one key; on rejection the store must be unchanged.
void TrySet(msrt::context::Store& store, Family family, const char* key, const Value& value) {
  Value before = store.Snapshot();
  try {
    store.Set(family, Dict{{key, value}});
  } catch (const msrt::Error&) {
    if (!(store.Snapshot() == before)) std::abort();  // a failed call changed state
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool init = [] {
    msrt::SetWarningSink(&SilentWarnings);
    msrt::SetLogLevel(msrt::LogLevel::kError);
    return true;
  }();
  (void)init;
  if (size == 0) return 0;
  uint8_t selector = data[0] % 6;
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  static msrt::context::Store store;
  switch (selector) {
    case 0: {
      try {
        store.Set(Family::kRuntime, Dict{{"max_device_memory", Value(text)}});
        double gb = store.Get(Family::kRuntime, "max_device_memory").as_float();
        if (!(gb > 0) || text.size() < 3 || text.substr(text.size() - 2) != "GB") std::abort();
      } catch (const msrt::Error&) {
      }
      TrySet(store, Family::kRuntime, "variable_memory_max_size", Value(text));
      TrySet(store, Family::kRuntime, "mempool_block_size", Value(text));
      break;
    }
    case 1: {
      std::vector<std::string> warnings;
      try {
        msrt::context::ParseGraphKernelFlags(text, true, true, &warnings);
        msrt::context::ParseGraphKernelFlags(text, false, false, &warnings);
      } catch (const msrt::Error&) {
      }
      TrySet(store, Family::kRuntime, "graph_kernel_flags", Value(text));
      break;
    }
    case 2: {
      try {
        msrt::context::ParseEnvConfigJson(text, "fuzz.json");
      } catch (const msrt::Error&) {
      }
      TrySet(store, Family::kRuntime, "profiling_options", Value(text));
      break;
    }
    default: {
      auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (json.is_discarded()) return 0;
      Value value = FromJson(json);
      static const char* const kKeys[] = {"comm_fusion", "all_reduce_fusion_config", "dataset_strategy",
                                          "parallel_optimizer_config", "strategy_ckpt_config"};
      TrySet(store, Family::kAutoParallel, kKeys[(selector - 3 + (size > 1 ? data[1] : 0)) % 5], value);
      TrySet(store, Family::kRuntime, "ascend_config", value);
      TrySet(store, Family::kRuntime, "gpu_config", value);
      break;
    }
  }
  return 0;
}
