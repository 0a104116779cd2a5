#include "compiler/pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compiler/fusion.h"
#include "compiler/layout.h"
#include "compiler/pass_manager.h"
#include "core/file_io.h"
#include "context/graph_kernel_flags.h"
#include "context/options.h"
#include "memory/allocator.h"
#include "runtime/eager.h"
#include "runtime/rank.h"
#include "msrt/context/context.h"

namespace msrt::compiler {
namespace {

namespace opts = context::runtime_options;

// save_graphs: one file per stage (level 1), per pass and the execution
// order (2), graphviz and detailed sources (3).
class IrDumper final : public PassInstrument {
 public:
  IrDumper(int level, std::filesystem::path dir, int64_t graph_id, CompileReport& report)
      : level_(level), dir_(std::move(dir)), graph_id_(graph_id), report_(report) {}

  void AfterStage(std::string_view stage, const ir::Graph& graph) override {
    if (level_ >= 1) Write(stage, graph);
  }
  void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) override {
    (void)changed;
    (void)seconds;
    if (level_ >= 2) Write(pass, graph);
  }
  void Artifact(std::string_view name, int min_level, const std::string& text) override {
    if (level_ >= min_level) WriteFile(StrCat(Prefix(name), ".ir"), text);
  }

 private:
  std::string Prefix(std::string_view what) {
    char number[8];
    std::snprintf(number, sizeof number, "%02d", index_++);
    char id[16];
    std::snprintf(id, sizeof id, "%04lld", static_cast<long long>(graph_id_));
    return StrCat(number, "_", what, "_", id);
  }
  void Write(std::string_view what, const ir::Graph& graph) {
    std::string prefix = Prefix(what);
    WriteFile(prefix + ".ir", ir::PrintText(graph));
    if (level_ >= 3) WriteFile(prefix + ".dot", ir::PrintDot(graph));
  }
  void WriteFile(const std::string& name, const std::string& text) {
    std::filesystem::path path = dir_ / name;
    try {
      CreateDirectories(dir_.string());
      WriteFileAtomic(path.string(), text, Durability::kNoSync);
    } catch (const OSError& e) {
      throw OSError(StrCat("save_graphs: ", e.message()));
    }
    report_.files.push_back(path.string());
  }

  int level_;
  std::filesystem::path dir_;
  int64_t graph_id_;
  CompileReport& report_;
  int index_ = 0;
};

class Verifier final : public PassInstrument {
 public:
  void AfterStage(std::string_view stage, const ir::Graph& graph) override { ir::Verify(graph, stage); }
  void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) override {
    (void)seconds;
    if (changed) ir::Verify(graph, pass);
  }
};

class PassTimer final : public PassInstrument {
 public:
  explicit PassTimer(CompileReport& report) : report_(report) {}
  void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) override {
    (void)graph;
    (void)changed;
    report_.pass_seconds.emplace_back(std::string(pass), seconds);
  }

 private:
  CompileReport& report_;
};

// The verifier runs after every pass in debug builds, and wherever
// MSRT_VERIFY_IR=1 (the test suites set it).
bool VerifyEnabled() {
  const char* env = std::getenv("MSRT_VERIFY_IR");
  if (env != nullptr) return std::string_view(env) == "1";
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::atomic<int64_t> g_next_graph_id{0};

const bool kConsumersDeclared = [] {
  const context::OptionKey* keys[] = {&opts::SaveGraphs(),    &opts::SaveGraphsPath(),    &opts::MemoryOptimizeLevel(),
                                      &opts::EnvConfigPath(), &opts::EnableGraphKernel(), &opts::GraphKernelFlags()};
  for (const context::OptionKey* key : keys) context::Global().DeclareConsumer(*key, "graph compiler");
  return true;
}();

}  // namespace

int64_t NextGraphId() { return g_next_graph_id.fetch_add(1); }

Compiled Compile(std::shared_ptr<ir::Graph> graph, int64_t graph_id, bool front_end) {
  Compiled result;
  CompileReport& report = result.report;
  report.graph_id = graph_id;
  report.captured_ops = graph->OpCount();

  PassManager manager;
  if (VerifyEnabled()) manager.AddInstrument(std::make_shared<Verifier>());
  manager.AddInstrument(std::make_shared<PassTimer>(report));
  // MS_DEV_SAVE_GRAPHS / MS_DEV_SAVE_GRAPHS_PATH win over the context values.
  int64_t level = opts::SaveGraphs().Effective();
  if (level > 0) {
    std::string dir = opts::SaveGraphsPath().Effective();
    std::filesystem::path path = dir.empty() ? "." : dir;
    // Distributed runs (a rank is known) write under rank_<id>/.
    if (std::getenv("RANK_ID") != nullptr || runtime::RankId() > 0) path /= StrCat("rank_", runtime::RankId());
    manager.AddInstrument(std::make_shared<IrDumper>(static_cast<int>(level), path, graph_id, report));
  }

  auto start = std::chrono::steady_clock::now();
  if (front_end) {
    manager.EndStage("capture", *graph);
    manager.RunStage("optimize", *graph,
                     {{"simplify_algebra", SimplifyAlgebra},
                      {"fold_constants", FoldConstants},
                      {"eliminate_common_subexpressions", EliminateCommonSubexpressions},
                      {"eliminate_dead_code", EliminateDeadCode}},
                     /*max_rounds=*/4);
  } else {
    manager.EndStage("loaded", *graph);
  }
  report.optimize_seconds = Since(start);
  result.optimized = std::make_shared<ir::Graph>(*graph);

  start = std::chrono::steady_clock::now();
  runtime::GraphOptions options;
  options.device = runtime::CurrentDevice();
  RequireDevice(options.device, opts::DeviceId().Get());  // the same error PYNATIVE_MODE raises
  // Graph-kernel fusion: enable_graph_kernel, or graph_kernel_flags --opt_level >= 1
  // (MS_DEV_GRAPH_KERNEL_FLAGS wins); bad flags warned when they were set.
  context::GraphKernelFlags flags = context::ParseGraphKernelFlags(
      opts::GraphKernelFlags().Effective(), opts::EnableGraphKernel().Get(),
      /*graph_mode=*/true, nullptr);
  std::string decisions;
  // Channels-last activations (Note [Channels-last graphs]), before fusion
  // so that fused chains run on them too.
  if (std::find(flags.disable_pass.begin(), flags.disable_pass.end(), kChannelsLastPass) == flags.disable_pass.end()) {
    manager.RunPasses(*graph, {{std::string(kChannelsLastPass),
                                [&](ir::Graph& g) {
                                  LayoutStats stats;
                                  bool changed = UseChannelsLast(g, options.device, &decisions, &stats);
                                  report.channels_last_ops = stats.channels_last_ops;
                                  report.layout_conversions = stats.layout_conversions;
                                  return changed;
                                }}});
  }
  if (flags.enabled()) {
    manager.RunStage("graph_kernel_fusion", *graph,
                     {{"fuse_epilogues", [&](ir::Graph& g) { return FuseEpilogues(g, options.device, &decisions); }},
                      {"fuse_elementwise", [&](ir::Graph& g) { return FuseElementwise(g, options.device, &decisions); }}});
    for (size_t at = decisions.find("fused "); at != std::string::npos; at = decisions.find("\nfused ", at + 1)) {
      ++report.fused_chains;
    }
    for (size_t at = decisions.find("epilogue "); at != std::string::npos; at = decisions.find("\nepilogue ", at + 1)) {
      ++report.fused_epilogues;
    }
    if (flags.dump_as_text) {
      std::filesystem::path dir = "graph_kernel_dump";
      std::filesystem::path file = dir / StrCat("fusion_", graph_id, ".txt");
      try {
        CreateDirectories(dir.string());
        WriteFileAtomic(file.string(),
                        StrCat("# graph-kernel fusion of graph '", graph->name(), "' (", report.fused_chains,
                               " chains)\n", decisions),
                        Durability::kNoSync);
      } catch (const OSError& e) {
        throw OSError(StrCat("graph_kernel_flags --dump_as_text: ", e.message()));
      }
      std::error_code ec;
      std::filesystem::path absolute = std::filesystem::absolute(file, ec);
      report.files.push_back(ec ? file.string() : absolute.string());
    }
  }
  options.memory_level = static_cast<int>(opts::MemoryOptimizeLevel().Get());
  options.buffer_reuse = memory::BufferReuseEnabled();  // env_config_path: sys.mem_Reuse
  manager.EndStage("backend", *graph);
  result.executable = std::make_shared<runtime::GraphExecutable>(graph, options);
  report.backend_seconds = Since(start);
  report.final_ops = graph->OpCount();
  manager.Artifact("execution_order", 2, result.executable->ExecutionOrderText());
  return result;
}

}  // namespace msrt::compiler
