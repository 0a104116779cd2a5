// Running a fused elementwise chain (graph-kernel fusion, see Note
// [Elementwise fusion] in src/compiler/fusion.cc).
//
// The output is split into tiles small enough to stay in cache; each tile
// runs every step's own vectorised kernel on views of the inputs and on
// per-step tile buffers, so a chain reads its inputs and writes its output
// once. Tiles are spread over the runtime thread pool, at least a kernel's
// grain of elements per thread: a chain over a small tensor runs on the
// calling thread.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace msrt::runtime {

struct FusedPlan {
  struct Step {
    const ops::OpDef* op;
    const kernels::KernelDef* kernel;
    Dict attrs;
    std::vector<int32_t> operands;  // >= 0: a fused-node input; < 0: step (-k - 1)
    DType dtype;
  };
  std::vector<Step> steps;
  std::vector<int32_t> output_of_step;  // per step: the node output it writes, or -1
  Shape shape;                          // of every full-size operand and of the outputs
};

/// Builds the plan of fused node `node` for `device`; TypeError if a step has no kernel.
FusedPlan BuildFusedPlan(const ir::Graph& graph, int32_t node, DeviceTarget device);

/// How many pieces a fused loop over `elements` elements splits its tiles
/// into with `threads` threads (1: it runs on the calling thread).
int64_t FusedLoopChunks(int64_t elements, int threads);

/// The kernel executors launch for fused nodes (its KernelArgs::plan is a FusedPlan).
const kernels::KernelDef& FusedKernel();
/// The op fused nodes are launched as (named "fused_elementwise").
const ops::OpDef& FusedOp();

}  // namespace msrt::runtime
