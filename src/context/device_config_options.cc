// The sub-keys of set_context's dict-valued keys: the device-specific
// ascend_config, gpu_config and aoe_config, and jit_config.
#include "context/device_config_options.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/json_depth.h"

namespace msrt::context {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// --- ascend_config -----------------------------------------------------------

/// An existing regular file named by a sub-key; stored as an absolute path.
std::string ExistingFile(const Value& in, const KeyEnv& env) {
  std::string path = RealPath(PathText(in, env));
  std::error_code ec;
  if (in.as_string().empty() || !fs::is_regular_file(path, ec)) {
    env.FailValue("should be the path of an existing file", in);
  }
  return path;
}

Value ParseOpPrecisionMode(const Value& in, const KeyEnv& env) {
  if (env.loading) return ParseString()(in, env);
  return Value(ExistingFile(in, env));
}

constexpr std::string_view kSpeedUpBoolKeys[] = {
    "recompute_comm_overlap",    "matmul_grad_comm_overlap",    "enable_task_opt",
    "enable_grad_comm_opt",      "interleaved_matmul_comm",     "interleaved_layernorm_comm",
    "enable_opt_shard_comm_opt", "enable_concat_eliminate_opt", "enable_begin_end_inline_opt"};
constexpr std::string_view kSpeedUpLevelKey = "compute_communicate_fusion_level";

Value ParseSpeedUpJsonPath(const Value& in, const KeyEnv& env) {
  if (in.is_none()) return Value("");
  if (!in.is_string()) env.FailType("str or None", in);
  if (env.loading || in.as_string().empty()) return in;
  std::string path = ExistingFile(in, env);
  auto fail = [&](std::string_view why) {
    env.Fail(ErrorKind::kValue, StrCat("the speed-up config file '", Printable(path), "' given as '", env.key,
                                       "' is invalid: ", why, "."));
  };
  std::ifstream file(path, std::ios::binary);
  if (!file) fail("it cannot be opened");
  // Bounded: a path may name a huge "regular" file such as /proc/kcore.
  constexpr size_t kMaxBytes = size_t{16} << 20;
  std::string text;
  char buffer[1 << 16];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(file.gcount()));
    if (text.size() > kMaxBytes) fail("it is larger than 16 MiB");
  }
  if (file.bad()) fail("it cannot be read");
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    fail(StrCat("it nests arrays or objects deeper than ", kMaxJsonDepth, " levels"));
  }
  Json config;
  try {
    config = Json::parse(text);  // nesting checked above
  } catch (const Json::exception& e) {
    fail(StrCat("it is not valid JSON (", Printable(e.what()), ")"));
  }
  if (!config.is_object()) fail("the top level should be a JSON object");
  for (const auto& [key, value] : config.get_ref<const Json::object_t&>()) {
    if (key == kSpeedUpLevelKey) {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > 3) {
        fail(StrCat("'", key, "' should be an integer in [0, 3]"));
      }
    } else if (std::find(std::begin(kSpeedUpBoolKeys), std::end(kSpeedUpBoolKeys), key) != std::end(kSpeedUpBoolKeys)) {
      if (!value.is_boolean()) fail(StrCat("'", key, "' should be true or false"));
    } else {
      fail(StrCat("unknown key '", Printable(key), "'; the keys it takes are ",
                  "recompute_comm_overlap, matmul_grad_comm_overlap, enable_task_opt, "
                  "enable_grad_comm_opt, interleaved_matmul_comm, interleaved_layernorm_comm, "
                  "enable_opt_shard_comm_opt, enable_concat_eliminate_opt, "
                  "enable_begin_end_inline_opt and compute_communicate_fusion_level"));
    }
  }
  return Value(path);
}

/// {"global": {str: str}, "session": {str: str}}: options handed to CANN.
Value ParseGeOptions(const Value& in, const KeyEnv& env) {
  if (!in.is_dict()) env.FailType("dict", in);
  for (const auto& [section, options] : in.as_dict()) {
    if (section != "global" && section != "session") {
      env.Fail(ErrorKind::kValue, StrCat("the key '", Printable(section), "' of the argument '", env.key,
                                         "' is not recognized; the keys it takes are "
                                         "['global', 'session']."));
    }
    if (!options.is_dict()) {
      env.Fail(ErrorKind::kType, StrCat("the parameter '", env.key, "['", section, "']' must be dict, but got ",
                                        options.type_name(), " (", options.repr(), ")."));
    }
    for (const auto& [name, value] : options.as_dict()) {
      if (!value.is_string()) {
        env.Fail(ErrorKind::kType, StrCat("the option '", Printable(name), "' in '", env.key, "['", section,
                                          "']' must be str, but got ", value.type_name(), " (", value.repr(), ")."));
      }
    }
  }
  return in;
}

}  // namespace

std::vector<SubKey> AscendConfigKeys() {
  return {
      {.name = "precision_mode",
       .default_value = Value(""),
       .parse = OrUnsetWhenLoading(
           ParseStringChoice({"force_fp16", "allow_fp32_to_fp16", "allow_mix_precision", "must_keep_origin_dtype",
                              "force_fp32", "force_lowerprecision", "allow_fp32_to_bf16", "allow_fp32_to_lowprecision",
                              "allow_mix_precision_fp16", "allow_mix_precision_bf16"})),
       .doc = "how CANN may lower float precision; unset lets CANN choose"},
      {.name = "jit_compile",
       .default_value = Value(false),
       .parse = ParseBool(),
       .doc = "compile operators online (True) or prefer prebuilt binaries (False)"},
      {.name = "atomic_clean_policy",
       .default_value = Value(int64_t{1}),
       .parse = ParseIntChoice({0, 1}, "should be 0 or 1"),
       .doc = "0 clears atomic operators' memory all at once, 1 per operator"},
      {.name = "matmul_allow_hf32",
       .default_value = Value(false),
       .parse = ParseBool(),
       .doc = "let MatMul operators compute float32 in HF32"},
      {.name = "conv_allow_hf32",
       .default_value = Value(true),
       .parse = ParseBool(),
       .doc = "let convolution operators compute float32 in HF32"},
      {.name = "op_precision_mode",
       .default_value = Value(""),
       .parse = ParseOpPrecisionMode,
       .doc = "path of an operator precision-mode file (must exist)"},
      {.name = "parallel_speed_up_json_path",
       .default_value = Value(""),
       .parse = ParseSpeedUpJsonPath,
       .doc = "path of a JSON file of communication/computation overlap switches, or None"},
      {.name = "exception_dump",
       .default_value = Value("2"),
       .parse = ParseStringChoice({"0", "1", "2"}),
       .doc = R"("0" off, "1" dump inputs and outputs of failing operators, "2" inputs only)"},
      {.name = "ge_options",
       .default_value = Value(Dict{}),
       .parse = ParseGeOptions,
       .doc = "raw CANN options: {'global': {...}, 'session': {...}}, str to str"},
      {.name = "host_scheduling_max_threshold",
       .default_value = Value(int64_t{0}),
       .parse = ParseIntRange(0, INT64_MAX, /*allow_bool=*/false),
       .doc = "static root graphs with fewer nodes are scheduled as dynamic-shape graphs"},
      {.name = "op_debug_option",
       .default_value = Value(""),
       .parse = OrUnsetWhenLoading(ParseStringChoice({"oom"})),
       .doc = R"("oom" checks operators' memory accesses for overruns; unset by default)"},
  };
}

// --- gpu_config --------------------------------------------------------------

std::vector<SubKey> GpuConfigKeys() {
  // The r2.3 page documents "implicit_precomp_gemm"; MindSpore's code takes
  // "precomp_gemm". Both are accepted and stored as the latter.
  std::vector<std::pair<std::string_view, Value>> fprop;
  for (std::string_view algo : {"normal", "performance", "implicit_gemm", "precomp_gemm", "gemm", "direct", "fft",
                                "fft_tiling", "winograd", "winograd_nonfused"}) {
    fprop.emplace_back(algo, Value(algo));
  }
  fprop.emplace_back("implicit_precomp_gemm", Value("precomp_gemm"));
  return {
      {.name = "conv_fprop_algo",
       .default_value = Value("normal"),
       .parse = ParseStringMap(std::move(fprop)),
       .doc = "cuDNN forward convolution algorithm; normal = heuristic, performance = fastest"},
      {.name = "conv_dgrad_algo",
       .default_value = Value("normal"),
       .parse = ParseStringChoice(
           {"normal", "performance", "algo_0", "algo_1", "fft", "fft_tiling", "winograd", "winograd_nonfused"}),
       .doc = "cuDNN convolution input-gradient algorithm"},
      {.name = "conv_wgrad_algo",
       .default_value = Value("normal"),
       .parse = ParseStringChoice(
           {"normal", "performance", "algo_0", "algo_1", "fft", "algo_3", "fft_tiling", "winograd_nonfused"}),
       .doc = "cuDNN convolution weight-gradient algorithm"},
      {.name = "conv_allow_tf32",
       .default_value = Value(true),
       .parse = ParseBool(),
       .doc = "let cuDNN convolutions use TF32 tensor cores"},
      {.name = "matmul_allow_tf32",
       .default_value = Value(false),
       .parse = ParseBool(),
       .doc = "let cuBLAS matrix products use TF32 tensor cores"},
  };
}

std::vector<SubKey> AoeConfigKeys() {
  return {{.name = "job_type",
           .default_value = Value("2"),
           .parse = ParseStringChoice({"1", "2"}),
           .doc = R"("1" tunes subgraphs, "2" tunes operators)"}};
}

// --- jit_config --------------------------------------------------------------
std::vector<SubKey> JitConfigKeys() {
  return {
      {.name = "jit_level",
       .default_value = Value(""),
       .parse = OrUnsetWhenLoading(ParseStringChoice({"O0", "O1", "O2"})),
       .doc = "O0 only the passes a graph needs, O1 every optimisation and graph-kernel fusion, O2 as O1 "
              "(whole-graph sinking is Ascend's); unset: msrt's defaults"},
      {.name = "infer_boost",
       .default_value = Value("off"),
       .parse = ParseStringChoice({"on", "off"}),
       .doc = "Ascend's inference acceleration (jit_level O0 only)"},
  };
}

/// The sub-dict, then the relation MindSpore checks between its keys, and
/// warnings for the values that act only on Ascend.
Value ParseJitConfig(const Value& in, const KeyEnv& env) {
  static const Parser parse_dict = ParseSubDict(JitConfigKeys());
  Value out = parse_dict(in, env);
  if (env.loading) return out;
  const std::string& level = out.as_dict().Find("jit_level")->as_string();
  bool boost = out.as_dict().Find("infer_boost")->as_string() == "on";
  if (boost && (level == "O1" || level == "O2")) {
    env.Fail(ErrorKind::kValue, StrCat("infer_boost 'on' of the argument '", env.key,
                                       "' only works with jit_level 'O0', but got jit_level '", level, "'."));
  }
  if (level == "O2") {
    env.Warn(WarningKind::kNotApplicable,
             StrCat("For '", env.function, "', jit_level 'O2' of the argument '", env.key,
                    "' sinks whole graphs on Ascend; on CPU and GPU msrt compiles it as 'O1'."));
  }
  if (boost) {
    env.Warn(WarningKind::kNotApplicable, StrCat("For '", env.function, "', infer_boost 'on' of the argument '",
                                                 env.key, "' acts on Ascend only; msrt ignores it here."));
  }
  return out;
}

}  // namespace msrt::context
