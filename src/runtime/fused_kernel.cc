#include "runtime/fused_kernel.h"

#include <memory>

#include "core/thread_pool.h"
#include "kernels/cpu/elementwise_loops.h"

namespace msrt::runtime {
namespace {

// Elements per tile: every step's tile buffer of a chain fits in L2 together.
constexpr int64_t kTile = 4096;
// Tiles per thread at least: as many elements as an elementwise kernel gives
// a thread (kernels/cpu/elementwise_loops.h). A chain over fewer than two
// such grains runs on the calling thread, as its ops would one by one,
// instead of waking the pool for a few microseconds of work (a ResNet
// block's activation at batch 1 took 54 us instead of 6 under load).
constexpr int64_t kTilesPerThread = (kernels::cpu::kGrain + kTile - 1) / kTile;

bool RunsInline(int64_t elements) { return elements < 2 * kernels::cpu::kGrain; }

std::shared_ptr<TensorImpl> View(const Tensor& base, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.impl()->storage;
  impl->offset = base.impl()->offset;
  impl->shape = shape;
  impl->dtype = base.dtype();
  return impl;
}

void RunFused(kernels::KernelArgs& args) {
  const auto& plan = *static_cast<const FusedPlan*>(args.plan);
  const int64_t total = NumElements(plan.shape);
  const int64_t tiles = (total + kTile - 1) / kTile;
  const std::vector<Tensor>& inputs = args.inputs;
  const std::vector<Tensor>& outputs = args.outputs;
  auto run = [&](int64_t first_tile, int64_t end_tile) {
    // Views made once per chunk; each tile moves their offsets.
    std::vector<Tensor> operand_views(inputs.size());
    std::vector<size_t> base_offsets(inputs.size());
    std::vector<bool> full(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      full[i] = inputs[i].numel() != 1 || total == 1;
      operand_views[i] = Tensor(View(inputs[i], full[i] ? Shape{kTile} : Shape{}));
      base_offsets[i] = inputs[i].impl()->offset;
    }
    // A step's tile result: a view of the node output it is, or a scratch tile.
    std::vector<Tensor> results(plan.steps.size());
    std::vector<size_t> result_offsets(plan.steps.size(), 0);
    for (size_t k = 0; k < plan.steps.size(); ++k) {
      int32_t out = plan.output_of_step[k];
      if (out >= 0) {
        results[k] = Tensor(View(outputs[static_cast<size_t>(out)], {kTile}));
        result_offsets[k] = outputs[static_cast<size_t>(out)].impl()->offset;
      } else {
        results[k] = Tensor::Empty({std::min(kTile, total)}, plan.steps[k].dtype, outputs[0].device());
      }
    }
    std::vector<Tensor> step_inputs;
    std::vector<Tensor> step_outputs(1);
    for (int64_t tile = first_tile; tile < end_tile; ++tile) {
      const int64_t begin = tile * kTile;
      const int64_t length = std::min(kTile, total - begin);
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!full[i]) continue;
        TensorImpl* v = operand_views[i].impl();
        v->offset = base_offsets[i] + static_cast<size_t>(begin) * ItemSize(v->dtype);
        v->shape[0] = length;
      }
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        TensorImpl* r = results[k].impl();
        r->shape[0] = length;
        if (plan.output_of_step[k] >= 0)
          r->offset = result_offsets[k] + static_cast<size_t>(begin) * ItemSize(r->dtype);
      }
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        const FusedPlan::Step& step = plan.steps[k];
        step_inputs.clear();
        for (int32_t operand : step.operands) {
          step_inputs.push_back(operand >= 0 ? operand_views[static_cast<size_t>(operand)]
                                             : results[static_cast<size_t>(-operand - 1)]);
        }
        step_outputs[0] = results[k];
        kernels::KernelArgs step_args{*step.op, step_inputs, step_outputs, step.attrs};
        step.kernel->run(step_args);
      }
    }
  };
  if (RunsInline(total)) {
    run(0, tiles);  // as an elementwise kernel would, on the calling thread
  } else {
    ParallelFor(tiles, kTilesPerThread, run);
  }
}

const ops::OpDef kFusedOp{
    .name = "fused_elementwise",
    .inputs = {"xs..."},
    .props = {.elementwise = true},
    .doc = "A chain of elementwise ops fused by graph-kernel fusion; made by the compiler, never called.",
};

const kernels::KernelDef kFusedKernel{.op = "fused_elementwise", .impl = "fused", .run = &RunFused};

}  // namespace

int64_t FusedLoopChunks(int64_t elements, int threads) {
  if (RunsInline(elements)) return 1;
  return SplitWork((elements + kTile - 1) / kTile, kTilesPerThread, threads).chunks;
}

FusedPlan BuildFusedPlan(const ir::Graph& graph, int32_t node, DeviceTarget device) {
  const ir::Node& n = graph.node(node);
  FusedPlan plan;
  plan.shape = n.outputs.at(0).shape;
  std::vector<ops::TensorMeta> step_metas;
  for (const ir::FusedOp& f : n.fused) {
    std::vector<ops::TensorMeta> metas;
    for (int32_t operand : f.operands) {
      metas.push_back(operand >= 0 ? graph.Meta(n.inputs.at(static_cast<size_t>(operand)))
                                   : step_metas.at(static_cast<size_t>(-operand - 1)));
    }
    const kernels::KernelDef* kernel = kernels::SelectKernel(f.op->name, device, metas, f.attrs);
    if (kernel == nullptr) {
      throw TypeError(StrCat("[", f.op->name, "] has no ", DeviceTargetName(device), " kernel inside fused node ",
                             graph.NodeName(node), "."));
    }
    plan.steps.push_back({f.op, kernel, f.attrs, f.operands, f.output.dtype});
    step_metas.push_back(f.output);
  }
  plan.output_of_step.assign(n.fused.size(), -1);
  for (size_t k = 0; k < n.fused_outputs.size(); ++k) {
    plan.output_of_step.at(static_cast<size_t>(n.fused_outputs[k])) = static_cast<int32_t>(k);
  }
  return plan;
}

const kernels::KernelDef& FusedKernel() { return kFusedKernel; }
const ops::OpDef& FusedOp() { return kFusedOp; }

}  // namespace msrt::runtime
