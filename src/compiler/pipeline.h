// The compile pipeline: a captured graph in, an executable out.
//
// Stages (each one an `<NN>_<stage>_<graph id>.ir` file with save_graphs >= 1):
//   capture   the traced program, forward and backward;
//   optimize  algebraic simplification, constant folding, CSE, DCE to a fixpoint;
//   backend   channels-last layout, graph-kernel fusion (its own stage, when
//             enabled), kernel selection, memory plan.
// The passes of each phase come from the pass table (Note [Pass table] in
// pass_manager.h). save_graphs >= 2 adds one file per pass and the execution
// order; 3 adds graphviz `.dot` files. The context keys are read once per
// compile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/graph_executor.h"

namespace msrt::compiler {

struct CompileReport {
  int64_t graph_id = 0;
  size_t captured_ops = 0;        // op nodes before optimisation
  size_t final_ops = 0;           // kernels executed per run
  size_t fused_chains = 0;        // elementwise chains fused into one kernel
  size_t fused_epilogues = 0;     // elementwise ops moved into a conv/matmul kernel
  size_t in_place_tails = 0;      // elementwise ops run in place right after such a kernel (Note [In-place tails])
  size_t fused_pairs = 0;         // producer + consumer pairs run as one op (conv2d + bias_add)
  size_t channels_last_ops = 0;   // ops run on NHWC activations (Note [Channels-last graphs])
  size_t layout_conversions = 0;  // transposes added where NHWC values meet NCHW ones
  // Note [float16 held in float32] (compiler/half_in_float32.h):
  size_t float16_in_float32_ops = 0;  // ops computing float16 values in float32
  size_t float16_roundings = 0;       // round_to_float16 ops added after them
  size_t float16_conversions = 0;     // casts added where held values meet ops that keep float16
  std::string float16_kept;           // "op x2, ...": ops that keep float16 values
  double optimize_seconds = 0;
  double backend_seconds = 0;
  std::vector<std::pair<std::string, double>> pass_seconds;  // every pass run, in order
  std::vector<std::string> files;                            // IR files written
};

struct Compiled {
  std::shared_ptr<runtime::GraphExecutable> executable;
  /// The graph after the front end (before fusion): what the compile cache and ms.export save.
  std::shared_ptr<const ir::Graph> optimized;
  CompileReport report;
};

/// Optimises `graph` (in place) and builds its executable, following the
/// context's compile keys (save_graphs, memory_optimize_level, device_target...).
/// With `front_end` false (a graph loaded from the compile cache or a file)
/// the capture and optimize stages are skipped.
Compiled Compile(const std::shared_ptr<ir::Graph>& graph, int64_t graph_id, bool front_end = true);

/// A new id for a graph about to be captured (used in IR file names).
int64_t NextGraphId();

}  // namespace msrt::compiler
