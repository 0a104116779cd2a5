// Note [float16 held in float32] in half_in_float32.h.
#include "compiler/half_in_float32.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "compiler/fusion.h"
#include "kernels/kernel.h"
#include "msrt/core/errors.h"

namespace msrt::compiler {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeKind;
using ir::ValueRef;
using ops::HalfCompute;
using ops::TensorMeta;

bool IsFloatingType(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 || d == DType::kFloat64;
}

// What a node becomes when it computes on held values.
struct Plan {
  Dict attrs;
  std::vector<TensorMeta> outputs;
  bool alias = false;  // its output 0 is its input 0 (a cast that became float32 to float32)
  bool round = false;  // its float16 results need rounding
};

// The plan for node `n` whose float16 inputs are held in float32, or none
// when it must keep float16: nothing declared, effects beyond its outputs, a
// float16 value written in place, or outputs that do not follow.
std::optional<Plan> PlanFor(const Graph& graph, int32_t id,
                            const std::unordered_set<ValueRef, ir::ValueRefHash>& written, DeviceTarget device) {
  const Node& n = graph.node(id);
  if (n.kind != NodeKind::kOp || !n.fused.empty() || n.op->props.random || n.op->props.data_dependent_shape ||
      graph.HasSideEffects(id)) {
    return std::nullopt;
  }
  HalfCompute compute = HalfComputeOf(*n.op);
  bool touches = false;
  bool inputs_half_valued = true;  // every floating input holds float16 values
  std::vector<TensorMeta> metas;
  for (const ValueRef& v : n.inputs) {
    TensorMeta meta = graph.Meta(v);
    if (IsDynamic(meta.shape)) return std::nullopt;
    if (meta.dtype == DType::kFloat16) {
      if (written.contains(v)) return std::nullopt;
      touches = true;
      meta.dtype = DType::kFloat32;
    } else if (IsFloatingType(meta.dtype)) {
      inputs_half_valued = false;
    }
    metas.push_back(meta);
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (IsDynamic(n.outputs[k].shape)) return std::nullopt;
    if (n.outputs[k].dtype == DType::kFloat16) {
      if (written.contains({id, static_cast<int32_t>(k)})) return std::nullopt;
      touches = true;
    }
  }
  if (!touches) return std::nullopt;
  // An op without a float16 kernel of its own runs its float32 kernel on
  // converted inputs and converts the results back (Note [Reduced precision]
  // in kernels/kernel_registry.cc): float32 then rounding, by construction.
  // Where that is refused (enable_reduce_precision=False), the op stays, and
  // so does the error the float16 graph raises.
  std::vector<TensorMeta> original;
  for (const ValueRef& v : n.inputs) original.push_back(graph.Meta(v));
  const bool native = kernels::SelectKernel(n.op->name, device, original, n.attrs) != nullptr;
  if (!native && !kernels::HasKernelOrSubstitute(n.op->name, device, original, n.attrs)) return std::nullopt;
  if (compute == HalfCompute::kUndeclared) {
    if (native) return std::nullopt;
    compute = HalfCompute::kRoundedFloat32;
  }
  Plan plan;
  plan.attrs = n.attrs;
  // Attributes that name float16 as a dtype (a cast's target, a fill's dtype) name float32.
  for (const ops::AttrSpec& spec : n.op->attrs) {
    const Value* value = n.attrs.Find(spec.name);
    if (spec.type == ops::AttrType::kDType && value != nullptr && value->is_string() &&
        ParseDType(value->as_string()) == DType::kFloat16) {
      plan.attrs.Set(std::string(spec.name), Value(std::string(DTypeAttrName(DType::kFloat32))));
    }
  }
  try {
    plan.outputs = n.op->infer(metas, plan.attrs);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (plan.outputs.size() != n.outputs.size() ||
      kernels::SelectKernel(n.op->name, device, metas, plan.attrs) == nullptr) {
    return std::nullopt;
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const TensorMeta& before = n.outputs[k];
    const TensorMeta& after = plan.outputs[k];
    DType want = before.dtype == DType::kFloat16 ? DType::kFloat32 : before.dtype;
    if (after.shape != before.shape || after.dtype != want) return std::nullopt;
  }
  plan.alias = n.op->props.noop_if_same_meta && n.outputs.size() == 1 && !n.inputs.empty() &&
               plan.outputs[0].shape == metas[0].shape && plan.outputs[0].dtype == metas[0].dtype;
  // A cast of float32 to float16 that became an alias rounds its operand; a
  // kExact op rounds only when some operand was not float16.
  plan.round = compute == HalfCompute::kRoundedFloat32 || !inputs_half_valued;
  if (plan.alias) plan.round = graph.Meta(n.inputs[0]).dtype != DType::kFloat16;
  return plan;
}

// Runs each rounding whose operand is the only use of an elementwise op's
// result inside that op's loop: a two-step fused node (Note [Elementwise
// fusion] in fusion.cc), executed tile by tile, so the rounding reads the
// result from cache. Returns how many roundings were fused.
size_t FuseRoundings(Graph& graph, DeviceTarget device) {
  auto& nodes = graph.nodes();
  const auto uses = graph.UseCounts();
  size_t fused = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& r = nodes[i];
    if (r.kind != NodeKind::kOp || r.op->name != "round_to_float16" || !r.fused.empty()) continue;
    const ValueRef v = r.inputs[0];
    Node& p = nodes[static_cast<size_t>(v.node)];
    if (!RunsInFusedLoop(graph, v.node, device) || uses[static_cast<size_t>(v.node)][0] != 1 ||
        IsDynamic(p.outputs[0].shape)) {
      continue;
    }
    // A one-input op that may yet run inside its own producer (a relu after
    // BatchNorm or a product: fuse_epilogues) stays free for that.
    if (p.inputs.size() == 1) {
      const ValueRef in = p.inputs[0];
      const Node& q = nodes[static_cast<size_t>(in.node)];
      if (q.kind == NodeKind::kOp && q.op->props.accepts_epilogue && in.index == 0 &&
          uses[static_cast<size_t>(in.node)][0] == 1) {
        continue;
      }
    }
    std::vector<int32_t> operands;
    for (size_t k = 0; k < p.inputs.size(); ++k) operands.push_back(static_cast<int32_t>(k));
    r.fused = {ir::FusedOp{p.op, p.attrs, std::move(operands), p.outputs[0]},
               ir::FusedOp{r.op, r.attrs, {-1}, r.outputs[0]}};
    r.fused_outputs = {1};
    r.inputs = p.inputs;
    r.attrs = Dict();
    p.dead = true;
    ++fused;
  }
  if (fused > 0) graph.Compact();
  return fused;
}

}  // namespace

HalfCompute HalfComputeOf(const ops::OpDef& op) {
  if (op.props.half_compute != HalfCompute::kUndeclared) return op.props.half_compute;
  return op.props.elementwise ? HalfCompute::kRoundedFloat32 : HalfCompute::kUndeclared;
}

bool HoldFloat16InFloat32(Graph& graph, PassContext& context) {
  if (context.device != DeviceTarget::kCPU) return false;
  auto& nodes = graph.nodes();
  const size_t count = nodes.size();
  std::unordered_set<ValueRef, ir::ValueRefHash> written;
  for (const Node& n : nodes) {
    if (n.dead) continue;
    for (size_t i : ir::WrittenInputs(n)) written.insert(n.inputs[i]);
  }
  std::vector<std::optional<Plan>> plans(count);
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    if (nodes[i].dead) continue;
    plans[i] = PlanFor(graph, static_cast<int32_t>(i), written, context.device);
    any |= plans[i].has_value();
  }
  if (!any) return false;

  const ops::OpDef& cast = ops::GetOp("cast");
  const ops::OpDef& round = ops::GetOp("round_to_float16");
  // Each old value has its own form (real: its dtype), a float32 form
  // holding its float16 values (held), or both; the missing one is made on
  // first demand. Values other than float16 have only their real form.
  std::vector<Node> rebuilt;
  rebuilt.reserve(count + count / 2);
  std::vector<std::vector<ValueRef>> real(count), held(count);
  // A held value whose rounding is still to come: it is rounded where it is
  // first read, or after the one-input kExact op that is its only reader
  // (those commute with rounding), so that relu or max pooling meets its
  // producer unrounded (an epilogue) and pooling rounds its smaller result.
  std::vector<std::vector<bool>> pending(count);
  for (size_t i = 0; i < count; ++i) {
    real[i].resize(nodes[i].outputs.size());
    held[i].resize(nodes[i].outputs.size());
    pending[i].resize(nodes[i].outputs.size(), false);
  }
  const auto uses = graph.UseCounts();
  std::vector<int32_t> new_id(count, -1);
  size_t conversions = 0, roundings = 0, ops_in_float32 = 0;
  std::map<std::string, size_t> kept;  // ops that keep float16, by name
  auto add_unary = [&](const ops::OpDef& op, const Dict& attrs, ValueRef from, const TensorMeta& meta,
                       const Node& origin) {
    Node t;
    t.kind = NodeKind::kOp;
    t.op = &op;
    t.attrs = ops::NormalizeAttrs(op, attrs);
    t.inputs = {from};
    t.outputs = {meta};
    t.scope = origin.scope;
    t.source = origin.source;
    rebuilt.push_back(std::move(t));
    return ValueRef{static_cast<int32_t>(rebuilt.size() - 1), 0};
  };
  auto cast_to = [&](ValueRef from, const TensorMeta& meta, DType dtype, const Node& origin) {
    ++conversions;
    return add_unary(cast, Dict{{"dtype", Value(std::string(DTypeAttrName(dtype)))}}, from, {meta.shape, dtype},
                     origin);
  };
  auto materialize = [&](size_t node, size_t index) {
    if (!pending[node][index]) return;
    held[node][index] = add_unary(round, Dict(), held[node][index], {nodes[node].outputs[index].shape, DType::kFloat32},
                                  nodes[node]);
    pending[node][index] = false;
    ++roundings;
  };
  auto real_of = [&](ValueRef v) {
    auto node = static_cast<size_t>(v.node), index = static_cast<size_t>(v.index);
    if (!real[node][index].valid()) {
      materialize(node, index);
      real[node][index] = cast_to(held[node][index], nodes[node].outputs[index], DType::kFloat16, nodes[node]);
    }
    return real[node][index];
  };
  auto held_of = [&](ValueRef v) {
    auto node = static_cast<size_t>(v.node), index = static_cast<size_t>(v.index);
    if (nodes[node].outputs[index].dtype != DType::kFloat16) return real_of(v);
    if (!held[node][index].valid()) {
      held[node][index] = cast_to(real[node][index], nodes[node].outputs[index], DType::kFloat32, nodes[node]);
    }
    materialize(node, index);
    return held[node][index];
  };

  for (size_t i = 0; i < count; ++i) {
    if (nodes[i].dead) continue;
    const Node& old = nodes[i];
    const std::optional<Plan>& plan = plans[i];
    if (!plan) {
      Node n = old;
      for (ValueRef& v : n.inputs) v = real_of(v);
      rebuilt.push_back(std::move(n));
      auto id = static_cast<int32_t>(rebuilt.size() - 1);
      new_id[i] = id;
      for (size_t k = 0; k < old.outputs.size(); ++k) real[i][k] = {id, static_cast<int32_t>(k)};
      if (old.kind == NodeKind::kOp) {
        bool half = std::any_of(old.outputs.begin(), old.outputs.end(),
                                [](const TensorMeta& m) { return m.dtype == DType::kFloat16; });
        for (const ValueRef& v : old.inputs) half |= graph.Meta(v).dtype == DType::kFloat16;
        if (half) ++kept[std::string(old.op->name)];
      }
      continue;
    }
    ++ops_in_float32;
    // An input whose shape and dtype alone the op reads (props.meta_only_inputs:
    // reshape_like's `like`) needs no rounding.
    auto meta_only = [&](size_t k) {
      const auto& only = old.op->props.meta_only_inputs;
      return std::find(only.begin(), only.end(), static_cast<int>(k)) != only.end();
    };
    auto operand = [&](size_t k) {
      const ValueRef v = old.inputs[k];
      const ValueRef unrounded = held[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
      return meta_only(k) && unrounded.valid() ? unrounded : held_of(v);
    };
    // A kExact op of one output that reads the elements of one operand only
    // (its others are meta-only), whose float16 operand awaits its rounding
    // and has no other reader, computes on the unrounded operand and passes
    // the rounding on to its result (the op commutes with rounding).
    bool defer = false;
    if (!plan->alias && HalfComputeOf(*old.op) == HalfCompute::kExact && !old.inputs.empty() &&
        old.outputs.size() == 1 && old.outputs[0].dtype == DType::kFloat16) {
      auto node = static_cast<size_t>(old.inputs[0].node), index = static_cast<size_t>(old.inputs[0].index);
      defer = pending[node][index] && uses[node][index] == 1;
      for (size_t k = 1; k < old.inputs.size(); ++k) defer = defer && meta_only(k);
    }
    ValueRef result;
    if (plan->alias) {
      result = held_of(old.inputs[0]);
    } else {
      Node n = old;
      for (size_t k = defer ? 1 : 0; k < n.inputs.size(); ++k) n.inputs[k] = operand(k);
      if (defer) {
        n.inputs[0] = held[static_cast<size_t>(old.inputs[0].node)][static_cast<size_t>(old.inputs[0].index)];
      }
      n.attrs = plan->attrs;
      n.outputs = plan->outputs;
      rebuilt.push_back(std::move(n));
      new_id[i] = static_cast<int32_t>(rebuilt.size() - 1);
      result = {new_id[i], 0};
    }
    for (size_t k = 0; k < old.outputs.size(); ++k) {
      ValueRef out = plan->alias ? result : ValueRef{new_id[i], static_cast<int32_t>(k)};
      if (old.outputs[k].dtype != DType::kFloat16) {
        real[i][k] = out;
        continue;
      }
      held[i][k] = out;
      pending[i][k] = plan->round || defer;
    }
  }
  std::vector<ValueRef> outputs;
  for (const ValueRef& v : graph.outputs()) outputs.push_back(real_of(v));
  std::vector<int32_t> inputs;
  for (int32_t id : graph.inputs()) inputs.push_back(new_id[static_cast<size_t>(id)]);

  std::string names;
  for (const auto& [name, times] : kept) names += StrCat(names.empty() ? "" : ", ", name, " x", times);
  context.float16_in_float32_ops += ops_in_float32;
  context.float16_roundings += roundings;
  context.float16_conversions += conversions;
  context.float16_kept = names;
  graph.nodes() = std::move(rebuilt);
  graph.outputs() = std::move(outputs);
  graph.inputs() = std::move(inputs);
  // Graph-kernel fusion, when on, puts the roundings into longer chains itself.
  size_t fused = SwitchOn(PassSwitch::kGraphKernel, context) ? 0 : FuseRoundings(graph, context.device);
  context.decisions += StrCat(kFloat16InFloat32Pass, ": ", ops_in_float32, " ops compute float16 values in float32, ",
                              roundings, " roundings (", fused, " inside their producer's loop), ", conversions,
                              " conversions", names.empty() ? "" : StrCat("; float16 kept by ", names), "\n");
  return true;
}

}  // namespace msrt::compiler
