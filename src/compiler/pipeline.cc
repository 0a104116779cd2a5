#include "compiler/pipeline.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "compiler/pass_manager.h"
#include "context/graph_kernel_flags.h"
#include "context/options.h"
#include "core/file_io.h"
#include "memory/allocator.h"
#include "msrt/context/context.h"
#include "runtime/eager.h"
#include "runtime/rank.h"

namespace msrt::compiler {
namespace {

namespace opts = context::runtime_options;

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::atomic<int64_t> g_next_graph_id{0};

const bool kConsumersDeclared = [] {
  const context::OptionKey* keys[] = {&opts::SaveGraphs(),    &opts::SaveGraphsPath(),    &opts::MemoryOptimizeLevel(),
                                      &opts::EnvConfigPath(), &opts::EnableGraphKernel(), &opts::GraphKernelFlags(),
                                      &opts::JitConfig()};
  for (const context::OptionKey* key : keys) context::Global().DeclareConsumer(*key, "graph compiler");
  return true;
}();

}  // namespace

int64_t NextGraphId() { return g_next_graph_id.fetch_add(1); }

Compiled Compile(const std::shared_ptr<ir::Graph>& graph, int64_t graph_id, bool front_end) {
  Compiled result;
  CompileReport& report = result.report;
  report.graph_id = graph_id;
  report.captured_ops = graph->OpCount();
  memory::ReleaseFreeHostHeap();  // Note [Freed host heap]: before the compiler's own temporaries

  // Timing, the verifier and save_graphs' IR dumps are the pass manager's.
  PassManager manager = PassManager::ForCompile(graph_id, {&report.pass_seconds, &report.files});
  // Graph-kernel fusion: enable_graph_kernel, or graph_kernel_flags --opt_level >= 1
  // (MS_DEV_GRAPH_KERNEL_FLAGS wins); bad flags warned when they were set.
  // Its --enable_pass / --disable_pass lists switch table passes (Note [Pass table]).
  PassContext passes;
  passes.flags = context::ParseGraphKernelFlags(opts::GraphKernelFlags().Effective(), opts::EnableGraphKernel().Get(),
                                                /*graph_mode=*/true, nullptr);
  passes.jit_level = ParseJitLevel(opts::JitConfig().Get().as_dict().Find("jit_level")->as_string());

  auto start = std::chrono::steady_clock::now();
  if (front_end) {
    manager.EndStage("capture", *graph);
    manager.RunPhase(Phase::kOptimize, *graph, passes);
  } else {
    manager.EndStage("loaded", *graph);
  }
  report.optimize_seconds = Since(start);
  result.optimized = std::make_shared<ir::Graph>(*graph);

  start = std::chrono::steady_clock::now();
  runtime::GraphOptions options;
  options.device = runtime::CurrentDevice();
  RequireDevice(options.device, opts::DeviceId().Get());  // the same error PYNATIVE_MODE raises
  passes.device = options.device;
  // Channels-last activations (Note [Channels-last graphs]), before fusion
  // so that fused chains run on them too.
  manager.RunPhase(Phase::kLayout, *graph, passes);
  report.channels_last_ops = passes.channels_last_ops;
  report.layout_conversions = passes.layout_conversions;
  report.float16_in_float32_ops = passes.float16_in_float32_ops;
  report.float16_roundings = passes.float16_roundings;
  report.float16_conversions = passes.float16_conversions;
  report.float16_kept = passes.float16_kept;
  auto count_lines = [&passes](std::string_view prefix) {
    const std::string& decisions = passes.decisions;
    size_t count = 0;
    for (size_t at = 0; at < decisions.size();) {
      if (decisions.compare(at, prefix.size(), prefix) == 0) ++count;
      size_t end = decisions.find('\n', at);
      if (end == std::string::npos) break;
      at = end + 1;
    }
    return count;
  };
  if (SwitchOn(PassSwitch::kGraphKernel, passes)) {
    manager.RunPhase(Phase::kGraphKernelFusion, *graph, passes);
    report.fused_chains = count_lines("fused ");
    if (passes.flags.dump_as_text) {
      std::filesystem::path dir = "graph_kernel_dump";
      std::filesystem::path file = dir / StrCat("fusion_", graph_id, ".txt");
      try {
        CreateDirectories(dir.string());
        WriteFileAtomic(file.string(),
                        StrCat("# graph-kernel fusion of graph '", graph->name(), "' (", report.fused_chains,
                               " chains)\n", passes.decisions),
                        Durability::kNoSync);
      } catch (const OSError& e) {
        throw OSError(StrCat("graph_kernel_flags --dump_as_text: ", e.message()));
      }
      std::error_code ec;
      std::filesystem::path absolute = std::filesystem::absolute(file, ec);
      report.files.push_back(ec ? file.string() : absolute.string());
    }
  }
  report.fused_epilogues = count_lines("epilogue ");
  report.fused_pairs = count_lines("pair ");
  report.in_place_tails = count_lines("tail ");
  options.memory_level = static_cast<int>(opts::MemoryOptimizeLevel().Get());
  options.buffer_reuse = memory::BufferReuseEnabled();  // env_config_path: sys.mem_Reuse
  manager.EndStage("backend", *graph);
  result.executable = std::make_shared<runtime::GraphExecutable>(graph, options);
  report.backend_seconds = Since(start);
  report.final_ops = graph->OpCount();
  manager.Artifact("execution_order", 2, result.executable->ExecutionOrderText());
  memory::ReleaseFreeHostHeap();  // Note [Freed host heap]
  return result;
}

}  // namespace msrt::compiler
