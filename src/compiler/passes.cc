// The pass table (Note [Pass table] in pass_manager.h) and the generic
// graph passes. The generic passes read op properties (OpDef::props), never
// op names: an op joins a simplification by declaring it (op_def.h).
#include <algorithm>
#include <complex>
#include <cstring>
#include <map>
#include <unordered_map>

#include "compiler/fusion.h"
#include "compiler/half_in_float32.h"
#include "compiler/layout.h"
#include "compiler/pass_manager.h"
#include "compiler/precision_casts.h"
#include "msrt/core/errors.h"
#include "ops/call.h"

namespace msrt::compiler {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeKind;
using ir::ValueRef;

bool Pure(const Graph& graph, int32_t id) {
  const Node& n = graph.node(id);
  return n.kind == NodeKind::kOp && n.fused.empty() && !n.op->props.random && !graph.HasSideEffects(id);
}

// Values some node writes in place.
std::unordered_map<ValueRef, int, ir::ValueRefHash> WriteCounts(const Graph& graph) {
  std::unordered_map<ValueRef, int, ir::ValueRefHash> counts;
  for (const Node& n : graph.nodes()) {
    if (n.dead) continue;
    for (size_t i : ir::WrittenInputs(n)) ++counts[n.inputs[i]];
  }
  return counts;
}

bool IsGraphOutput(const Graph& graph, ValueRef v) {
  for (const ValueRef& o : graph.outputs()) {
    if (o == v) return true;
  }
  return false;
}

// Whether every element of constant `t` equals `value`.
bool FilledWith(const Tensor& t, double value) {
  if (t.numel() > kFoldLimitElements) return false;
  if (IsComplex(t.dtype())) {  // both parts: a cast to float64 would drop the imaginary one
    Tensor as_complex = ops::Call1("cast", {t}, {{"dtype", Value("complex128")}});
    const auto* data = as_complex.data<std::complex<double>>();
    return std::all_of(data, data + t.numel(), [value](std::complex<double> v) { return v == value; });
  }
  Tensor as_double = ops::Call1("cast", {t}, {{"dtype", Value("float64")}});
  const auto* data = as_double.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (data[i] != value) return false;
  }
  return true;
}

bool SameMeta(const ops::TensorMeta& a, const ops::TensorMeta& b) { return a.shape == b.shape && a.dtype == b.dtype; }

}  // namespace

bool EliminateDeadCode(Graph& graph) {
  auto& nodes = graph.nodes();
  std::vector<bool> needed(nodes.size(), false);
  for (const ValueRef& v : graph.outputs()) needed[static_cast<size_t>(v.node)] = true;
  bool changed = false;
  for (size_t i = nodes.size(); i-- > 0;) {
    Node& n = nodes[i];
    if (n.dead) continue;
    auto id = static_cast<int32_t>(i);
    bool live = needed[i] || n.kind == NodeKind::kInput || graph.HasSideEffects(id);
    if (!live) {
      n.dead = true;
      changed = true;
      continue;
    }
    for (const ValueRef& v : n.inputs) needed[static_cast<size_t>(v.node)] = true;
  }
  if (changed) graph.Compact();
  return changed;
}

bool EliminateCommonSubexpressions(Graph& graph) {
  std::unordered_map<std::string, int32_t> seen;
  std::unordered_map<ValueRef, int, ir::ValueRefHash> version;  // writes so far, per value
  auto written = WriteCounts(graph);
  bool changed = false;
  auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead) continue;
    std::string key;
    if (n.kind == NodeKind::kConstant && n.value.numel() <= 64 && !written.contains({id, 0})) {
      const auto* bytes = static_cast<const unsigned char*>(n.value.data());
      key = StrCat("const|", DTypeName(n.value.dtype()), ShapeRepr(n.value.shape()), "|");
      key.append(reinterpret_cast<const char*>(bytes), n.value.nbytes());
    } else if (Pure(graph, id)) {
      key = StrCat(n.op->name, "|");
      for (const ValueRef& v : n.inputs) {
        auto it = version.find(v);
        key += StrCat(v.node, ".", v.index, "@", it == version.end() ? 0 : it->second, ",");
      }
      for (const auto& [name, value] : n.attrs) key += StrCat("|", name, "=", value.repr());
    }
    if (!key.empty()) {
      auto [it, inserted] = seen.emplace(std::move(key), id);
      if (!inserted) {
        for (size_t k = 0; k < n.outputs.size(); ++k) {
          graph.ReplaceAllUses({id, static_cast<int32_t>(k)}, {it->second, static_cast<int32_t>(k)});
        }
        n.dead = true;
        changed = true;
        continue;
      }
    }
    for (size_t w : ir::WrittenInputs(n)) ++version[n.inputs[w]];
  }
  if (changed) graph.Compact();
  return changed;
}

bool FoldConstants(Graph& graph) {
  bool changed = false;
  auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto id = static_cast<int32_t>(i);
    Node& n = nodes[i];
    if (n.dead || !Pure(graph, id) || n.outputs.size() != 1 || IsDynamic(n.outputs[0].shape) ||
        NumElements(n.outputs[0].shape) > kFoldLimitElements) {
      continue;
    }
    bool all_constant = true;
    std::vector<Tensor> args;
    for (const ValueRef& v : n.inputs) {
      const Node& src = graph.node(v.node);
      all_constant &= src.kind == NodeKind::kConstant;
      if (all_constant) args.push_back(src.value);
    }
    if (!all_constant) continue;
    Tensor value = ops::Call1(n.op->name, args, n.attrs);
    value.Sync();
    n.kind = NodeKind::kConstant;
    n.value = value;
    n.op = nullptr;
    n.inputs.clear();
    n.attrs = Dict();
    changed = true;
  }
  if (changed) EliminateDeadCode(graph);
  return changed;
}

bool SimplifyAlgebra(Graph& graph) {
  auto written = WriteCounts(graph);
  bool changed = false;
  auto& nodes = graph.nodes();
  auto constant_filled = [&graph](ValueRef v, double value) {
    const Node& src = graph.node(v.node);
    return src.kind == NodeKind::kConstant && FilledWith(src.value, value);
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto id = static_cast<int32_t>(i);
    Node& n = nodes[i];
    if (n.dead || !Pure(graph, id) || n.outputs.size() != 1) continue;
    ValueRef out{id, 0};
    // Dropping the node makes its result the operand itself: not when the
    // result is written in place, nor when it is returned and the operand
    // is an input, weight or constant (the caller would get that tensor).
    if (written.contains(out)) continue;
    bool returned = IsGraphOutput(graph, out);
    const ops::OpProperties& p = n.op->props;
    std::optional<ValueRef> same;
    // Two unknown dimensions (Note [Dynamic shapes]) may be other sizes in the same positions.
    auto keeps = [&](ValueRef operand) {
      const Shape& shape = n.outputs[0].shape;
      return SameMeta(graph.Meta(operand), n.outputs[0]) && std::count(shape.begin(), shape.end(), kDynamicDim) <= 1;
    };
    if (p.noop_if_same_meta && keeps(n.inputs[0])) {
      same = n.inputs[0];
    } else if (n.inputs.size() == 2) {
      if (p.right_identity && keeps(n.inputs[0]) && constant_filled(n.inputs[1], *p.right_identity)) {
        same = n.inputs[0];
      } else if (p.left_identity && keeps(n.inputs[1]) && constant_filled(n.inputs[0], *p.left_identity)) {
        same = n.inputs[1];
      }
    }
    if (!same || (returned && graph.node(same->node).kind != NodeKind::kOp)) continue;
    graph.ReplaceAllUses(out, *same);
    n.dead = true;
    changed = true;
  }
  if (changed) EliminateDeadCode(graph);
  return changed;
}

// ---------------------------------------------------------------------------
// The pass table. Within a phase, passes run in this order.

namespace {

bool RunChannelsLast(Graph& graph, PassContext& context) {
  LayoutStats stats;
  bool changed = UseChannelsLast(graph, context.device, &context.decisions, &stats);
  context.channels_last_ops = stats.channels_last_ops;
  context.layout_conversions = stats.layout_conversions;
  return changed;
}

constexpr PassDef kPassTable[] = {
    // name, phase, enabled by, on by default, at jit_level O0, function
    {"simplify_algebra", Phase::kOptimize, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext&) { return SimplifyAlgebra(g); }},
    {"fold_constants", Phase::kOptimize, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext&) { return FoldConstants(g); }},
    {"eliminate_common_subexpressions", Phase::kOptimize, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext&) { return EliminateCommonSubexpressions(g); }},
    {"eliminate_dead_code", Phase::kOptimize, PassSwitch::kAlways, true, true,
     [](Graph& g, PassContext&) { return EliminateDeadCode(g); }},
    {kChannelsLastPass, Phase::kLayout, PassSwitch::kAlways, true, false, RunChannelsLast},
    {"fuse_pairs", Phase::kLayout, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext& c) { return FusePairs(g, c.device, &c.decisions); }},
    // After the layout pass (which lays float16 graphs out as float32 ones) and
    // the fused pairs (a rounding between conv2d and bias_add would part them),
    // before the epilogues, which then meet the float32 ops.
    {kFloat16InFloat32Pass, Phase::kLayout, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext& c) { return HoldFloat16InFloat32(g, c); }},
    // Epilogues run inside their producer's kernel whenever the graph is
    // optimized (not only with graph-kernel fusion): the result is the same
    // and one pass over the activation is saved.
    // After the float16 values are held in float32 (the casts it leaves),
    // before the epilogues, which then meet the ops that now write half
    // values (batch_norm + relu).
    {kFoldPrecisionCastsPass, Phase::kLayout, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext& c) { return FoldPrecisionCasts(g, c.device, &c.decisions); }},
    {"fuse_epilogues", Phase::kLayout, PassSwitch::kAlways, true, false,
     [](Graph& g, PassContext& c) {
       // Graph-kernel fusion, when on, runs the ops no kernel applies in longer loops itself.
       return FuseEpilogues(g, c.device, &c.decisions, !SwitchOn(PassSwitch::kGraphKernel, c));
     }},
    {"fuse_elementwise", Phase::kGraphKernelFusion, PassSwitch::kGraphKernel, true, false,
     [](Graph& g, PassContext& c) { return FuseElementwise(g, c.device, &c.decisions); }},
};

// Stages are what save_graphs names its files after; the layout phase is
// part of "backend", announced by the pipeline once the executable is built.
constexpr PhaseDef kPhases[] = {
    {Phase::kOptimize, "optimize", /*max_rounds=*/4, /*announce=*/true},
    {Phase::kLayout, "layout", /*max_rounds=*/1, /*announce=*/false},
    {Phase::kGraphKernelFusion, "graph_kernel_fusion", /*max_rounds=*/1, /*announce=*/true},
};

}  // namespace

std::span<const PassDef> PassTable() { return kPassTable; }

const PhaseDef& PhaseInfo(Phase phase) {
  for (const PhaseDef& info : kPhases) {
    if (info.phase == phase) return info;
  }
  throw RuntimeError(StrCat("No phase description for compile phase ", static_cast<int>(phase), "."));
}

}  // namespace msrt::compiler
