#include "ir/graph.h"

#include <algorithm>

#include "core/strings.h"

namespace msrt::ir {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kInput: return "input";
    case NodeKind::kWeight: return "weight";
    case NodeKind::kConstant: return "constant";
    case NodeKind::kOp: return "op";
  }
  return "?";
}

int32_t Graph::Add(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<int32_t>(nodes_.size() - 1);
}

int32_t Graph::InsertBefore(int32_t before, Node node) {
  auto shift = [before](ValueRef& v) {
    if (v.node >= before) ++v.node;
  };
  for (Node& n : nodes_) {
    for (ValueRef& v : n.inputs) shift(v);
  }
  for (ValueRef& v : outputs_) shift(v);
  for (int32_t& id : inputs_) {
    if (id >= before) ++id;
  }
  nodes_.insert(nodes_.begin() + before, std::move(node));
  return before;
}

const ops::TensorMeta& Graph::Meta(ValueRef v) const { return node(v.node).outputs.at(static_cast<size_t>(v.index)); }

void Graph::ReplaceAllUses(ValueRef from, ValueRef to) {
  for (Node& n : nodes_) {
    for (ValueRef& v : n.inputs) {
      if (v == from) v = to;
    }
  }
  for (ValueRef& v : outputs_) {
    if (v == from) v = to;
  }
}

void Graph::Compact() {
  std::vector<int32_t> new_id(nodes_.size(), -1);
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].dead) continue;
    new_id[i] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(nodes_[i]));
  }
  auto remap = [&new_id](ValueRef& v) {
    MSRT_INTERNAL_ASSERT(new_id.at(static_cast<size_t>(v.node)) >= 0, "a live value refers to deleted node ", v.node);
    v.node = new_id[static_cast<size_t>(v.node)];
  };
  for (Node& n : kept) {
    for (ValueRef& v : n.inputs) remap(v);
  }
  for (ValueRef& v : outputs_) remap(v);
  std::vector<int32_t> inputs;
  for (int32_t id : inputs_) {
    if (new_id[static_cast<size_t>(id)] >= 0) inputs.push_back(new_id[static_cast<size_t>(id)]);
  }
  inputs_ = std::move(inputs);
  nodes_ = std::move(kept);
}

std::vector<std::vector<int32_t>> Graph::UseCounts() const {
  std::vector<std::vector<int32_t>> counts(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) counts[i].assign(nodes_[i].outputs.size(), 0);
  for (const Node& n : nodes_) {
    if (n.dead) continue;
    for (const ValueRef& v : n.inputs) ++counts[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  }
  for (const ValueRef& v : outputs_) ++counts[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)];
  return counts;
}

std::vector<size_t> WrittenInputs(const Node& n) {
  std::vector<size_t> out;
  if (n.kind != NodeKind::kOp) return out;
  if (n.op->props.inplace) out.push_back(0);
  for (int w : n.op->props.writes_inputs) out.push_back(static_cast<size_t>(w));
  return out;
}

bool Graph::HasSideEffects(int32_t id) const {
  const Node& n = node(id);
  if (n.kind != NodeKind::kOp) return false;
  const ops::OpProperties& p = n.op->props;
  return p.inplace || p.side_effect || !p.writes_inputs.empty();
}

std::string Graph::NodeName(int32_t id) const {
  const Node& n = node(id);
  if (n.kind != NodeKind::kOp) return n.name.empty() ? StrCat(NodeKindName(n.kind), id) : n.name;
  std::string op = n.fused.empty() ? std::string(n.op->name) : "fused_elementwise";
  return StrCat(n.scope.empty() ? "Default" : n.scope, "/", op, "-op", id);
}

size_t Graph::OpCount() const {
  size_t count = 0;
  for (const Node& n : nodes_) count += (!n.dead && n.kind == NodeKind::kOp) ? 1 : 0;
  return count;
}

namespace {

bool SameMeta(const ops::TensorMeta& a, const ops::TensorMeta& b) { return a.shape == b.shape && a.dtype == b.dtype; }

}  // namespace

void Verify(const Graph& graph, std::string_view after_pass) {
  auto fail = [&](int32_t id, const std::string& what) {
    throw InternalError(StrCat("IR verification failed after pass '", after_pass, "' in graph '", graph.name(),
                               "' at node ", id, id >= 0 ? " (" + graph.NodeName(id) + ")" : std::string(), ": ", what,
                               ". This is a bug in msrt."));
  };
  const auto& nodes = graph.nodes();
  auto check_ref = [&](int32_t user, const ValueRef& v) {
    if (v.node < 0 || static_cast<size_t>(v.node) >= nodes.size()) fail(user, StrCat("input refers to node ", v.node));
    if (user >= 0 && v.node >= user) fail(user, StrCat("uses node ", v.node, " which comes later"));
    const Node& src = nodes[static_cast<size_t>(v.node)];
    if (src.dead) fail(user, StrCat("uses deleted node ", v.node));
    if (v.index < 0 || static_cast<size_t>(v.index) >= src.outputs.size()) {
      fail(user, StrCat("uses output ", v.index, " of node ", v.node, " which has ", src.outputs.size()));
    }
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead) continue;
    if (n.kind != NodeKind::kOp) {
      if (!n.inputs.empty()) fail(id, "a non-op node has inputs");
      if (n.outputs.size() != 1) fail(id, "a non-op node must have one output");
      // Weights loaded without data are bound by name when the graph runs.
      if (n.kind == NodeKind::kConstant && !n.value.defined()) fail(id, "a constant has no tensor");
      if (n.kind != NodeKind::kInput && n.value.defined() &&
          !SameMeta(n.outputs[0], {n.value.shape(), n.value.dtype()})) {
        fail(id, "bound tensor metadata differs");
      }
      continue;
    }
    if (n.op == nullptr) fail(id, "an op node has no op");
    std::vector<ops::TensorMeta> metas;
    for (const ValueRef& v : n.inputs) {
      check_ref(id, v);
      metas.push_back(graph.Meta(v));
    }
    if (!n.fused.empty()) {
      if (n.fused_outputs.size() != n.outputs.size()) fail(id, "a fused node's outputs differ from its output steps");
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        int32_t step = n.fused_outputs[k];
        if (step < 0 || static_cast<size_t>(step) >= n.fused.size() ||
            !SameMeta(n.fused[static_cast<size_t>(step)].output, n.outputs[k])) {
          fail(id, StrCat("fused output ", k, " does not match its step"));
        }
      }
      continue;
    }
    // A graph read from a file may give an op any number of inputs: inference reads them by position.
    bool variadic = n.op->inputs.size() == 1 && n.op->inputs[0].ends_with("...");
    if (!variadic && n.inputs.size() != n.op->inputs.size()) {
      fail(id,
           StrCat("op '", n.op->name, "' takes ", n.op->inputs.size(), " inputs, but the node has ", n.inputs.size()));
    }
    // Inference needs sizes: a node on dynamic dimensions (Note [Dynamic shapes]) is inferred when it runs.
    if (std::any_of(metas.begin(), metas.end(), [](const ops::TensorMeta& m) { return IsDynamic(m.shape); })) continue;
    std::vector<ops::TensorMeta> inferred = n.op->infer(metas, n.attrs);
    if (inferred.size() != n.outputs.size()) fail(id, "output count differs from inference");
    for (size_t k = 0; k < inferred.size(); ++k) {
      if (!SameMeta(inferred[k], n.outputs[k])) {
        fail(id, StrCat("output ", k, " is ", DTypeName(n.outputs[k].dtype), ShapeRepr(n.outputs[k].shape),
                        " but inference gives ", DTypeName(inferred[k].dtype), ShapeRepr(inferred[k].shape)));
      }
    }
  }
  for (const ValueRef& v : graph.outputs()) check_ref(-1, v);
  for (int32_t id : graph.inputs()) {
    if (graph.node(id).kind != NodeKind::kInput) fail(id, "a graph input is not an input node");
  }
}

}  // namespace msrt::ir
