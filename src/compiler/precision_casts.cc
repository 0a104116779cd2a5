// Note [Casts folded into mixed-precision ops] is in precision_casts.h.
#include "compiler/precision_casts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/fusion.h"
#include "kernels/kernel.h"
#include "msrt/core/errors.h"
#include "ops/op_def.h"

namespace msrt::compiler {

using ir::Graph;
using ir::Node;
using ir::NodeKind;
using ir::ValueRef;

namespace {

bool IsHalf(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

// What folding the casts around one node changes.
struct Fold {
  DType half = DType::kFloat32;
  std::vector<std::pair<size_t, ValueRef>> inputs;    // input position -> the half value its cast read
  std::vector<std::pair<int32_t, ValueRef>> results;  // a cast of an output -> that output, now half
  std::vector<ops::TensorMeta> outputs;               // the node's new output metas
};

}  // namespace

bool FoldPrecisionCasts(Graph& graph, DeviceTarget device, std::string* report) {
  const ops::OpDef& cast = ops::GetOp("cast");
  auto& nodes = graph.nodes();
  // The uses of each value, by consumer node.
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> readers;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dead || nodes[i].kind != NodeKind::kOp) continue;
    for (const ValueRef& v : nodes[i].inputs) readers[{v.node, v.index}].push_back(static_cast<int32_t>(i));
  }
  std::vector<bool> returned(nodes.size(), false);
  for (const ValueRef& v : graph.outputs()) returned[static_cast<size_t>(v.node)] = true;
  const InPlaceWrites writes(graph);
  auto is_cast = [&](int32_t id) {
    const Node& n = nodes[static_cast<size_t>(id)];
    return !n.dead && n.kind == NodeKind::kOp && n.op == &cast && n.fused.empty();
  };

  auto plan = [&](int32_t id) -> std::optional<Fold> {
    const Node& n = nodes[static_cast<size_t>(id)];
    const ops::MixedPrecisionSpec& spec = *n.op->props.mixed_precision;
    Fold fold;
    std::vector<ops::TensorMeta> metas;
    for (const ValueRef& v : n.inputs) metas.push_back(graph.Meta(v));
    for (int position : spec.half_inputs) {
      auto at = static_cast<size_t>(position);
      if (at >= n.inputs.size()) return std::nullopt;
      ValueRef v = n.inputs[at];
      if (!is_cast(v.node) || metas[at].dtype != DType::kFloat32) return std::nullopt;
      ValueRef source = nodes[static_cast<size_t>(v.node)].inputs[0];
      DType dtype = graph.Meta(source).dtype;
      if (!IsHalf(dtype) || (fold.half != DType::kFloat32 && dtype != fold.half)) return std::nullopt;
      if (writes.Between(source, v.node, id)) return std::nullopt;
      fold.half = dtype;
      fold.inputs.emplace_back(at, source);
      metas[at] = graph.Meta(source);
    }
    if (fold.inputs.empty()) return std::nullopt;
    for (int position : spec.half_outputs) {
      auto at = static_cast<size_t>(position);
      if (at >= n.outputs.size() || (returned[static_cast<size_t>(id)] &&
                                     std::any_of(graph.outputs().begin(), graph.outputs().end(), [&](ValueRef o) {
                                       return o == ValueRef{id, static_cast<int32_t>(at)};
                                     }))) {
        return std::nullopt;
      }
      auto it = readers.find({id, position});
      if (it == readers.end()) continue;
      for (int32_t reader : it->second) {
        if (!is_cast(reader) || nodes[static_cast<size_t>(reader)].outputs[0].dtype != fold.half) return std::nullopt;
        fold.results.emplace_back(reader, ValueRef{id, position});
      }
    }
    try {
      fold.outputs = n.op->infer(metas, n.attrs);
    } catch (const Error&) {
      return std::nullopt;  // the op does not take these dtypes together
    }
    if (fold.outputs.size() != n.outputs.size()) return std::nullopt;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      bool half = std::find(spec.half_outputs.begin(), spec.half_outputs.end(), static_cast<int>(k)) !=
                  spec.half_outputs.end();
      ops::TensorMeta want{n.outputs[k].shape, half ? fold.half : n.outputs[k].dtype};
      if (fold.outputs[k].shape != want.shape || fold.outputs[k].dtype != want.dtype) return std::nullopt;
    }
    if (kernels::SelectKernel(n.op->name, device, metas, n.attrs) == nullptr) return std::nullopt;
    return fold;
  };

  bool changed = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead || n.kind != NodeKind::kOp || !n.fused.empty() || !n.op->props.mixed_precision) continue;
    std::optional<Fold> fold = plan(id);
    if (!fold) continue;
    for (const auto& [at, source] : fold->inputs) {
      ValueRef old = n.inputs[at];
      n.inputs[at] = source;
      auto& list = readers[{old.node, old.index}];
      list.erase(std::find(list.begin(), list.end(), id));
      readers[{source.node, source.index}].push_back(id);
      // A cast nothing reads any more goes.
      if (list.empty() && !returned[static_cast<size_t>(old.node)]) nodes[static_cast<size_t>(old.node)].dead = true;
    }
    n.outputs = fold->outputs;
    for (const auto& [reader, result] : fold->results) {
      ValueRef from{reader, 0};
      graph.ReplaceAllUses(from, result);
      auto moved = readers.find({reader, 0});
      if (moved != readers.end()) {
        auto& list = readers[{result.node, result.index}];
        list.insert(list.end(), moved->second.begin(), moved->second.end());
        readers.erase(moved);
      }
      if (returned[static_cast<size_t>(reader)]) returned[i] = true;
      nodes[static_cast<size_t>(reader)].dead = true;
    }
    // The output's readers now are the casts' readers: drop the casts themselves from its list.
    for (int position : n.op->props.mixed_precision->half_outputs) {
      auto it = readers.find({id, position});
      if (it == readers.end()) continue;
      std::erase_if(it->second, [&](int32_t r) { return nodes[static_cast<size_t>(r)].dead; });
    }
    if (report != nullptr) {
      *report += StrCat("mixed precision: ", n.op->name, " in ", graph.NodeName(id), " reads and writes ",
                        DTypeAttrName(fold->half), " (", fold->inputs.size(), " input casts, ", fold->results.size(),
                        " output casts folded)\n");
    }
    changed = true;
  }
  if (changed) graph.Compact();
  return changed;
}

}  // namespace msrt::compiler
