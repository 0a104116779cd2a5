// Graph-kernel fusion: chains of elementwise ops become one node that the
// executor runs tile by tile (src/runtime/fused_kernel.cc), so the
// intermediates of a chain stay in cache instead of going through memory.
//
// Note [Elementwise fusion]
// A node joins a chain when its op is elementwise and pure, its kernel is a
// plain vectorised loop, every input has the output's shape or one element,
// and it consumes the chain's result, which nothing else uses. The fused
// node takes the place of the chain's last node; the chain's other nodes go.
// Evaluating them later is only safe if nothing in between writes what they
// read, so a chain stops at such a write. Decisions are reported as text
// (graph_kernel_flags --dump_as_text).
#include "compiler/fusion.h"

#include <algorithm>
#include <map>

#include "kernels/kernel.h"

namespace msrt::compiler {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeKind;
using ir::ValueRef;

struct Chain {
  std::vector<int32_t> members;  // program order
  std::vector<ValueRef> externals;
};

}  // namespace

bool RunsInFusedLoop(const Graph& graph, int32_t id, DeviceTarget device) {
  const Node& n = graph.nodes()[static_cast<size_t>(id)];
  if (n.dead || n.kind != NodeKind::kOp || !n.fused.empty() || !n.op->props.elementwise || n.op->props.random ||
      graph.HasSideEffects(id) || n.outputs.size() != 1) {
    return false;
  }
  std::vector<ops::TensorMeta> metas;
  for (const ValueRef& v : n.inputs) {
    const ops::TensorMeta& m = graph.Meta(v);
    if (m.shape != n.outputs[0].shape && (IsDynamic(m.shape) || NumElements(m.shape) != 1)) return false;
    metas.push_back(m);
  }
  const kernels::KernelDef* kernel = kernels::SelectKernel(n.op->name, device, metas, n.attrs);
  return kernel != nullptr && kernel->impl == "vectorized";
}

bool FuseElementwise(Graph& graph, DeviceTarget device, std::string* report) {
  auto& nodes = graph.nodes();
  auto uses = graph.UseCounts();
  const InPlaceWrites writes(graph);

  auto candidate = [&](int32_t id) { return RunsInFusedLoop(graph, id, device); };

  // Users of each node (single-output candidates only matter).
  std::vector<std::vector<int32_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dead) continue;
    for (const ValueRef& v : nodes[i].inputs) users[static_cast<size_t>(v.node)].push_back(static_cast<int32_t>(i));
  }
  std::vector<bool> returned(nodes.size(), false);
  for (const ValueRef& v : graph.outputs()) returned[static_cast<size_t>(v.node)] = true;

  std::vector<Chain> chains;
  std::vector<int32_t> chain_of(nodes.size(), -1);
  // Whether `id` may join `chain`: a fused node computes every member at the
  // position of its last one, so each member's users outside the chain must
  // come after `id`, and nothing in between may write what the chain reads.
  auto may_join = [&](const Chain& chain, int32_t id) {
    for (int32_t member : chain.members) {
      for (int32_t user : users[static_cast<size_t>(member)]) {
        if (user != id && chain_of[static_cast<size_t>(user)] != chain_of[static_cast<size_t>(member)] && user < id) {
          return false;
        }
      }
      for (const ValueRef& in : nodes[static_cast<size_t>(member)].inputs) {
        if (writes.Between(in, member, id)) return false;
      }
    }
    return true;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto id = static_cast<int32_t>(i);
    if (!candidate(id)) continue;
    const Node& n = nodes[i];
    int32_t joined = -1;
    for (const ValueRef& v : n.inputs) {
      int32_t c = chain_of[static_cast<size_t>(v.node)];
      if (c < 0 || graph.Meta(v).shape != n.outputs[0].shape) continue;
      if (may_join(chains[static_cast<size_t>(c)], id)) {
        joined = c;
        break;
      }
    }
    if (joined < 0) {
      joined = static_cast<int32_t>(chains.size());
      chains.push_back({});
    }
    chains[static_cast<size_t>(joined)].members.push_back(id);
    chain_of[i] = joined;
  }

  bool changed = false;
  for (Chain& chain : chains) {
    if (chain.members.size() < 2) continue;
    std::vector<ir::FusedOp> steps;
    std::vector<ValueRef> externals;
    std::map<int32_t, int32_t> step_of;  // member node → step index
    for (int32_t member : chain.members) {
      const Node& n = nodes[static_cast<size_t>(member)];
      ir::FusedOp step{n.op, n.attrs, {}, n.outputs[0]};
      for (const ValueRef& v : n.inputs) {
        auto internal = step_of.find(v.node);
        if (internal != step_of.end()) {
          step.operands.push_back(-internal->second - 1);
          continue;
        }
        auto it = std::find(externals.begin(), externals.end(), v);
        if (it == externals.end()) it = externals.insert(externals.end(), v);
        step.operands.push_back(static_cast<int32_t>(it - externals.begin()));
      }
      step_of[member] = static_cast<int32_t>(steps.size());
      steps.push_back(std::move(step));
    }
    // The node's outputs: members used outside the chain (or returned).
    int32_t chain_id = chain_of[static_cast<size_t>(chain.members.front())];
    std::vector<int32_t> output_steps;
    std::vector<ops::TensorMeta> output_metas;
    for (size_t k = 0; k < chain.members.size(); ++k) {
      int32_t member = chain.members[k];
      bool outside = returned[static_cast<size_t>(member)];
      for (int32_t user : users[static_cast<size_t>(member)])
        outside |= chain_of[static_cast<size_t>(user)] != chain_id;
      if (outside || k + 1 == chain.members.size()) {
        output_steps.push_back(static_cast<int32_t>(k));
        output_metas.push_back(nodes[static_cast<size_t>(member)].outputs[0]);
      }
    }
    Node& last = nodes[static_cast<size_t>(chain.members.back())];
    int32_t last_id = chain.members.back();
    // The last member's own result is the last output: move its uses there
    // first, then point the other members' uses at their outputs.
    if (output_steps.size() > 1) {
      int32_t k = static_cast<int32_t>(output_steps.size() - 1);
      for (Node& user : nodes) {
        if (&user == &last) continue;
        for (ValueRef& v : user.inputs) {
          if (v.node == last_id && v.index == 0 && chain_of[static_cast<size_t>(&user - nodes.data())] != chain_id) {
            v.index = k;
          }
        }
      }
      for (ValueRef& v : graph.outputs()) {
        if (v.node == last_id && v.index == 0) v.index = k;
      }
    }
    for (size_t k = 0; k < output_steps.size(); ++k) {
      int32_t member = chain.members[static_cast<size_t>(output_steps[k])];
      if (member != last_id) graph.ReplaceAllUses({member, 0}, {last_id, static_cast<int32_t>(k)});
    }
    if (report != nullptr) {
      *report += StrCat("fused ", chain.members.size(), " ops into ", graph.NodeName(chain.members.back()), ":");
      for (const ir::FusedOp& s : steps) *report += StrCat(" ", s.op->name);
      *report += StrCat(" (", externals.size(), " inputs, ", output_steps.size(), " outputs, ",
                        DTypeName(last.outputs[0].dtype), ShapeRepr(last.outputs[0].shape), ")\n");
    }
    for (size_t k = 0; k + 1 < chain.members.size(); ++k) nodes[static_cast<size_t>(chain.members[k])].dead = true;
    last.inputs = std::move(externals);
    last.fused = std::move(steps);
    last.fused_outputs = std::move(output_steps);
    last.outputs = std::move(output_metas);
    last.attrs = Dict();
    changed = true;
  }
  if (changed) graph.Compact();
  return changed;
}

}  // namespace msrt::compiler

namespace msrt::compiler {

// Note [In-place tails]
// A unary elementwise op after a producer whose kernel cannot apply it (no
// oneDNN post-op computes it, such as the rounding of float16 values held in
// float32, Note [float16 held in float32] in half_in_float32.h, or the
// producer takes no epilogues: a convolution's backward pass, BatchNorm's
// gradient) still joins the producer when that writes output 0 fresh (not
// in place, not a view, no side effects): it runs with its own
// kernel on the producer's output in place, right after the producer's
// kernel (kernels::kInPlaceTailAttr; the graph executor runs it, and kernel
// observers such as the profiler see it as its own launch). Its result is
// what the separate node computed, from the same kernel, but the graph has
// no buffer and no step for it, and it reads the output while it is still
// in cache. Once a tail starts, the ops after it join the tail too, so the
// order of the ops stays. Only ops without attributes join (the tail names
// the op alone), and not when graph-kernel fusion is on: it puts such ops
// into longer loops with their readers.
bool FuseEpilogues(ir::Graph& graph, DeviceTarget device, std::string* report, bool in_place_tails) {
  auto& nodes = graph.nodes();
  auto uses = graph.UseCounts();
  std::vector<bool> returned(nodes.size(), false);
  for (const ValueRef& v : graph.outputs()) returned[static_cast<size_t>(v.node)] = true;
  bool changed = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead || n.kind != NodeKind::kOp || !n.fused.empty() || !n.op->props.elementwise || n.inputs.size() != 1 ||
        n.op->props.random || graph.HasSideEffects(id) || n.outputs.size() != 1) {
      continue;
    }
    // The epilogue applies to the producer's output 0 (its other outputs,
    // e.g. batch_norm's saved statistics, stay as they are).
    ValueRef v = n.inputs[0];
    Node& producer = nodes[static_cast<size_t>(v.node)];
    if (producer.kind != NodeKind::kOp) continue;
    const ops::OpProperties& pp = producer.op->props;
    // Any op whose output 0 is its own fresh result may take a tail.
    const bool takes_tail = in_place_tails && producer.fused.empty() && !pp.inplace && !pp.view &&
                            pp.writes_inputs.empty() && !pp.data_dependent_shape && !graph.HasSideEffects(v.node);
    if (v.index != 0 || (!pp.accepts_epilogue && !takes_tail) || uses[static_cast<size_t>(v.node)][0] != 1 ||
        returned[static_cast<size_t>(v.node)] || producer.outputs[0].shape != n.outputs[0].shape ||
        producer.outputs[0].dtype != n.outputs[0].dtype) {
      continue;
    }
    // Inside the producer's kernel when it applies the op itself; else, with
    // in_place_tails, on its output right after it (Note [In-place tails]).
    auto appended = [&](std::string_view attr) {
      Dict attrs = producer.attrs;
      List ops;
      if (const Value* existing = attrs.Find(attr)) ops = existing->as_list();
      ops.emplace_back(std::string(n.op->name));
      attrs.Set(std::string(attr), Value(ops));
      return attrs;
    };
    std::vector<ops::TensorMeta> metas;
    for (const ValueRef& in : producer.inputs) metas.push_back(graph.Meta(in));
    // An epilogue until a tail has started: the ops after a tail join it.
    Dict attrs;
    const kernels::KernelDef* kernel = nullptr;
    if (pp.accepts_epilogue && !producer.attrs.Contains(kernels::kInPlaceTailAttr)) {
      attrs = appended(kernels::kEpilogueAttr);
      kernel = kernels::SelectKernel(producer.op->name, device, metas, attrs);
    }
    const bool tail = kernel == nullptr;
    if (tail) {
      if (!takes_tail || !n.op->attrs.empty()) continue;
      const kernels::KernelDef* own = kernels::SelectKernel(n.op->name, device, {n.outputs[0]}, n.attrs);
      kernel = kernels::SelectKernel(producer.op->name, device, metas, producer.attrs);
      if (own == nullptr || kernel == nullptr) continue;
      attrs = appended(kernels::kInPlaceTailAttr);
    }
    if (report != nullptr) {
      *report += StrCat(tail ? "tail " : "epilogue ", n.op->name, tail ? " runs in place after " : " runs inside ",
                        graph.NodeName(v.node), " [", kernel->impl, "]\n");
    }
    producer.attrs = std::move(attrs);
    graph.ReplaceAllUses({id, 0}, v);
    n.dead = true;
    uses = graph.UseCounts();
    changed = true;
  }
  if (changed) graph.Compact();
  return changed;
}

}  // namespace msrt::compiler

namespace msrt::compiler {

// Note [Fused pairs]
// An op may declare that it is two others, a producer and then a consumer
// that reads the producer's output 0 as its input props.fuses_input
// (props.fuses: conv2d_bias is conv2d then bias_add at input 0;
// matmul_apply_momentum is matmul then apply_momentum at input 3, the
// gradient). fuse_pairs replaces such a pair in a graph by that op when
// - the producer's output 0 is used by the consumer alone (as that input)
//   and is not returned: nothing else needs the intermediate value (in a
//   training graph, conv2d's and bias_add's gradients never read it; a
//   weight gradient that is all-reduced, clipped or unscaled first reaches
//   the update through other ops, so it is not the pair);
// - the producer has no side effects; the consumer may write in place (an
//   optimizer update): the fused op declares the same writes (checked when
//   the declarations are read) and is placed at the consumer's position;
// - attributes the two share have the same value (bias_add's data_format
//   is conv2d's: the bias goes on the channel axis of the layout the
//   convolution computes in, NCHW or NHWC); the fused op takes the
//   producer's attributes and the consumer's;
// - nothing between the two writes the producer's inputs in place (the
//   fused node computes the pair at the consumer's position);
// - the fused op's inference gives the consumer's output, and a kernel on
//   the device takes it (the kernel's `supports` is where a fused op says
//   which attribute values it computes: matmul_apply_momentum's takes no
//   Nesterov step).
// The consumer's node becomes the fused op, its fused input replaced by
// the producer's inputs; the producer goes. A consumer that writes in place
// (an optimizer update) fuses only where nothing between the two reads what
// it writes and its other inputs computed by ops come before the producer:
// the graph's plan then moves the fused update up to the producer's
// position or earlier (Note [Hoisted in-place updates] in
// src/runtime/graph_plan.cc). Elsewhere its write would wait for the last
// reader of what it writes (a weight's gradient product dy^T x made before
// the product dy W that reads the weight, as dense's gradient orders them
// when the weight is the smaller), keeping the producer's inputs (dy, x)
// alive that long, which may cost more bytes than the intermediate.
// Such a pair also fuses only where the intermediate it drops holds at
// least kMinDroppedBytes: an update's fused kernel is a primitive of its
// own (oneDNN's product with a sum post-op), whose code costs resident
// memory and whose time is the pair's (0.90-0.99x per call), so it pays only
// by the buffer it removes. Measured with benchmarks/suite.py, GRAPH O1
// peak RSS growth: the MLP's 3-4 MiB weight gradients fused, 25.5 -> 21.5
// MiB; the transformer's 64-256 KiB ones fused, 14 -> 15 MiB.
// fuse_epilogues runs after it, so an activation that followed the consumer
// runs inside the fused kernel too (conv2d + bias + relu as one oneDNN
// primitive).
InPlaceWrites::InPlaceWrites(const ir::Graph& graph) {
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dead) continue;
    for (size_t w : ir::WrittenInputs(nodes[i])) {
      const ValueRef& v = nodes[i].inputs.at(w);
      positions_[{v.node, v.index}].push_back(static_cast<int32_t>(i));
    }
  }
}

bool InPlaceWrites::Between(ValueRef v, int32_t after, int32_t before) const {
  auto it = positions_.find({v.node, v.index});
  return it != positions_.end() &&
         std::any_of(it->second.begin(), it->second.end(), [&](int32_t p) { return p > after && p < before; });
}

bool FusePairs(ir::Graph& graph, DeviceTarget device, std::string* report) {
  constexpr size_t kMinDroppedBytes = size_t{1} << 20;
  // The fused op of each (producer, consumer) pair, from the ops' declarations.
  std::map<std::pair<std::string_view, std::string_view>, const ops::OpDef*> fused_of;
  for (const ops::OpDef* op : ops::AllOps()) {
    if (op->props.fuses.empty()) continue;
    MSRT_INTERNAL_ASSERT(op->props.fuses.size() == 2, "op ", op->name, " must fuse two ops");
    const ops::OpDef* producer = ops::FindOp(op->props.fuses[0]);
    const ops::OpDef* consumer = ops::FindOp(op->props.fuses[1]);
    MSRT_INTERNAL_ASSERT(producer != nullptr && consumer != nullptr, "op ", op->name, " fuses unknown ops");
    const int at = op->props.fuses_input;
    MSRT_INTERNAL_ASSERT(at >= 0 && static_cast<size_t>(at) < consumer->inputs.size(), "op ", op->name, " fuses input ",
                         at, " of ", consumer->name);
    MSRT_INTERNAL_ASSERT(!producer->props.inplace && producer->props.writes_inputs.empty(), "op ", op->name, " fuses ",
                         producer->name, ", which writes in place");
    // The consumer's in-place writes, at their positions among the fused op's inputs.
    const int shift = static_cast<int>(producer->inputs.size()) - 1;
    std::vector<int> writes;
    for (int w : consumer->props.writes_inputs) {
      MSRT_INTERNAL_ASSERT(w != at, "op ", op->name, " fuses an input ", consumer->name, " writes");
      writes.push_back(w < at ? w : w + shift);
    }
    MSRT_INTERNAL_ASSERT(op->props.inplace == consumer->props.inplace && !(consumer->props.inplace && at == 0), "op ",
                         op->name, " must write in place what ", consumer->name, " writes");
    MSRT_INTERNAL_ASSERT(op->props.writes_inputs == writes && op->props.side_effect == consumer->props.side_effect,
                         "op ", op->name, " must write in place what ", consumer->name, " writes");
    fused_of[{op->props.fuses[0], op->props.fuses[1]}] = op;
  }
  if (fused_of.empty()) return false;
  auto& nodes = graph.nodes();
  auto uses = graph.UseCounts();
  std::vector<bool> returned(nodes.size(), false);
  for (const ValueRef& v : graph.outputs()) returned[static_cast<size_t>(v.node)] = true;
  const InPlaceWrites writes(graph);
  bool changed = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead || n.kind != NodeKind::kOp || !n.fused.empty() || n.outputs.size() != 1 || n.op->props.side_effect) {
      continue;
    }
    // The declared pairs whose consumer is this node's op.
    const ops::OpDef* fused_op = nullptr;
    for (const auto& [pair, op] : fused_of) {
      if (pair.second != n.op->name || static_cast<size_t>(op->props.fuses_input) >= n.inputs.size()) continue;
      const ValueRef& in = n.inputs[static_cast<size_t>(op->props.fuses_input)];
      const Node& p = nodes[static_cast<size_t>(in.node)];
      if (p.kind == NodeKind::kOp && !p.dead && p.op->name == pair.first) fused_op = op;
    }
    if (fused_op == nullptr) continue;
    const auto at = static_cast<size_t>(fused_op->props.fuses_input);
    ValueRef v = n.inputs[at];
    Node& producer = nodes[static_cast<size_t>(v.node)];
    if (v.index != 0 || !producer.fused.empty() || producer.outputs.size() != 1 ||
        uses[static_cast<size_t>(v.node)][0] != 1 || returned[static_cast<size_t>(v.node)] ||
        graph.HasSideEffects(v.node)) {
      continue;
    }
    const ops::OpDef& fused = *fused_op;
    bool agree = true;
    Dict attrs = producer.attrs;
    for (const auto& [name, value] : n.attrs) {
      const Value* own = producer.attrs.Find(name);
      agree = agree && (own == nullptr || *own == value);
      if (own == nullptr) attrs.Set(name, value);
    }
    if (!agree) continue;
    if (std::any_of(producer.inputs.begin(), producer.inputs.end(),
                    [&](const ValueRef& in) { return writes.Between(in, v.node, id); })) {
      continue;
    }
    std::vector<ValueRef> inputs(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(at));
    inputs.insert(inputs.end(), producer.inputs.begin(), producer.inputs.end());
    inputs.insert(inputs.end(), n.inputs.begin() + static_cast<std::ptrdiff_t>(at) + 1, n.inputs.end());
    std::vector<ops::TensorMeta> metas;
    metas.reserve(inputs.size());
    for (const ValueRef& in : inputs) metas.push_back(graph.Meta(in));
    std::vector<ops::TensorMeta> out;
    try {
      out = fused.infer(metas, attrs);
    } catch (const Error&) {
      continue;  // shapes the fused op does not take: the pair stays
    }
    if (out.size() != 1 || out[0].shape != n.outputs[0].shape || out[0].dtype != n.outputs[0].dtype) continue;
    const kernels::KernelDef* kernel = kernels::SelectKernel(fused.name, device, metas, attrs);
    if (kernel == nullptr) continue;
    // A consumer that writes in place fuses only where it could run at the
    // producer's position (see the Note).
    if (graph.HasSideEffects(id)) {
      const ops::TensorMeta& dropped = graph.Meta(v);
      if (IsDynamic(dropped.shape) || NumBytes(dropped.shape, dropped.dtype) < kMinDroppedBytes) continue;
      std::vector<ValueRef> written;
      for (size_t w : ir::WrittenInputs(n)) written.push_back(n.inputs.at(w));
      bool early = true;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const ValueRef& in = n.inputs[k];
        early = early && (k == at || nodes[static_cast<size_t>(in.node)].kind != NodeKind::kOp || in.node < v.node);
      }
      for (int32_t k = v.node + 1; early && k < id; ++k) {
        const Node& between = nodes[static_cast<size_t>(k)];
        if (between.dead || between.kind != NodeKind::kOp) continue;
        // Side effects keep their place in the plan: the update could not move above one.
        early = !between.op->props.side_effect &&
                std::none_of(between.inputs.begin(), between.inputs.end(), [&](const ValueRef& in) {
                  return std::find(written.begin(), written.end(), in) != written.end();
                });
      }
      if (!early) continue;
    }
    if (report != nullptr) {
      *report += StrCat("pair ", producer.op->name, " + ", n.op->name, " runs as ", fused.name, " in ",
                        graph.NodeName(id), " [", kernel->impl, "]\n");
    }
    n.op = &fused;
    n.attrs = std::move(attrs);
    n.inputs = std::move(inputs);
    producer.dead = true;
    uses = graph.UseCounts();
    changed = true;
  }
  if (changed) graph.Compact();
  return changed;
}

}  // namespace msrt::compiler
