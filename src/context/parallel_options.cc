// The auto-parallel context: set_auto_parallel_context / get_auto_parallel_context.
//
// One record per key (spec §3, r2.3-era rules). Keys that are views of other
// state (dataset_strategy, strategy_ckpt_config, comm_fusion,
// all_reduce_fusion_config) write hidden "_" slots from their `apply` and
// assemble what get returns in their `read`; see Note [Communication fusion].
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include "context/option_spec.h"
#include "context/options.h"
#include "core/file_io.h"

namespace msrt::context {
namespace {

// Names of the records the runtime reads through typed handles (options.h;
// defined at the end of this file): spelled once, here.
namespace keys {
constexpr std::string_view kGlobalRank = "global_rank";
}  // namespace keys

constexpr Family kFamily = Family::kAutoParallel;

// ---------------------------------------------------------------------------
// Shared helpers.

/// The key's own slot; appliers that write more than their own slot still
/// write it, and write only it while a snapshot is being loaded (every
/// other slot comes from the snapshot itself).
void WriteOwn(const Value& stored, Transaction& tx, const KeyEnv& env) { tx.Write(env.family, env.key, stored); }

/// A copy of `env` that names a part of the key ("comm_fusion['allreduce']")
/// in messages. `name` must outlive the copy.
KeyEnv SubEnv(const KeyEnv& env, const std::string& name) {
  KeyEnv sub = env;
  sub.key = name;
  return sub;
}

std::string SubName(std::string_view key, std::string_view part) { return StrCat(key, "['", part, "']"); }

bool IsPynative(const View& view) {
  Value mode = view.Get(Family::kRuntime, "mode");
  return mode.is_int_like() && mode.as_int() == kPynativeMode;
}

/// A parameter-server server process reads some keys as if running alone.
bool IsPsServer(const View& view) {
  Value enabled = view.Get(Family::kParameterServer, "enable_ps");
  Value role = view.Get(Family::kParameterServer, "_role");
  return enabled.is_bool() && enabled.as_bool() && role.is_string() && role.as_string() == "MS_PSERVER";
}

bool SlotBool(const View& view, std::string_view key) {
  Value v = view.Get(kFamily, key);
  return v.is_bool() && v.as_bool();
}

/// Writes the key's own slot and raises `flag` (an "is set" slot).
Applier WriteAndMark(std::string_view flag) {
  return [flag](const Value& stored, Transaction& tx, const KeyEnv& env) {
    WriteOwn(stored, tx, env);
    if (!env.loading) tx.Write(kFamily, flag, Value(true));
  };
}

/// Checks that the parent directory of `file` exists or can be created; it
/// is created, as MindSpore does for files it will write at compile time,
/// by PrepareParentDirectory once the whole call is validated.
void CheckParentDirectory(const std::string& file, const KeyEnv& env) {
  std::string parent = std::filesystem::path(file).parent_path().string();
  if (parent.empty()) return;
  if (std::string why = WhyNotCreatable(parent); !why.empty()) {
    env.Fail(ErrorKind::kOS, StrCat("could not create the directory '", Printable(parent), "' for the argument '",
                                    env.key, "': ", why, "."));
  }
}

std::function<void()> PrepareParentDirectory(const Value& stored, const KeyEnv& env) {
  return PrepareDirectory(std::filesystem::path(stored.as_string()).parent_path().string(), env);
}

/// str without NUL bytes; its parent directory must be creatable.
Parser ParseSavePath() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_string()) env.FailType("str", in);
    if (env.loading) return in;
    PathText(in, env);
    CheckParentDirectory(in.as_string(), env);
    return in;
  };
}

/// int with bool refused; `min` for user input, `stored_min` for a
/// snapshot (defaults such as -1 mean "not set").
Parser ParseIntAtLeast(int64_t min, int64_t stored_min) {
  return [=](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_int()) env.FailType("int", in);
    int64_t floor = env.loading ? stored_min : min;
    if (in.as_int() < floor) env.FailValue(StrCat("must be greater than or equal to ", floor), in);
    return in;
  };
}

/// A string-keyed dict (any content); used for hidden dict slots.
Parser ParseAnyDict() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_dict()) env.FailType("dict", in);
    return in;
  };
}

// ---------------------------------------------------------------------------
// all_reduce_fusion_config: split indices per communication group.

/// The world group whose fusion indices the current device target uses.
std::string FusionGroup(const View& view) {
  return view.device() == DeviceTarget::kAscend ? "hccl_world_groupsum1" : "nccl_world_groupsum1";
}

/// A non-empty, strictly ascending list of distinct ints (bools refused).
List ParseFusionIndices(const Value& in, const KeyEnv& env) {
  if (!in.is_list()) env.FailType("list of int", in);
  const List& items = in.as_list();
  if (items.empty()) env.FailValue("must not be empty", in);
  for (const Value& item : items) {
    if (!item.is_int()) {
      env.Fail(ErrorKind::kType, StrCat("every element of the parameter '", env.key, "' must be int, but got ",
                                        item.type_name(), " (", item.repr(), ")."));
    }
  }
  std::set<int64_t> seen;
  for (const Value& item : items) {
    if (!seen.insert(item.as_int()).second) env.FailValue("must not contain duplicates", in);
  }
  for (size_t i = 1; i < items.size(); ++i) {
    if (items[i].as_int() < items[i - 1].as_int()) {
      env.FailValue("must be sorted in ascending order", in);
    }
  }
  return items;
}

/// The group → indices map `current` (or [] when nothing is set yet) with
/// `group` set to `indices`.
Value WithFusionIndices(const Value& current, const std::string& group, List indices) {
  Dict groups = current.is_dict() ? current.as_dict() : Dict{};
  groups.Set(group, Value(std::move(indices)));
  return Value(std::move(groups));
}

Parser ParseAllReduceFusionConfig() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (env.loading) {
      if (in.is_list() && in.as_list().empty()) return in;  // the default: nothing set
      if (!in.is_dict()) env.FailType("dict of group name to list of int", in);
      for (const auto& [group, indices] : in.as_dict()) {
        std::string name = SubName(env.key, group);
        ParseFusionIndices(indices, SubEnv(env, name));
      }
      return in;
    }
    List indices = ParseFusionIndices(in, env);
    return WithFusionIndices(env.view.Get(kFamily, env.key), FusionGroup(env.view), std::move(indices));
  };
}

Value ReadAllReduceFusionConfig(const View& view, const KeyEnv&) {
  Value groups = view.Get(kFamily, "all_reduce_fusion_config");
  if (!groups.is_dict()) return Value(List{});
  const Value* indices = groups.as_dict().Find(FusionGroup(view));
  return indices != nullptr ? *indices : Value(List{});
}

// ---------------------------------------------------------------------------
// Note [Communication fusion]
// MindSpore keeps, per collective (all-reduce, all-gather, reduce-scatter),
// an enabled flag and a threshold in MB, plus one shared fusion mode, a
// data-parallel copy of the all-reduce threshold and the all-reduce split
// indices (the all_reduce_fusion_config slot). comm_fusion walks the dict in
// order: an entry for a disabled collective is skipped without checks,
// setting a threshold re-enables that collective, openstate=False disables
// all three, and every entry is recorded in the dict get returns. The walk
// runs once in `parse` (to validate) and again in `apply` (to write); both
// see the same state, so they agree.

struct Collective {
  std::string_view name;
  std::string_view enabled_slot;
  std::string_view threshold_slot;
  bool allows_index;
};

constexpr std::array<Collective, 3> kCollectives = {{
    {"allreduce", "_all_reduce_fusion_enabled", "_all_reduce_fusion_threshold", true},
    {"allgather", "_all_gather_fusion_enabled", "_all_gather_fusion_threshold", false},
    {"reducescatter", "_reduce_scatter_fusion_enabled", "_reduce_scatter_fusion_threshold", false},
}};

constexpr int64_t kDefaultFusionThresholdMb = 64;

Value DefaultCommFusionRecord() {
  auto entry = [] { return Value(Dict{{"mode", Value("auto")}, {"config", Value()}}); };
  return Value(
      Dict{{"openstate", Value(true)}, {"allreduce", entry()}, {"allgather", entry()}, {"reducescatter", entry()}});
}

struct FusionState {
  std::array<bool, 3> enabled{};
  std::array<int64_t, 3> threshold{};
  Value mode;
  int64_t data_parallel_threshold = -1;
  Value split_indices;  // the all_reduce_fusion_config slot
  Dict record;
};

FusionState LoadFusionState(const View& view) {
  FusionState state;
  for (size_t i = 0; i < kCollectives.size(); ++i) {
    state.enabled[i] = SlotBool(view, kCollectives[i].enabled_slot);
    state.threshold[i] = view.Get(kFamily, kCollectives[i].threshold_slot).as_int();
  }
  state.mode = view.Get(kFamily, "_fusion_mode");
  state.data_parallel_threshold = view.Get(kFamily, "_data_parallel_fusion_threshold").as_int();
  state.split_indices = view.Get(kFamily, "all_reduce_fusion_config");
  Value record = view.Get(kFamily, "_comm_fusion_record");
  state.record = record.is_dict() ? record.as_dict() : DefaultCommFusionRecord().as_dict();
  return state;
}

void StoreFusionState(const FusionState& state, Transaction& tx) {
  for (size_t i = 0; i < kCollectives.size(); ++i) {
    tx.Write(kFamily, kCollectives[i].enabled_slot, Value(state.enabled[i]));
    tx.Write(kFamily, kCollectives[i].threshold_slot, Value(state.threshold[i]));
  }
  tx.Write(kFamily, "_fusion_mode", state.mode);
  tx.Write(kFamily, "_data_parallel_fusion_threshold", Value(state.data_parallel_threshold));
  tx.Write(kFamily, "all_reduce_fusion_config", state.split_indices);
  tx.Write(kFamily, "_comm_fusion_record", Value(state.record));
}

void SetFusionThreshold(size_t index, int64_t mb, FusionState& state) {
  state.threshold[index] = mb;
  state.enabled[index] = true;
  if (index == 0) state.data_parallel_threshold = mb;
}

/// One collective's entry: {"mode": ..., "config": ...}.
void ApplyCollectiveEntry(size_t index, const Value& entry, const View& view, const KeyEnv& env, FusionState& state) {
  const Collective& collective = kCollectives[index];
  std::string entry_name = SubName(env.key, collective.name);
  KeyEnv entry_env = SubEnv(env, entry_name);
  if (!entry.is_dict()) entry_env.FailType("dict", entry);
  const Dict& fields = entry.as_dict();
  for (std::string_view field : {"mode", "config"}) {
    if (!fields.Contains(field)) {
      env.Fail(ErrorKind::kKey, StrCat("the argument '", entry_name, "' must contain the key '", field, "'."));
    }
  }
  const Value& mode = *fields.Find("mode");
  const Value& config = *fields.Find("config");
  bool known = mode.is_string() && (mode.as_string() == "auto" || mode.as_string() == "size" ||
                                    (collective.allows_index && mode.as_string() == "index"));
  if (!known) {
    env.Fail(ErrorKind::kKey, StrCat("the fusion mode of '", entry_name, "' must be ",
                                     collective.allows_index ? "'auto', 'size' or 'index'" : "'auto' or 'size'",
                                     ", but got ", mode.repr(), "."));
  }
  state.mode = mode;
  const std::string& how = mode.as_string();
  std::string config_name = SubName(entry_name, "config");
  KeyEnv config_env = SubEnv(env, config_name);
  if (how == "auto") {
    SetFusionThreshold(index, kDefaultFusionThresholdMb, state);
  } else if (how == "size") {
    if (!config.is_int()) config_env.FailType("int (a fusion threshold in MB)", config);
    if (config.as_int() < 0) {
      config_env.FailValue("is a fusion threshold in MB: it must be larger than 0 or equal to 0", config);
    }
    SetFusionThreshold(index, config.as_int(), state);
  } else {  // index: exactly all_reduce_fusion_config=config
    List indices = ParseFusionIndices(config, config_env);
    state.split_indices = WithFusionIndices(state.split_indices, FusionGroup(view), std::move(indices));
  }
}

/// Walks a comm_fusion dict (openstate already added) over the state in `view`.
FusionState RunCommFusion(const Dict& config, const View& view, const KeyEnv& env) {
  FusionState state = LoadFusionState(view);
  for (const auto& [name, value] : config) {
    const auto* it = std::find_if(kCollectives.begin(), kCollectives.end(),
                                  [&name = name](const Collective& c) { return c.name == name; });
    if (it != kCollectives.end()) {
      size_t index = static_cast<size_t>(it - kCollectives.begin());
      if (state.enabled[index]) ApplyCollectiveEntry(index, value, view, env, state);
    } else if (name == "openstate") {
      if (!value.is_bool()) {
        std::string sub = SubName(env.key, name);
        SubEnv(env, sub).FailType("bool", value);
      }
      if (!value.as_bool()) state.enabled.fill(false);
    } else {
      env.Fail(ErrorKind::kKey, StrCat("comm fusion type must be 'openstate', 'allreduce', "
                                       "'allgather' or 'reducescatter', but got '",
                                       name, "'."));
    }
    state.record.Set(name, value);
  }
  return state;
}

Parser ParseCommFusion() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_dict()) env.FailType("dict", in);
    if (env.loading) return in;
    Dict config = in.as_dict();
    if (!config.Contains("openstate")) config.Set("openstate", Value(true));
    RunCommFusion(config, env.view, env);  // validation only; apply writes
    return Value(std::move(config));
  };
}

void ApplyCommFusion(const Value& stored, Transaction& tx, const KeyEnv& env) {
  WriteOwn(stored, tx, env);
  if (env.loading) return;
  StoreFusionState(RunCommFusion(stored.as_dict(), tx, env), tx);
}

// ---------------------------------------------------------------------------
// dataset_strategy: a string (the full_batch flag) or a tuple of tuples.

/// Rows of ints; tuples from the user, tuples or lists from a snapshot.
Value ParseStrategyRows(const Value& in, const KeyEnv& env) {
  auto sequence_ok = [&](const Value& v) { return v.is_tuple() || (env.loading && v.is_list()); };
  if (!sequence_ok(in)) env.FailType("str or tuple of tuples of int", in);
  List rows;
  for (const Value& row : in.as_list()) {
    if (!sequence_ok(row)) {
      env.Fail(ErrorKind::kType, StrCat("every element of the parameter '", env.key,
                                        "' must be a tuple of int, but got ", row.type_name(), " (", row.repr(), ")."));
    }
    List dims;
    for (const Value& dim : row.as_list()) {
      if (!dim.is_int_like()) {
        env.Fail(ErrorKind::kType, StrCat("every dimension in the parameter '", env.key, "' must be int, but got ",
                                          dim.type_name(), " (", dim.repr(), ")."));
      }
      // A split count: at least 1 (a snapshot holds only values checked here).
      if (!env.loading && dim.as_int() < 1) {
        env.Fail(ErrorKind::kValue, StrCat("every dimension in the parameter '", env.key,
                                           "' must be a positive int (a split count), but got ", dim.repr(), "."));
      }
      dims.push_back(Value(dim.as_int()));
    }
    rows.push_back(Value(std::move(dims)));
  }
  return Value(std::move(rows));
}

Parser ParseDatasetStrategy() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (in.is_string()) {
      // The key's own slot keeps a tuple strategy as its repr (see
      // ApplyDatasetStrategy); the tuple itself lives in _dataset_strategy.
      if (env.loading) return in;
      if (in.as_string() != "full_batch" && in.as_string() != "data_parallel") {
        env.FailValue("must be 'full_batch', 'data_parallel' or a tuple of tuples of int", in);
      }
      return in;
    }
    Value rows = ParseStrategyRows(in, env);
    if (!env.loading && IsPynative(env.view)) {
      env.FailValue(
          "must be 'full_batch' or 'data_parallel' in PYNATIVE_MODE (a tuple strategy "
          "needs GRAPH_MODE)",
          in);
    }
    return rows;
  };
}

// The own slot always holds text (the string form, or the tuple's repr):
// snapshots restore keys that have an `apply` by kind, and get uses `read`.
void ApplyDatasetStrategy(const Value& stored, Transaction& tx, const KeyEnv& env) {
  WriteOwn(stored.is_string() ? stored : Value(stored.repr()), tx, env);
  if (env.loading) return;
  if (stored.is_string()) {
    tx.Write(kFamily, "full_batch", Value(stored.as_string() == "full_batch"));
    tx.Write(kFamily, "_full_batch_is_set", Value(true));
    tx.Write(kFamily, "_dataset_strategy_is_string", Value(true));
  } else {
    tx.Write(kFamily, "_dataset_strategy", stored);
    tx.Write(kFamily, "_dataset_strategy_is_string", Value(false));
  }
}

Value ReadDatasetStrategy(const View& view, const KeyEnv& env) {
  if (SlotBool(view, "_dataset_strategy_is_string")) {
    return Value(SlotBool(view, "full_batch") ? "full_batch" : "data_parallel");
  }
  Value rows = view.Get(kFamily, "_dataset_strategy");
  if (IsPynative(view)) {
    env.FailValue(
        "must be 'full_batch' or 'data_parallel' in PYNATIVE_MODE (a tuple strategy "
        "needs GRAPH_MODE)",
        rows);
  }
  return rows;
}

// ---------------------------------------------------------------------------
// strategy_ckpt_config: a view of the two strategy file keys, plus
// only_trainable_params kept in its own slot.

constexpr std::array<std::string_view, 3> kCkptConfigKeys = {"load_file", "save_file", "only_trainable_params"};

Value DefaultCkptConfig() {
  return Value(Dict{{"load_file", Value("")}, {"save_file", Value("")}, {"only_trainable_params", Value(true)}});
}

Value CurrentCkptConfig(const View& view) {
  Value own = view.Get(kFamily, "strategy_ckpt_config");
  const Value* only = own.is_dict() ? own.as_dict().Find("only_trainable_params") : nullptr;
  return Value(Dict{{"load_file", view.Get(kFamily, "strategy_ckpt_load_file")},
                    {"save_file", view.Get(kFamily, "strategy_ckpt_save_file")},
                    {"only_trainable_params", only != nullptr && only->is_bool() ? *only : Value(true)}});
}

Parser ParseStrategyCkptConfig() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_dict()) env.FailType("dict", in);
    Dict merged = (env.loading ? DefaultCkptConfig() : CurrentCkptConfig(env.view)).as_dict();
    for (const auto& [name, value] : in.as_dict()) {
      if (std::find(kCkptConfigKeys.begin(), kCkptConfigKeys.end(), name) == kCkptConfigKeys.end()) {
        env.Fail(ErrorKind::kValue, StrCat("the key '", name, "' of the argument '", env.key,
                                           "' is not recognized; the keys it takes are ['load_file', 'save_file', "
                                           "'only_trainable_params']."));
      }
      std::string sub_name = SubName(env.key, name);
      KeyEnv sub_env = SubEnv(env, sub_name);
      bool is_flag = name == "only_trainable_params";
      if (is_flag ? !value.is_bool() : !value.is_string()) {
        sub_env.FailType(is_flag ? "bool" : "str", value);
      }
      if (!is_flag && !env.loading) PathText(value, sub_env);  // no NUL bytes in a path
      merged.Set(name, value);
    }
    return Value(std::move(merged));
  };
}

void ApplyStrategyCkptConfig(const Value& stored, Transaction& tx, const KeyEnv& env) {
  WriteOwn(stored, tx, env);
  if (env.loading) return;
  tx.Write(kFamily, "strategy_ckpt_load_file", *stored.as_dict().Find("load_file"));
  tx.Write(kFamily, "strategy_ckpt_save_file", *stored.as_dict().Find("save_file"));
}

// ---------------------------------------------------------------------------
// Other keys with their own rules.

// constexpr, so a table built during another file's static initialisation sees it.
constexpr std::array<std::string_view, 5> kParallelModes = {"stand_alone", "data_parallel", "hybrid_parallel",
                                                            "semi_auto_parallel", "auto_parallel"};

Parser ParseParallelMode() {
  Parser choice = ParseStringChoice({kParallelModes.begin(), kParallelModes.end()});
  return [choice](const Value& in, const KeyEnv& env) -> Value {
    Value mode = choice(in, env);
    bool graph_only = mode.as_string() == "semi_auto_parallel" || mode.as_string() == "hybrid_parallel";
    if (!env.loading && graph_only && IsPynative(env.view)) {
      env.FailValue(
          "can be 'semi_auto_parallel' or 'hybrid_parallel' only in GRAPH_MODE "
          "(PYNATIVE_MODE runs 'stand_alone', 'data_parallel' and 'auto_parallel')",
          in);
    }
    return mode;
  };
}

Value ReadParallelMode(const View& view, const KeyEnv&) {
  if (IsPsServer(view)) return Value("stand_alone");
  return view.Get(kFamily, "parallel_mode");
}

Value ReadFullBatch(const View& view, const KeyEnv&) {
  if (IsPsServer(view)) return Value(false);
  return view.Get(kFamily, "full_batch");
}

void ApplyShardingPropagation(const Value& stored, Transaction& tx, const KeyEnv& env) {
  WriteOwn(stored, tx, env);
  if (!env.loading && stored.as_bool()) {
    tx.Write(kFamily, "search_mode", Value("sharding_propagation"));
  }
}

Parser ParseOptimizerWeightShardSize() {
  return [](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_int()) env.FailType("int", in);
    if (!env.loading && in.as_int() <= 1) {
      env.Warn(WarningKind::kGeneral, StrCat("For '", env.function, "', the argument '", env.key,
                                             "' must be an integer larger than 1 to take effect, but got ", in.repr(),
                                             "; the setting is ignored."));
    }
    return in;
  };
}

void ApplyOptimizerWeightShardSize(const Value& stored, Transaction& tx, const KeyEnv& env) {
  if (!env.loading && stored.as_int() <= 1) return;  // ignored, as warned
  WriteOwn(stored, tx, env);
}

const std::vector<SubKey>& ParallelOptimizerSubKeys() {
  static const std::vector<SubKey> sub_keys = {
      {"gradient_accumulation_shard", Value(true), ParseBool(),
       "Shard the accumulated gradients across data-parallel devices (pipeline or gradient "
       "accumulation only)."},
      {"parallel_optimizer_threshold", Value(-1), ParseIntAtLeast(0, -1),
       "Parameters smaller than this many KB are not sharded; -1 means 64."},
      {"optimizer_weight_shard_size", Value(-1), ParseStrictInt(),
       "Size of the group that shards optimizer weights; -1 means all devices."},
  };
  return sub_keys;
}

const std::vector<SubKey>& PipelineConfigSubKeys() {
  static const std::vector<SubKey> sub_keys = {
      {"pipeline_interleave", Value(false), ParseBool(), "Interleave the stages' micro-batches (virtual stages)."},
      {"pipeline_scheduler", Value("1f1b"), ParseStringChoice({"1f1b", "gpipe"}),
       R"(The schedule of micro-batches: "1f1b" (one forward, one backward) or "gpipe".)"},
  };
  return sub_keys;
}

}  // namespace

const FamilyTable& AutoParallelTable() {
  static const FamilyTable table{
      .family = kFamily,
      .set_function = "context.set_auto_parallel_context",
      .get_function = "context.get_auto_parallel_context",
      .options =
          {
              // --- devices and ranks --------------------------------------
              {.name = "device_num",
               .type = "int",
               .default_value = 1,
               .parse = ParseIntRange(1, 4096),
               .affects_compile = true,
               .in_summary = true,
               .apply = WriteAndMark("_device_num_is_set"),
               .doc = "Number of devices taking part in parallel training. Left unset, the size "
                      "of the world communication group is used."},
              {.name = "_device_num_is_set",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Whether device_num was set explicitly."},
              {.name = keys::kGlobalRank,
               .type = "int",
               .default_value = 0,
               .parse = ParseIntRange(0, 4095),
               .affects_compile = true,
               .apply = WriteAndMark("_global_rank_is_set"),
               .doc = "Rank of this process among all devices. Left unset, it is taken from the "
                      "communication group."},
              {.name = "_global_rank_is_set",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Whether global_rank was set explicitly."},

              // --- parallel mode and strategy search ----------------------
              {.name = "parallel_mode",
               .type = "str",
               .default_value = "stand_alone",
               .parse = ParseParallelMode(),
               .affects_compile = true,
               .in_summary = true,
               .read = ReadParallelMode,
               .doc = "How work is split across devices: stand_alone, data_parallel, "
                      "hybrid_parallel, semi_auto_parallel or auto_parallel. A parameter-server "
                      "server process always reads stand_alone."},
              {.name = "search_mode",
               .type = "str",
               .default_value = "dynamic_programming",
               .parse = ParseStringChoice({"recursive_programming", "dynamic_programming", "sharding_propagation"}),
               .affects_compile = true,
               .aliases = {{"auto_parallel_search_mode", Profile::kR1_6}},
               .doc = "Algorithm auto_parallel uses to choose sharding strategies."},
              {.name = "sharding_propagation",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .deprecation = {.since = Profile::kR1_6,
                               .action = DeprecationAction::kWarnAndApply,
                               .advice = "Use search_mode='sharding_propagation' instead."},
               .apply = ApplyShardingPropagation,
               .doc = "Older switch for spreading configured shardings to the other operators; "
                      "True also sets search_mode to sharding_propagation."},

              // --- gradients -----------------------------------------------
              {.name = "gradients_mean",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .aliases = {{"mirror_mean", Profile::kR1_0}},
               .doc = "Average the all-reduced gradients over the devices instead of summing "
                      "them. Has no effect in stand_alone mode."},
              {.name = "gradient_fp32_sync",
               .type = "bool",
               .default_value = true,
               .parse = ParseBool(),
               .affects_compile = true,
               .aliases = {{"cast_before_mirror", Profile::kR1_0}},
               .doc = "All-reduce float16 and bfloat16 gradients in float32 and cast them back "
                      "(nn.DistributedGradReducer); False reduces them in their own dtype."},
              {.name = "loss_repeated_mean",
               .type = "bool",
               .default_value = true,
               .parse = ParseBool(),
               .affects_compile = true,
               .doc = "Divide gradients in the backward pass when the same computation is "
                      "repeated on several devices. Used by semi_auto_parallel and auto_parallel only."},
              {.name = "grad_accumulation_step",
               .type = "int",
               .default_value = 1,
               .parse = ParseIntRange(1, INT64_MAX, /*allow_bool=*/false),
               .affects_compile = true,
               .doc = "Number of micro-steps whose gradients are summed before an update "
                      "(semi_auto_parallel and auto_parallel)."},

              // --- parameter broadcast and strategy files -------------------
              {.name = "parameter_broadcast",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .apply = WriteAndMark("_parameter_broadcast_is_set"),
               .doc = "Copy rank 0's initial parameters to every device before training starts "
                      "(data_parallel: at each cell's first call, except layerwise_parallel ones)."},
              {.name = "_parameter_broadcast_is_set",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .visibility = Visibility::kHidden,
               .doc = "Whether parameter_broadcast was set explicitly."},
              {.name = "strategy_ckpt_load_file",
               .type = "str",
               .default_value = "",
               .parse = ParsePath(),
               .affects_compile = true,
               .doc = "File from which sharding strategies are read at compile time; \"\" for "
                      "none."},
              {.name = "strategy_ckpt_save_file",
               .type = "str",
               .default_value = "",
               .parse = ParseSavePath(),
               .prepare = PrepareParentDirectory,
               .doc = "File to which sharding strategies are written at compile time; its "
                      "directory is created when missing."},
              {.name = "strategy_ckpt_config",
               .type = "dict",
               .default_value = DefaultCkptConfig(),
               .parse = ParseStrategyCkptConfig(),
               .affects_compile = true,
               .apply = ApplyStrategyCkptConfig,
               .read = [](const View& view, const KeyEnv&) { return CurrentCkptConfig(view); },
               .doc = "The strategy files as one dict (load_file, save_file, "
                      "only_trainable_params); it shares its files with the two keys above, and "
                      "the last writer wins."},
              {.name = "group_ckpt_save_file",
               .type = "str",
               .default_value = "",
               .parse = ParseSavePath(),
               .kept_on_reset = true,
               .prepare = PrepareParentDirectory,
               .doc = "File to which communication-group information is written; its directory "
                      "is created when missing. Survives a reset."},

              // --- dataset layout ------------------------------------------
              {.name = "full_batch",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .apply = WriteAndMark("_full_batch_is_set"),
               .read = ReadFullBatch,
               .doc = "Every device loads the whole batch. Same as dataset_strategy="
                      "'full_batch'; a parameter-server server process always reads False."},
              {.name = "_full_batch_is_set",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .visibility = Visibility::kHidden,
               .doc = "Whether full_batch was set (directly or through dataset_strategy)."},
              {.name = "dataset_strategy",
               .type = "str or tuple(tuple(int))",
               .default_value = "data_parallel",
               .parse = ParseDatasetStrategy(),
               .affects_compile = true,
               .apply = ApplyDatasetStrategy,
               .read = ReadDatasetStrategy,
               .doc = "How input data is sharded: 'full_batch', 'data_parallel', or one tuple of "
                      "split counts per input (GRAPH_MODE only; read back as a list of lists)."},
              {.name = "_dataset_strategy",
               .type = "list(list(int))",
               .default_value = Value(List{}),
               .parse = ParseStrategyRows,
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "The last tuple dataset strategy; cleared by a reset."},
              {.name = "_dataset_strategy_is_string",
               .type = "bool",
               .default_value = true,
               .parse = ParseBool(),
               .visibility = Visibility::kHidden,
               .kept_on_reset = true,
               .doc = "Whether dataset_strategy reads in string form; a reset keeps it, so a "
                      "tuple strategy reads [] after a reset."},

              // --- parallel optimizer --------------------------------------
              {.name = "enable_parallel_optimizer",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .doc = "Shard optimizer state and the weight update across devices."},
              {.name = "parallel_optimizer_config",
               .type = "dict",
               .default_value = SubDictDefault(ParallelOptimizerSubKeys()),
               .parse = ParseSubDict(ParallelOptimizerSubKeys()),
               .affects_compile = true,
               .doc = "Details of the parallel optimizer (gradient_accumulation_shard, "
                      "parallel_optimizer_threshold, optimizer_weight_shard_size), merged over "
                      "the current value; used only with enable_parallel_optimizer=True."},
              {.name = "optimizer_weight_shard_size",
               .type = "int",
               .default_value = -1,
               .parse = ParseOptimizerWeightShardSize(),
               .affects_compile = true,
               .apply = ApplyOptimizerWeightShardSize,
               .doc = "Size of the device group that shards optimizer weights; values of 1 or "
                      "less are ignored with a warning."},
              {.name = "optimizer_weight_shard_aggregated_save",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .doc = "Gather the sharded optimizer weights into whole tensors when saving."},

              // --- communication -------------------------------------------
              {.name = "all_reduce_fusion_config",
               .type = "list[int]",
               .default_value = Value(List{}),
               .parse = ParseAllReduceFusionConfig(),
               .affects_compile = true,
               .read = ReadAllReduceFusionConfig,
               .doc = "Gradient all-reduce fusion split indices: each index is the last parameter "
                      "of a fusion segment (nn.DistributedGradReducer). Kept per world group of the "
                      "device target (set device_target first); reads [] when unset."},
              {.name = "comm_fusion",
               .type = "dict",
               .default_value = DefaultCommFusionRecord(),
               .parse = ParseCommFusion(),
               .affects_compile = true,
               .apply = ApplyCommFusion,
               .read = [](const View& view, const KeyEnv&) { return view.Get(kFamily, "_comm_fusion_record"); },
               .doc = "Fusion of allreduce, allgather and reducescatter: per collective a mode "
                      "('auto', 'size' in MB, or 'index' for allreduce) and its config; "
                      "openstate=False turns fusion off."},
              {.name = "_comm_fusion_record",
               .type = "dict",
               .default_value = DefaultCommFusionRecord(),
               .parse = ParseAnyDict(),
               .visibility = Visibility::kHidden,
               .doc = "What get returns for comm_fusion: the defaults with every entry passed "
                      "so far."},
              {.name = "_fusion_mode",
               .type = "str",
               .default_value = "auto",
               .parse = ParseStringChoice({"auto", "size", "index"}),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "The fusion mode named last in comm_fusion."},
              {.name = "_all_reduce_fusion_enabled",
               .type = "bool",
               .default_value = true,
               .parse = ParseBool(),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Whether all-reduce operations are fused."},
              {.name = "_all_gather_fusion_enabled",
               .type = "bool",
               .default_value = true,
               .parse = ParseBool(),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Whether all-gather operations are fused."},
              {.name = "_reduce_scatter_fusion_enabled",
               .type = "bool",
               .default_value = true,
               .parse = ParseBool(),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Whether reduce-scatter operations are fused."},
              {.name = "_all_reduce_fusion_threshold",
               .type = "int (MB)",
               .default_value = kDefaultFusionThresholdMb,
               .parse = ParseIntAtLeast(0, 0),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Size in MB at which an all-reduce fusion bucket is closed."},
              {.name = "_all_gather_fusion_threshold",
               .type = "int (MB)",
               .default_value = kDefaultFusionThresholdMb,
               .parse = ParseIntAtLeast(0, 0),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Size in MB at which an all-gather fusion bucket is closed."},
              {.name = "_reduce_scatter_fusion_threshold",
               .type = "int (MB)",
               .default_value = kDefaultFusionThresholdMb,
               .parse = ParseIntAtLeast(0, 0),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "Size in MB at which a reduce-scatter fusion bucket is closed."},
              {.name = "_data_parallel_fusion_threshold",
               .type = "int (MB)",
               .default_value = -1,
               .parse = ParseIntAtLeast(-1, -1),
               .affects_compile = true,
               .visibility = Visibility::kHidden,
               .doc = "All-reduce bucket size used by data_parallel; -1 until a threshold is "
                      "set."},
              {.name = "enable_alltoall",
               .type = "bool",
               .default_value = false,
               .parse = ParseBool(),
               .affects_compile = true,
               .doc = "Allow AllToAll; otherwise it is emulated with AllGather, Split and "
                      "Concat."},
              {.name = "communi_parallel_mode",
               .type = "str",
               .default_value = "all_group_parallel",
               .parse = ParseStringChoice({"all_group_parallel", "same_server_group_parallel", "no_group_parallel"}),
               .affects_compile = true,
               .doc = "Which communication groups may run at the same time."},
              {.name = "pipeline_stages",
               .type = "int",
               .default_value = 1,
               .parse = ParseIntRange(1, INT64_MAX, /*allow_bool=*/false),
               .affects_compile = true,
               .doc = "Number of pipeline stages the devices are split into; device_num must be "
                      "divisible by it."},
              {.name = "pipeline_config",
               .type = "dict",
               .default_value = SubDictDefault(PipelineConfigSubKeys()),
               .parse = StoredWithoutEffect(ParseSubDict(PipelineConfigSubKeys()), "run pipeline parallelism"),
               .affects_compile = true,
               .doc = "Pipeline parallelism's schedule: pipeline_interleave (bool) and pipeline_scheduler "
                      "(\"1f1b\" or \"gpipe\"), merged over the current value. Checked and stored; msrt does "
                      "not run pipeline parallelism yet, so it has no effect (a warning says so)."},
          },
      .unknown_key =
          [](Profile, bool is_set, std::string_view key) {
            return StrCat(is_set ? "Set" : "Get", " context keyword ", key, " is not recognized!");
          },
  };
  return table;
}

// Typed handles (options.h) of the records above that the runtime reads.
namespace parallel_options {
MSRT_OPTION_HANDLE(Family::kAutoParallel, int64_t, GlobalRank, keys::kGlobalRank)
MSRT_OPTION_HANDLE(Family::kAutoParallel, int64_t, DeviceNum, "device_num")
}  // namespace parallel_options

}  // namespace msrt::context
