#include "runtime/fused_kernel.h"

#include <memory>

#include "core/thread_pool.h"

namespace msrt::runtime {
namespace {

// Elements per tile: every step's tile buffer of a chain fits in L2 together.
constexpr int64_t kTile = 4096;

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
  const Tensor& output = args.outputs.at(0);
  ParallelFor(tiles, 1, [&](int64_t first_tile, int64_t end_tile) {
    // Views made once per chunk; each tile moves their offsets.
    std::vector<Tensor> operand_views(inputs.size());
    std::vector<size_t> base_offsets(inputs.size());
    std::vector<bool> full(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      full[i] = inputs[i].numel() != 1 || total == 1;
      operand_views[i] = Tensor(View(inputs[i], full[i] ? Shape{kTile} : Shape{}));
      base_offsets[i] = inputs[i].impl()->offset;
    }
    std::vector<Tensor> results(plan.steps.size());
    for (size_t k = 0; k + 1 < plan.steps.size(); ++k) {
      results[k] = Tensor::Empty({std::min(kTile, total)}, plan.steps[k].dtype, output.device());
    }
    Tensor out_view(View(output, {kTile}));
    const size_t out_offset = output.impl()->offset;
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
      for (size_t k = 0; k + 1 < plan.steps.size(); ++k) results[k].impl()->shape[0] = length;
      out_view.impl()->offset = out_offset + static_cast<size_t>(begin) * ItemSize(output.dtype());
      out_view.impl()->shape[0] = length;
      for (size_t k = 0; k < plan.steps.size(); ++k) {
        const FusedPlan::Step& step = plan.steps[k];
        step_inputs.clear();
        for (int32_t operand : step.operands) {
          step_inputs.push_back(operand >= 0 ? operand_views[static_cast<size_t>(operand)]
                                             : results[static_cast<size_t>(-operand - 1)]);
        }
        step_outputs[0] = k + 1 == plan.steps.size() ? out_view : results[k];
        kernels::KernelArgs step_args{*step.op, step_inputs, step_outputs, step.attrs};
        step.kernel->run(step_args);
      }
    }
  });
}

const ops::OpDef kFusedOp{
    .name = "fused_elementwise",
    .inputs = {"xs..."},
    .props = {.elementwise = true},
    .doc = "A chain of elementwise ops fused by graph-kernel fusion; made by the compiler, never called.",
};

const kernels::KernelDef kFusedKernel{.op = "fused_elementwise", .impl = "fused", .run = &RunFused};

}  // namespace

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
  return plan;
}

const kernels::KernelDef& FusedKernel() { return kFusedKernel; }
const ops::OpDef& FusedOp() { return kFusedOp; }

}  // namespace msrt::runtime
