// The runtime context: one record per set_context / get_context key.
//
// Keys are the union of MindSpore r0.5, r1.0, r1.6 and r2.3; a profile only
// changes defaults and deprecations. Key-specific parsers live in the
// anonymous namespace below, grouped like the table.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "context/device_config_options.h"
#include "context/env_config.h"
#include "context/graph_kernel_flags.h"
#include "context/option_spec.h"
#include "context/options.h"
#include "core/file_io.h"
#include "core/json_depth.h"

namespace msrt::context {
namespace {

// Names of the records the runtime reads through typed handles (options.h;
// defined at the end of this file): spelled once, here.
namespace keys {
constexpr std::string_view kDeviceTarget = "device_target";
constexpr std::string_view kDeviceId = "device_id";
constexpr std::string_view kMaxDeviceMemory = "max_device_memory";
constexpr std::string_view kVariableMemoryMaxSize = "variable_memory_max_size";
constexpr std::string_view kMempoolBlockSize = "mempool_block_size";
constexpr std::string_view kMemoryOptimizeLevel = "memory_optimize_level";
constexpr std::string_view kRuntimeNumThreads = "runtime_num_threads";
constexpr std::string_view kInterOpParallelNum = "inter_op_parallel_num";
constexpr std::string_view kOpTimeout = "op_timeout";
constexpr std::string_view kDeterministic = "deterministic";
constexpr std::string_view kPynativeSynchronize = "pynative_synchronize";
constexpr std::string_view kPynativeQueueDepth = "pynative_queue_depth";
constexpr std::string_view kEnableGraphKernel = "enable_graph_kernel";
constexpr std::string_view kGraphKernelFlags = "graph_kernel_flags";
constexpr std::string_view kJitConfig = "jit_config";
constexpr std::string_view kJitSyntaxLevel = "jit_syntax_level";
constexpr std::string_view kEnableCompileCache = "enable_compile_cache";
constexpr std::string_view kCompileCachePath = "compile_cache_path";
constexpr std::string_view kEnableReducePrecision = "enable_reduce_precision";
constexpr std::string_view kSaveGraphs = "save_graphs";
constexpr std::string_view kSaveGraphsPath = "save_graphs_path";
constexpr std::string_view kEnvConfigPath = "env_config_path";
constexpr std::string_view kEnableDump = "enable_dump";
constexpr std::string_view kSaveDumpPath = "save_dump_path";
constexpr std::string_view kEnableProfiling = "enable_profiling";
constexpr std::string_view kProfilingOptions = "profiling_options";
constexpr std::string_view kPrintFilePath = "print_file_path";
}  // namespace keys

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr DeviceMask kGpuAscend = kGPUOnly | kAscendOnly;

/// A non-negative count held by an unsigned 32-bit field (a bool counts as
/// 0/1, as Python's isinstance(True, int) does).
Parser ParseCount(int64_t min, std::string_view below_min) {
  return [min, below_min](const Value& in, const KeyEnv& env) -> Value {
    if (!in.is_int_like()) env.FailType("int", in);
    int64_t value = in.as_int();
    if (value < min) env.FailValue(below_min, in);
    if (value > int64_t{UINT32_MAX}) env.FailValue("must be at most 4294967295", in);
    return Value(value);
  };
}

// --- Execution ---------------------------------------------------------------

Value ParseMode(const Value& in, const KeyEnv& env) {
  if (!in.is_int_like()) env.FailType("int", in);
  int64_t mode = in.as_int();
  if (mode != kGraphMode && mode != kPynativeMode) {
    env.FailValue("should be context.GRAPH_MODE (0) or context.PYNATIVE_MODE (1)", in);
  }
  if (mode == kPynativeMode && !env.loading) {
    Value parallel_mode = env.view.Get(Family::kAutoParallel, "parallel_mode");
    if (parallel_mode.is_string() &&
        (parallel_mode.as_string() == "semi_auto_parallel" || parallel_mode.as_string() == "hybrid_parallel")) {
      env.Fail(ErrorKind::kValue, StrCat("the argument 'mode' cannot be context.PYNATIVE_MODE (1) while the "
                                         "auto-parallel context's parallel_mode is '",
                                         parallel_mode.as_string(),
                                         "': PYNATIVE_MODE runs only 'stand_alone', 'data_parallel' and "
                                         "'auto_parallel'. Call reset_auto_parallel_context() or set another "
                                         "parallel_mode first."));
    }
  }
  return Value(mode);
}

Value ParseDeviceTargetKey(const Value& in, const KeyEnv& env) {
  if (!in.is_string()) env.FailType("str", in);
  std::string target = in.as_string();
  if (target == "Davinci" && !env.loading) {
    env.Warn(WarningKind::kDeprecated, StrCat("For '", env.function,
                                              "', the device target 'Davinci' is deprecated; it is stored as 'Ascend'. "
                                              "Use 'Ascend' instead."));
    target = "Ascend";
  } else if (!ParseDeviceTarget(target).has_value()) {
    env.FailValue("must be one of ['CPU', 'GPU', 'Ascend', 'Davinci']", in);
  }
  // Parameter servers and schedulers never run device work (spec §5.9). The
  // role only counts while PS mode is on: ms_role alone does not make one.
  if (target == "Ascend" && !env.loading) {
    Value enabled = env.view.Get(Family::kParameterServer, "enable_ps");
    Value role = env.view.Get(Family::kParameterServer, "_role");
    if (enabled.is_bool() && enabled.as_bool() && role.is_string() &&
        (role.as_string() == "MS_PSERVER" || role.as_string() == "MS_SERVER" || role.as_string() == "MS_SCHED")) {
      MSRT_LOG(Info) << "device_target 'Ascend' becomes 'CPU' in parameter-server role " << role.as_string();
      target = "CPU";
    }
  }
  return Value(target);
}

Value DeviceIdFromEnv(const std::string& text, const KeyEnv& env) {
  int64_t id = 0;
  bool ok = !text.empty() && text.size() <= 4;
  for (char c : text) {
    if (c < '0' || c > '9') ok = false;
    if (ok) id = id * 10 + (c - '0');
  }
  if (!ok || id > 4095) {
    env.Warn(WarningKind::kGeneral, StrCat("The environment variable DEVICE_ID is '", Printable(text),
                                           "', which is not a device id; device 0 is used. Please set DEVICE_ID to "
                                           "0-4095."));
    return Value(int64_t{0});
  }
  return Value(id);
}

// --- Memory ------------------------------------------------------------------

constexpr std::string_view kGbFactor = " * 1024 * 1024 * 1024";
constexpr std::string_view kGraphMemoryKey = "_graph_memory_max_size";

/// N of a stored "N * 1024 * 1024 * 1024" with N in [lo, 31]; -1 otherwise.
int64_t GbOfStored(std::string_view stored, int64_t lo) {
  if (stored.size() <= kGbFactor.size() || !stored.ends_with(kGbFactor)) return -1;
  std::string_view digits = stored.substr(0, stored.size() - kGbFactor.size());
  if (digits.size() > 2) return -1;
  int64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return (n >= lo && n <= 31) ? n : -1;
}

Value ParseVariableMemory(const Value& in, const KeyEnv& env) {
  if (env.loading) {
    if (in.is_string() && (in.as_string() == "0" || GbOfStored(in.as_string(), 1) > 0)) return in;
    env.FailValue(R"(should be "0" or "N * 1024 * 1024 * 1024" with N in [1, 31])", in);
  }
  if (!in.is_string()) env.FailType("str", in);
  const std::string& text = in.as_string();
  // MindSpore compares float(N) with 31 first, then converts N with int().
  double gb = ParseGbText(text, /*integer=*/false, env);
  if (gb > 31) env.FailValue("should not be greater than \"31GB\"", in);
  if (text.find('.') != std::string::npos) {
    env.FailValue("should be a whole number of GB like \"6GB\"", in);
  }
  return Value(StrCat(text.substr(0, text.size() - 2), kGbFactor));
}

/// Also writes the graph-memory share MindSpore derives from it: 31 - N GB.
void ApplyVariableMemory(const Value& stored, Transaction& tx, const KeyEnv& env) {
  tx.Write(env.family, env.key, stored);
  int64_t n = stored.is_string() ? GbOfStored(stored.as_string(), 1) : -1;
  tx.Write(env.family, kGraphMemoryKey, Value(n > 0 ? StrCat(31 - n, kGbFactor) : "0"));
}

Value ParseGraphMemory(const Value& in, const KeyEnv& env) {
  if (in.is_string() && (in.as_string() == "0" || GbOfStored(in.as_string(), 0) >= 0)) return in;
  env.FailValue(R"(should be "0" or "N * 1024 * 1024 * 1024" with N in [0, 30])", in);
}

// --- Debugging and dumps -----------------------------------------------------

Value ParseSaveGraphs(const Value& in, const KeyEnv& env) {
  if (!in.is_int_like()) env.FailType("bool or int", in);
  int64_t level = in.is_bool() ? (in.as_bool() ? 2 : 0) : in.as_int();
  if (level < 0 || level > 3) env.FailValue("should be 0-3 (False means 0, True means 2)", in);
  return Value(level);
}

Value SaveGraphsFromEnv(const std::string& text, const KeyEnv&) {
  if (text.size() != 1 || text[0] < '0' || text[0] > '3') {
    throw ValueError(
        StrCat("The environment variable MS_DEV_SAVE_GRAPHS should be one digit "
               "from 0 to 3, but got '",
               Printable(text), "'."));
  }
  return Value(int64_t{text[0] - '0'});
}

/// Checks, without creating anything, that the folder `path` exists or can
/// be created and written (Note [A failed call changes nothing]).
void CheckDirectory(const std::string& path, const KeyEnv& env) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_directory(status)) {
    env.Fail(ErrorKind::kValue,
             StrCat("the argument '", env.key, "' should be a directory, but '", Printable(path), "' is not one."));
  }
  std::string why = WhyNotCreatable(path);
  if (why.empty()) return;
  if (why.find("not writable") != std::string::npos) {
    env.Fail(ErrorKind::kValue, StrCat("the argument '", env.key, "': No write permission on the directory '",
                                       Printable(path), "' (", why, ")."));
  }
  if (why.find("is not a folder") != std::string::npos) {
    env.Fail(ErrorKind::kValue, StrCat("the argument '", env.key, "' should be a directory, but '", Printable(path),
                                       "' (or a parent) is a file."));
  }
  env.Fail(ErrorKind::kOS,
           StrCat("the directory '", Printable(path), "' given as '", env.key, "' cannot be created: ", why, "."));
}

Value ParseSaveGraphsPath(const Value& in, const KeyEnv& env) {
  if (env.loading) return ParseString()(in, env);
  if (in.is_none()) env.FailValue("should be a directory path", in);
  const std::string& text = PathText(in, env);
  if (text.find_first_not_of(" \t\n\r\f\v") == std::string::npos) {
    env.FailValue("should be a non-blank directory path", in);
  }
  std::string path = RealPath(text);
  CheckDirectory(path, env);
  return Value(path);
}

Value ParsePrintFilePath(const Value& in, const KeyEnv& env) {
  if (in.is_none()) return Value("");
  if (env.loading) return ParseString()(in, env);
  const std::string& text = PathText(in, env);
  if (text.empty()) return Value("");
  std::string path = RealPath(text);
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    env.Fail(ErrorKind::kOS, StrCat("the argument 'print_file_path' should be a file path, but '", Printable(path),
                                    "' is a directory."));
  }
  // The file is created by the first Print: its folder must exist and be writable now.
  std::string parent = fs::path(path).parent_path().string();
  if (!fs::is_directory(parent, ec)) {
    env.Fail(ErrorKind::kOS,
             StrCat("the argument 'print_file_path': the folder of '", Printable(path), "' does not exist."));
  }
  if (std::string why = WhyNotCreatable(parent); !why.empty()) {
    env.Fail(ErrorKind::kOS,
             StrCat("the argument 'print_file_path': the file '", Printable(path), "' can not be created: ", why, "."));
  }
  if (!fs::exists(status)) return Value(path);
  // An existing file is kept: the output goes to a time-stamped sibling.
  std::string stamped = StrCat(path, ".", static_cast<int64_t>(std::time(nullptr)));
  if (fs::exists(stamped, ec)) {
    env.Fail(ErrorKind::kValue,
             StrCat("the argument 'print_file_path': '", Printable(path), "' exists and so does '", Printable(stamped),
                    "', the time-stamped name used instead; choose another "
                    "path."));
  }
  return Value(stamped);
}

Value ParseEnvConfigPath(const Value& in, const KeyEnv& env) {
  if (in.is_none()) return Value("");
  if (env.loading) return ParseString()(in, env);
  const std::string& text = PathText(in, env);
  if (text.empty()) return Value("");
  std::string path = RealPath(text);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    env.FailValue(StrCat("should be the path of an existing JSON file ('", Printable(path), "' is not a file)"), in);
  }
  try {
    LoadEnvConfigFile(path);
  } catch (const ValueError& e) {
    env.Fail(ErrorKind::kValue, StrCat("the argument 'env_config_path' names an invalid file. ", e.message()));
  }
  return Value(path);
}

// profiling_options: a legacy trace name (r0.5) or a JSON object (r1.0+).
constexpr std::string_view kProfilingSwitchKeys[] = {"training_trace", "task_trace",     "aicpu",   "aicpu_trace",
                                                     "op_trace",       "profile_memory", "l2_cache"};
constexpr std::string_view kProfilingTextKeys[] = {"output",      "result_path",    "fp_point",       "bp_point",
                                                   "aic_metrics", "aicore_metrics", "ai_core_metrics"};

Value ParseProfilingOptions(const Value& in, const KeyEnv& env) {
  if (!in.is_string()) env.FailType("str", in);
  const std::string& text = in.as_string();
  for (std::string_view legacy :
       {"training_trace", "task_trace", "task_trace:training_trace", "training_trace:task_trace", "op_trace"}) {
    if (text == legacy) return in;
  }
  auto fail = [&](std::string_view why) {
    env.FailValue(StrCat("should be 'training_trace', 'task_trace', 'task_trace:training_trace', "
                         "'training_trace:task_trace', 'op_trace' or a JSON object of options (",
                         why, ")"),
                  in);
  };
  size_t first = text.find_first_not_of(" \t\n\r");
  if (first == std::string::npos || text[first] != '{') fail("it is neither");
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    fail(StrCat("the JSON nests arrays or objects deeper than ", kMaxJsonDepth, " levels"));
  }
  Json options;
  try {
    options = Json::parse(text);
  } catch (const Json::exception& e) {
    fail(StrCat("the JSON is invalid: ", Printable(e.what())));
  }
  if (!options.is_object()) fail("the JSON is not an object");
  for (const auto& [key, value] : options.get_ref<const Json::object_t&>()) {
    bool is_switch = std::find(std::begin(kProfilingSwitchKeys), std::end(kProfilingSwitchKeys), key) !=
                     std::end(kProfilingSwitchKeys);
    bool is_text = std::find(std::begin(kProfilingTextKeys), std::end(kProfilingTextKeys), key) !=
                   std::end(kProfilingTextKeys);
    if (!is_switch && !is_text) {
      fail(StrCat("unknown option '", Printable(key),
                  "'; the options are output, result_path, training_trace, task_trace, aicpu, "
                  "aicpu_trace, fp_point, bp_point, aic_metrics, aicore_metrics, "
                  "ai_core_metrics, op_trace, profile_memory and l2_cache"));
    }
    bool ok = is_text ? value.is_string()
                      : (value.is_boolean() || (value.is_string() && (value.get_ref<const std::string&>() == "on" ||
                                                                      value.get_ref<const std::string&>() == "off")));
    if (!ok) {
      fail(StrCat("option '", key, "' should be ", is_text ? "a string" : R"("on" or "off")"));
    }
  }
  return in;
}

// --- Graph kernel fusion -----------------------------------------------------

Value ParseGraphKernelFlagsKey(const Value& in, const KeyEnv& env) {
  if (!in.is_string()) env.FailType("str", in);
  if (env.loading) return in;
  Value enable = env.view.Get(Family::kRuntime, "enable_graph_kernel");
  std::vector<std::string> warnings;
  // msrt fuses in every compiled graph, ms.jit functions in PYNATIVE_MODE included.
  ParseGraphKernelFlags(in.as_string(), enable.is_bool() && enable.as_bool(), /*graph_mode=*/true, &warnings);
  for (std::string& warning : warnings) env.Warn(WarningKind::kGeneral, std::move(warning));
  return in;
}

// --- Compile cache -----------------------------------------------------------

Value ParseEnableCompileCache(const Value& in, const KeyEnv& env) {
  if (in.is_none()) return Value(false);
  if (!in.is_bool()) env.FailType("bool", in);
  return in;
}

Value CompileCacheEnableFromEnv(const std::string& text, const KeyEnv&) {
  if (text == "1") return Value(true);
  if (text == "0") return Value(false);
  throw ValueError(
      StrCat("The environment variable MS_COMPILER_CACHE_ENABLE should be '0' or '1', "
             "but got '",
             Printable(text), "'."));
}

Value ParseSupportBinary(const Value& in, const KeyEnv& env) {
  if (!in.is_bool()) {
    env.Fail(ErrorKind::kType,
             StrCat("the argument 'support_binary' should be a bool, but got ", in.type_name(), " (", in.repr(), ")."));
  }
  return in;
}

std::string UnknownKeyMessage(Profile profile, bool is_set, std::string_view key) {
  if (profile == Profile::kR2_3) {
    return is_set ? StrCat("For 'context.set_context', the keyword argument ", key, " is not recognized!")
                  : StrCat("For 'context.get_context', the argument ", key, " is not recognized!");
  }
  return StrCat(is_set ? "Set" : "Get", " context keyword ", key, " is not recognized!");
}

FamilyTable MakeRuntimeTable() {
  const Deprecation kIgnoredSinceR1_0 = {.since = Profile::kR1_0,
                                         .action = DeprecationAction::kWarnAndIgnore,
                                         .advice =
                                             "It only configured MindSpore Lite export in "
                                             "r0.x and has no effect."};
  return FamilyTable{
      .family = Family::kRuntime,
      .set_function = "context.set_context",
      .get_function = "context.get_context",
      .options =
          {
              // --- Execution -------------------------------------------------------
              {.name = "mode",
               .type = "int",
               .default_value = Value(kPynativeMode),
               .profile_defaults = {{Profile::kR1_6, Value(kGraphMode)}},
               .parse = ParseMode,
               .affects_compile = true,
               .in_summary = true,
               .doc = "GRAPH_MODE (0) compiles networks into optimised graphs; PYNATIVE_MODE (1) "
                      "runs operators one by one. Default PYNATIVE_MODE (GRAPH_MODE in r1.6)."},
              {.name = keys::kDeviceTarget,
               .type = "str",
               .default_value = Value("CPU"),
               .default_fn = [] { return Value(std::string(DeviceTargetName(BestAvailableDevice()))); },
               .parse = ParseDeviceTargetKey,
               .freeze = Freeze::kOnceInEffect,
               .affects_compile = true,
               .in_summary = true,
               .order = 0,
               .doc = "Device that runs the work: 'CPU', 'GPU' or 'Ascend' ('Davinci' is an old "
                      "name of 'Ascend'). Default: the best device present. Applied before the "
                      "other keys of the same call."},
              {.name = keys::kDeviceId,
               .type = "int",
               .default_value = Value(int64_t{0}),
               .parse = ParseIntRange(0, 4095),
               .freeze = Freeze::kOnceInEffect,
               .env = {.var = "DEVICE_ID", .role = EnvRole::kDefault, .parse = DeviceIdFromEnv},
               .in_summary = true,
               .doc = "Index of the physical device this process uses, in [0, 4095]; default from "
                      "DEVICE_ID, else 0."},

              // --- Memory ----------------------------------------------------------
              {.name = keys::kMaxDeviceMemory,
               .type = "str (\"xxGB\")",
               .default_value = Value(1024.0),
               .parse = ParseGb({.min = 0.0,
                                 .min_exclusive = true,
                                 .min_message = "should be greater than \"0GB\"",
                                 .max_message = {}}),
               .mindspore_devices = kGpuAscend,
               .device_note = "msrt caps the memory pool of every device, CPU included.",
               .freeze = Freeze::kOnceInEffect,
               .doc = "Most device memory the framework may take, as \"xxGB\"; read back as a float "
                      "number of GB. Default \"1024GB\" (in practice: what is available)."},
              {.name = keys::kMempoolBlockSize,
               .type = "str (\"xxGB\")",
               .default_value = Value(1.0),
               .parse = ParseGb({.min = 1.0,
                                 .min_exclusive = false,
                                 .min_message = "should be greater than or equal to \"1GB\"",
                                 .max_message = {}}),
               .mindspore_devices = kGpuAscend,
               .device_note = "msrt's memory pools grow by this block size on every device.",
               .freeze = Freeze::kOnceInEffect,
               .doc = "Unit by which the device memory pool grows, as \"xxGB\" (at least \"1GB\"); "
                      "read back as a float number of GB."},
              {.name = keys::kVariableMemoryMaxSize,
               .type = "str (\"xxGB\")",
               .default_value = Value("0"),
               .parse = ParseVariableMemory,
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt reads it as a memory-pool cap on every device.",
               .freeze = Freeze::kOnceInEffect,
               .deprecation = {.since = Profile::kR1_6,
                               .action = DeprecationAction::kWarnAndApply,
                               .advice = "Use 'max_device_memory' instead."},
               .apply = ApplyVariableMemory,
               .doc = "Old cap on variable memory, whole GB up to \"31GB\"; read back as "
                      "\"N * 1024 * 1024 * 1024\" (\"0\" when unset)."},
              {.name = kGraphMemoryKey,
               .type = "str",
               .default_value = Value("0"),
               .parse = ParseGraphMemory,
               .visibility = Visibility::kHidden,
               .doc = "Graph memory left by variable_memory_max_size: (31 - N) GB."},
              {.name = keys::kMemoryOptimizeLevel,
               .type = "str",
               .default_value = Value(int64_t{0}),
               .parse = ParseStringMap({{"O0", Value(int64_t{0})}, {"O1", Value(int64_t{1})}}),
               .affects_compile = true,
               .doc = "\"O0\" favours speed; \"O1\" plans memory reuse statically (SOMAS) to save "
                      "memory. Read back as 0 or 1."},
              {.name = "memory_offload",
               .type = "str",
               .default_value = Value(false),
               .parse = ParseStringMap({{"ON", Value(true)}, {"OFF", Value(false)}}),
               .devices = kGpuAscend,
               .mindspore_devices = kGpuAscend,
               .doc = "\"ON\" moves idle device data to host memory when device memory runs short; "
                      "read back as a bool. Default \"OFF\"."},

              // --- Threads and timeouts --------------------------------------------
              {.name = keys::kRuntimeNumThreads,
               .type = "int",
               .default_value = Value(int64_t{30}),
               .parse = ParseCount(0, "must be greater than or equal to 0"),
               .doc = "Threads of the runtime (schedulers and CPU kernels), capped by the hardware "
                      "threads; 0 means all of them. Default 30. See docs/runtime.md for the split."},
              {.name = keys::kInterOpParallelNum,
               .type = "int",
               .default_value = Value(int64_t{0}),
               .parse = ParseCount(0, "must be greater than or equal to 0"),
               .doc = "Scheduler threads (operators launched concurrently), added to "
                      "runtime_num_threads; 0 lets the runtime decide (18% of runtime_num_threads)."},
              {.name = keys::kOpTimeout,
               .type = "int",
               .default_value = Value(int64_t{900}),
               .parse = ParseCount(0, "must be greater than or equal to 0"),
               .mindspore_devices = kGpuAscend,
               .device_note = "msrt enforces the per-operator time limit on every device.",
               .doc = "Seconds one operator may run before it is cancelled with a RuntimeError; 0 "
                      "means the default, 900."},

              // --- Compilation -----------------------------------------------------
              {.name = keys::kJitSyntaxLevel,
               .type = "int",
               .default_value = Value(int64_t{2}),
               .parse = ParseIntChoice({0, 1, 2},
                                       "should be context.STRICT (0), context.COMPATIBLE (1) or context.LAX (2)"),
               .affects_compile = true,
               .doc = "Python syntax graph compilation accepts: STRICT (0) basic syntax only, "
                      "COMPATIBLE (1), LAX (2, default) as much Python as possible."},
              {.name = keys::kJitConfig,
               .type = "dict",
               .default_value = SubDictDefault(JitConfigKeys()),
               .parse = ParseJitConfig,
               .affects_compile = true,
               .doc = "Global compile level of networks (a Cell's or jit function's ms.JitConfig wins): "
                      "{'jit_level': 'O0' | 'O1' | 'O2', 'infer_boost': 'on' | 'off'}. O0 runs only the "
                      "passes a graph needs (dead-code elimination); O1 every optimisation plus graph-kernel "
                      "fusion; O2 is O1 on CPU and GPU. Unset, msrt's defaults apply."},
              {.name = "debug_level",
               .type = "int",
               .default_value = Value(int64_t{0}),
               .parse = ParseIntChoice({0, 1}, "should be context.RELEASE (0) or context.DEBUG (1)"),
               .affects_compile = true,
               .doc = "RELEASE (0, default) drops some debug information to compile faster; DEBUG "
                      "(1) keeps it for error reports."},
              {.name = "max_call_depth",
               .type = "int",
               .default_value = Value(int64_t{1000}),
               .parse = ParseCount(1, "must be greater than 0"),
               .affects_compile = true,
               .doc = "Deepest chain of function calls graph compilation follows. Default 1000."},
              {.name = "precompile_only",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .doc = "Compile networks without running them; calls return None."},
              {.name = "check_bprop",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .affects_compile = true,
               .doc = "Check that custom backward functions return gradients matching the forward "
                      "inputs in number, shape and dtype."},
              {.name = "grad_for_scalar",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .affects_compile = true,
               .doc = "Treat Python int/float network inputs as differentiable graph inputs."},
              {.name = keys::kEnableReducePrecision,
               .type = "bool",
               .default_value = Value(true),
               .parse = ParseBool(),
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt's kernel selection honours it on every device.",
               .affects_compile = true,
               .doc = "When no kernel takes an op's float dtype (float16 convolution or matmul on CPU), "
                      "compute in the nearest one that has a kernel (float32) and convert back, warning once; "
                      "False raises TypeError naming op and dtype. Default True."},
              {.name = keys::kDeterministic,
               .type = "str",
               .default_value = Value("OFF"),
               .parse = ParseStringChoice({"ON", "OFF"}),
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt selects deterministic kernels on every device.",
               .affects_compile = true,
               .doc = "\"ON\" makes repeated runs with the same inputs give bit-identical results, "
                      "whatever runtime_num_threads is; default \"OFF\"."},
              {.name = "reserve_class_name_in_scope",
               .type = "bool",
               .default_value = Value(true),
               .parse = ParseBool(),
               .affects_compile = true,
               .scope = Scope::kThread,
               .doc = "Add each cell's class name to its scope name (net-Net1 rather than net). "
                      "Per thread; default True."},
              {.name = "support_binary",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseSupportBinary,
               .doc = "Allow GRAPH_MODE for code shipped as .pyc/.so, by saving the source of "
                      "compiled functions on a first run from .py."},
              {.name = "enable_sparse",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .affects_compile = true,
               .deprecation = {.since = Profile::kR2_3,
                               .action = DeprecationAction::kWarnAndIgnore,
                               .advice = "Sparse tensors no longer need a switch."},
               .doc = "Turn on sparse-tensor code paths in graph mode."},
              {.name = "enable_auto_mixed_precision",
               .type = "bool",
               .default_value = Value(false),
               .profile_defaults = {{Profile::kR0_5, Value(true)}},
               .parse = ParseBool(),
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt stores it on every device.",
               .affects_compile = true,
               .deprecation = {.since = Profile::kR1_6,
                               .action = DeprecationAction::kWarnAndIgnore,
                               .advice = "Use the amp_level of the training model instead."},
               .doc = "Automatic mixed precision for the whole network (r0.5/r1.0): Model trains as "
                      "amp_level \"O2\" when True."},

              // --- Graph kernel fusion ---------------------------------------------
              {.name = keys::kEnableGraphKernel,
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .mindspore_devices = kGpuAscend,
               .device_note = "msrt's graph-kernel fusion runs on every device.",
               .affects_compile = true,
               .doc = "Fuse operators into larger kernels in GRAPH_MODE (opt_level 2 unless "
                      "graph_kernel_flags says otherwise)."},
              {.name = keys::kGraphKernelFlags,
               .type = "str",
               .default_value = Value(""),
               .parse = ParseGraphKernelFlagsKey,
               .mindspore_devices = kGpuAscend,
               .device_note = "msrt's graph-kernel fusion runs on every device.",
               .affects_compile = true,
               .env = {.var = "MS_DEV_GRAPH_KERNEL_FLAGS",
                       .role = EnvRole::kOverride,
                       .parse = [](const std::string& text, const KeyEnv&) { return Value(text); }},
               .doc = "Fusion options such as \"--opt_level=2 --dump_as_text\"; they win over "
                      "enable_graph_kernel. Bad flags warn and are ignored."},

              // --- Compile cache ---------------------------------------------------
              {.name = keys::kEnableCompileCache,
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseEnableCompileCache,
               .env = {.var = "MS_COMPILER_CACHE_ENABLE",
                       .role = EnvRole::kDefault,
                       .parse = CompileCacheEnableFromEnv},
               .doc = "Save compiled graphs and reuse them in later runs while the network's "
                      "source files are unchanged."},
              {.name = keys::kCompileCachePath,
               .type = "str",
               .default_value = Value(""),
               .parse = ParsePath(),
               .env = {.var = "MS_COMPILER_CACHE_PATH",
                       .role = EnvRole::kDefault,
                       .parse = [](const std::string& text, const KeyEnv&) { return Value(text); }},
               .doc = "Directory of the compile cache (files go to <path>/rank_<id>/); \"\" means "
                      "the current directory."},

              // --- Debugging and dumps ---------------------------------------------
              {.name = keys::kSaveGraphs,
               .type = "bool or int",
               .default_value = Value(int64_t{0}),
               .parse = ParseSaveGraphs,
               .env = {.var = "MS_DEV_SAVE_GRAPHS", .role = EnvRole::kOverride, .parse = SaveGraphsFromEnv},
               .doc = "IR files written during compilation: 0 none, 1 one per stage, 2 also backend "
                      "graphs, 3 also graphviz and detailed front-end graphs. True means 2."},
              {.name = keys::kSaveGraphsPath,
               .type = "str",
               .default_value = Value("."),
               .parse = ParseSaveGraphsPath,
               .env = {.var = "MS_DEV_SAVE_GRAPHS_PATH",
                       .role = EnvRole::kOverride,
                       .parse = [](const std::string& text, const KeyEnv&) { return Value(RealPath(text)); }},
               .prepare = [](const Value& stored,
                             const KeyEnv& env) { return PrepareDirectory(stored.as_string(), env); },
               .doc = "Directory for the IR files (created if missing; read back as an absolute "
                      "path); distributed runs add rank_<id>/."},
              {.name = keys::kPrintFilePath,
               .type = "str",
               .default_value = Value(""),
               .parse = ParsePrintFilePath,
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt implements the Print file sink on every device.",
               .doc = "File that receives the Print operator's output instead of the screen; an "
                      "existing file is kept and a time-stamped name used instead. A rank of a "
                      "distributed job writes <folder>/rank_<id>/<name>."},
              {.name = keys::kEnvConfigPath,
               .type = "str",
               .default_value = Value(""),
               .parse = ParseEnvConfigPath,
               .doc = "JSON file configuring the running-data recorder (rdr.enable, rdr.mode, "
                      "rdr.path) and memory reuse (sys.mem_Reuse); checked when set."},
              {.name = keys::kPynativeSynchronize,
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .doc = "In PYNATIVE_MODE wait for each operator to finish, so errors point at the "
                      "line that caused them."},
              {.name = keys::kPynativeQueueDepth,
               .type = "int",
               .default_value = Value(int64_t{64}),
               .parse = ParseIntRange(1, int64_t{1} << 20, /*allow_bool=*/false),
               .device_note = "An msrt key: MindSpore has no bound on its PYNATIVE launch queue.",
               .doc = "Operators PYNATIVE_MODE may queue ahead of the kernels that run them (1 to "
                      "1048576); a caller launching more waits, so a loop that never reads a value "
                      "keeps bounded memory."},
              {.name = keys::kEnableDump,
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt's kernel data dump works on every device.",
               .doc = "Write every executed kernel's inputs and outputs as .npy files under "
                      "save_dump_path/rank_<id>/<graph or pynative>/<iteration>/, with an index "
                      "(docs/observability.md)."},
              {.name = keys::kSaveDumpPath,
               .type = "str",
               .default_value = Value("."),
               .parse = ParsePath(),
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt's kernel data dump works on every device.",
               .doc = "Directory for the data written by enable_dump; a relative path is taken from "
                      "the working directory when a kernel runs."},
              {.name = keys::kEnableProfiling,
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt's profiler honours it on every device.",
               .doc = "Profile kernels (and training steps) as profiling_options says; turning it "
                      "off, or the end of the process, writes <output>/profiler/trace_<rank>.json "
                      "and op_summary_<rank>.csv."},
              {.name = keys::kProfilingOptions,
               .type = "str",
               .default_value = Value("training_trace"),
               .parse = ParseProfilingOptions,
               .mindspore_devices = kAscendOnly,
               .device_note = "msrt's profiler honours it on every device.",
               .doc = "What the profiler collects: a trace name such as \"training_trace\" or a "
                      "JSON object like '{\"output\": \"/dir\", \"training_trace\": \"on\"}' "
                      "(default folder ./data); read when enable_profiling turns on."},

              // --- Device-specific -------------------------------------------------
              {.name = "ascend_config",
               .type = "dict",
               .default_value = SubDictDefault(AscendConfigKeys()),
               .parse = ParseSubDict(AscendConfigKeys()),
               .devices = kAscendOnly,
               .mindspore_devices = kAscendOnly,
               .affects_compile = true,
               .doc = "Ascend (CANN) options: precision_mode, jit_compile, atomic_clean_policy, "
                      "matmul/conv_allow_hf32, op_precision_mode, parallel_speed_up_json_path, "
                      "exception_dump, ge_options, host_scheduling_max_threshold, op_debug_option."},
              {.name = "gpu_config",
               .type = "dict",
               .default_value = SubDictDefault(GpuConfigKeys()),
               .parse = ParseSubDict(GpuConfigKeys()),
               .devices = kGPUOnly,
               .mindspore_devices = kGPUOnly,
               .affects_compile = true,
               .doc = "GPU options: cuDNN convolution algorithms (conv_fprop/dgrad/wgrad_algo) and "
                      "TF32 switches (conv_allow_tf32, matmul_allow_tf32)."},
              {.name = "disable_format_transform",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .devices = kGPUOnly,
               .mindspore_devices = kGPUOnly,
               .affects_compile = true,
               .doc = "Skip the automatic NCHW to NHWC layout change (try it when float16 runs "
                      "slower than float32)."},
              {.name = "auto_tune_mode",
               .type = "str",
               .default_value = Value("NO_TUNE"),
               .parse = ParseStringChoice({"NO_TUNE", "RL", "GA", "RL,GA", "GA,RL"}),
               .devices = kAscendOnly,
               .mindspore_devices = kAscendOnly,
               .deprecation = {.since = Profile::kR2_3,
                               .action = DeprecationAction::kWarnAndIgnore,
                               .advice = "Use 'aoe_tune_mode' instead."},
               .doc = "Operator tiling search while compiling: reinforcement learning (RL), "
                      "genetic algorithm (GA) or both."},
              {.name = "aoe_tune_mode",
               .type = "str",
               .default_value = Value(""),
               .parse = OrUnsetWhenLoading(ParseStringChoice({"online", "offline"})),
               .devices = kAscendOnly,
               .mindspore_devices = kAscendOnly,
               .doc = "AOE tuning: \"online\" tunes while compiling, \"offline\" saves graphs for "
                      "later tuning. Unset by default."},
              {.name = "aoe_config",
               .type = "dict",
               .default_value = SubDictDefault(AoeConfigKeys()),
               .parse = ParseSubDict(AoeConfigKeys()),
               .devices = kAscendOnly,
               .mindspore_devices = kAscendOnly,
               .doc = "AOE options: job_type \"1\" (subgraph tuning) or \"2\" (operator tuning, "
                      "default)."},

              // --- r0.x MindSpore Lite export --------------------------------------
              {.name = "save_ms_model",
               .type = "bool",
               .default_value = Value(false),
               .parse = ParseBool(),
               .deprecation = kIgnoredSinceR1_0,
               .doc = "Export a MindSpore Lite model after compiling (r0.5 only)."},
              {.name = "save_ms_model_path",
               .type = "str",
               .default_value = Value("./model.ms"),
               .parse = ParsePath(),
               .deprecation = kIgnoredSinceR1_0,
               .doc = "Where save_ms_model writes the model (r0.5 only)."},
          },
      .moved = {{"precision_mode", "ascend_config"},
                {"jit_compile", "ascend_config"},
                {"atomic_clean_policy", "ascend_config"},
                {"matmul_allow_hf32", "ascend_config"},
                {"conv_allow_hf32", "ascend_config"},
                {"op_precision_mode", "ascend_config"},
                {"host_scheduling_max_threshold", "ascend_config"},
                {"ge_options", "ascend_config"},
                {"op_debug_option", "ascend_config"}},
      .unknown_key = UnknownKeyMessage,
  };
}

}  // namespace

const FamilyTable& RuntimeTable() {
  static const FamilyTable table = MakeRuntimeTable();
  return table;
}

// Typed handles (options.h) of the records above that the runtime reads.
namespace runtime_options {
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, DeviceTarget, keys::kDeviceTarget)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, DeviceId, keys::kDeviceId)
MSRT_OPTION_HANDLE(Family::kRuntime, double, MaxDeviceMemory, keys::kMaxDeviceMemory)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, VariableMemoryMaxSize, keys::kVariableMemoryMaxSize)
MSRT_OPTION_HANDLE(Family::kRuntime, double, MempoolBlockSize, keys::kMempoolBlockSize)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, MemoryOptimizeLevel, keys::kMemoryOptimizeLevel)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, RuntimeNumThreads, keys::kRuntimeNumThreads)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, InterOpParallelNum, keys::kInterOpParallelNum)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, OpTimeout, keys::kOpTimeout)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, Deterministic, keys::kDeterministic)
MSRT_OPTION_HANDLE(Family::kRuntime, bool, PynativeSynchronize, keys::kPynativeSynchronize)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, PynativeQueueDepth, keys::kPynativeQueueDepth)
MSRT_OPTION_HANDLE(Family::kRuntime, bool, EnableGraphKernel, keys::kEnableGraphKernel)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, GraphKernelFlags, keys::kGraphKernelFlags)
MSRT_OPTION_HANDLE(Family::kRuntime, Value, JitConfig, keys::kJitConfig)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, JitSyntaxLevel, keys::kJitSyntaxLevel)
MSRT_OPTION_HANDLE(Family::kRuntime, bool, EnableCompileCache, keys::kEnableCompileCache)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, CompileCachePath, keys::kCompileCachePath)
MSRT_OPTION_HANDLE(Family::kRuntime, bool, EnableReducePrecision, keys::kEnableReducePrecision)
MSRT_OPTION_HANDLE(Family::kRuntime, int64_t, SaveGraphs, keys::kSaveGraphs)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, SaveGraphsPath, keys::kSaveGraphsPath)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, EnvConfigPath, keys::kEnvConfigPath)
MSRT_OPTION_HANDLE(Family::kRuntime, bool, EnableDump, keys::kEnableDump)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, SaveDumpPath, keys::kSaveDumpPath)
MSRT_OPTION_HANDLE(Family::kRuntime, bool, EnableProfiling, keys::kEnableProfiling)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, ProfilingOptions, keys::kProfilingOptions)
MSRT_OPTION_HANDLE(Family::kRuntime, std::string, PrintFilePath, keys::kPrintFilePath)

}  // namespace runtime_options

}  // namespace msrt::context
