// The offload context: set_offload_context(offload_config) /
// get_offload_context(), MindSpore's settings of heterogeneous training
// (parameters and activations moved between device memory, host memory and
// disk). msrt does not offload yet: every key is checked and stored, and
// setting one warns that it has no effect (docs/context.md).
#include <string>

#include "context/option_spec.h"

namespace msrt::context {
namespace {

constexpr Family kFamily = Family::kOffload;

/// Every key is kept; nothing acts on it yet.
Parser Stored(Parser parse) { return StoredWithoutEffect(std::move(parse), "offload memory"); }

/// "xxGB", kept as written ("" from a snapshot: unset).
Value ParseGbString(const Value& in, const KeyEnv& env) {
  if (!in.is_string()) env.FailType("str", in);
  if (env.loading && in.as_string().empty()) return in;
  ParseGbText(in.as_string(), /*integer=*/false, env);  // raises on a bad form
  return in;
}

/// "cpu" or "disk" ("" from a snapshot: unset).
Parser ParsePlace() { return OrUnsetWhenLoading(ParseStringChoice({"cpu", "disk"})); }

/// A positive int (0 from a snapshot: unset).
Value ParseQueueSize(const Value& in, const KeyEnv& env) {
  static const Parser positive = ParseIntRange(1, INT64_MAX, /*allow_bool=*/false);
  if (env.loading && in.is_int() && in.as_int() == 0) return in;
  return positive(in, env);
}

}  // namespace

const FamilyTable& OffloadTable() {
  static const FamilyTable table{
      .family = kFamily,
      .set_function = "context.set_offload_context",
      .get_function = "context.get_offload_context",
      .options =
          {
              {.name = "offload_path",
               .type = "str",
               .default_value = Value("./offload"),
               .parse = Stored(ParsePath()),
               .doc = "Folder for data offloaded to disk (a relative path is taken from the working "
                      "directory)."},
              {.name = "offload_cpu_size",
               .type = "str",
               .default_value = Value(""),
               .parse = Stored(ParseGbString),
               .doc = "Host memory offloading may use, \"xxGB\"; unset by default."},
              {.name = "offload_disk_size",
               .type = "str",
               .default_value = Value(""),
               .parse = Stored(ParseGbString),
               .doc = "Disk space offloading may use, \"xxGB\"; unset by default."},
              {.name = "hbm_ratio",
               .type = "float",
               .default_value = Value(1.0),
               .parse = Stored(ParseUnitInterval()),
               .doc = "Share of max_device_memory the offload strategy may use, in (0, 1]."},
              {.name = "cpu_ratio",
               .type = "float",
               .default_value = Value(1.0),
               .parse = Stored(ParseUnitInterval()),
               .doc = "Share of offload_cpu_size the offload strategy may use, in (0, 1]."},
              {.name = "enable_pinned_mem",
               .type = "bool",
               .default_value = Value(true),
               .parse = Stored(ParseBool()),
               .doc = "Pinned host memory, for faster device-host copies."},
              {.name = "enable_aio",
               .type = "bool",
               .default_value = Value(true),
               .parse = Stored(ParseBool()),
               .doc = "Asynchronous I/O for host-disk copies."},
              {.name = "aio_block_size",
               .type = "str",
               .default_value = Value(""),
               .parse = Stored(ParseGbString),
               .doc = "Block size of asynchronous I/O, \"xxGB\"; unset by default."},
              {.name = "aio_queue_size",
               .type = "int",
               .default_value = Value(int64_t{0}),
               .parse = Stored(ParseQueueSize),
               .doc = "Depth of the asynchronous I/O queue; 0 (unset) by default."},
              {.name = "offload_param",
               .type = "str",
               .default_value = Value(""),
               .parse = Stored(ParsePlace()),
               .doc = R"(Where parameters start: "cpu" or "disk"; unset by default.)"},
              {.name = "offload_checkpoint",
               .type = "str",
               .default_value = Value(""),
               .parse = Stored(ParsePlace()),
               .doc = R"(Where recomputation checkpoints go: "cpu" or "disk"; unset by default.)"},
              {.name = "auto_offload",
               .type = "bool",
               .default_value = Value(true),
               .parse = Stored(ParseBool()),
               .doc = "Let the offload strategy be generated (False: offload_param forces it)."},
              {.name = "host_mem_block_size",
               .type = "str",
               .default_value = Value(""),
               .parse = Stored(ParseGbString),
               .doc = "Block size of the host memory pool, \"xxGB\"; unset by default."},
          },
      .unknown_key =
          [](Profile, bool, std::string_view key) {
            return StrCat("For 'context.set_offload_context', the key '", key,
                          "' is not an attribute of offload_config.");
          },
  };
  return table;
}

}  // namespace msrt::context
