// Channels-last activations in compiled graphs (Note [Channels-last graphs]
// in layout.h). The pass reads OpProperties (layout, elementwise) and the
// kernel registry, never op names.
#include "compiler/layout.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "kernels/kernel.h"

namespace msrt::compiler {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeKind;
using ir::ValueRef;

const std::vector<int64_t> kToChannelsLast = {0, 2, 3, 1};
const std::vector<int64_t> kToChannelsFirst = {0, 3, 1, 2};

Shape Permute(const Shape& shape, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(shape[static_cast<size_t>(p)]);
  return out;
}

// Whether permuting `shape` by `perm` keeps the order of its axes longer
// than 1, so the bytes stay where they are (a reshape does).
bool OnlyUnitAxesMove(const Shape& shape, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (shape[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

// How a candidate node takes part in a region: which inputs and outputs are
// activations (laid out NHWC once converted).
struct Role {
  bool layout_op = false;
  bool prefers = false;
  std::vector<bool> inputs, outputs;
};

bool IsActivation(const ops::TensorMeta& m) { return m.shape.size() == 4; }

// The NHWC form of a layout op's attributes.
Dict ChannelsLastAttrs(const Node& n) {
  Dict attrs = n.attrs;
  attrs.Set(std::string(ops::kDataFormatAttr), Value(ops::kChannelsLast));
  for (std::string_view name : n.op->props.layout->shape_attrs) {
    attrs.Set(std::string(name), IntList(Permute(ops::AttrInts(n.attrs, name), kToChannelsLast)));
  }
  return attrs;
}

std::optional<Role> LayoutRole(const Graph& graph, const Node& n, DeviceTarget device) {
  const ops::LayoutSpec& spec = *n.op->props.layout;
  if (ops::AttrString(n.attrs, ops::kDataFormatAttr) != ops::kChannelsFirst) return std::nullopt;
  Role role{.layout_op = true,
            .prefers = spec.prefers_channels_last,
            .inputs = std::vector<bool>(n.inputs.size(), false),
            .outputs = std::vector<bool>(n.outputs.size(), false)};
  std::vector<ops::TensorMeta> metas;
  for (const ValueRef& v : n.inputs) metas.push_back(graph.Meta(v));
  for (int i : spec.activation_inputs) {
    auto at = static_cast<size_t>(i);
    if (!IsActivation(metas[at])) return std::nullopt;
    metas[at].shape = Permute(metas[at].shape, kToChannelsLast);
    role.inputs[at] = true;
  }
  for (int i : spec.activation_outputs) {
    if (!IsActivation(n.outputs[static_cast<size_t>(i)])) return std::nullopt;
    role.outputs[static_cast<size_t>(i)] = true;
  }
  // Only where the device has a kernel for the NHWC form (or one through a substitute dtype, as the graph's
  // executor would run it: a float16 convolution computed in float32).
  try {
    Dict attrs = ChannelsLastAttrs(n);
    if (!kernels::HasKernelOrSubstitute(n.op->name, device, metas, attrs)) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return role;
}

std::optional<Role> ElementwiseRole(const Graph& graph, const Node& n) {
  if (!n.op->props.elementwise || n.outputs.size() != 1 || !IsActivation(n.outputs[0])) return std::nullopt;
  Role role{.inputs = std::vector<bool>(n.inputs.size(), false), .outputs = {true}};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ops::TensorMeta& m = graph.Meta(n.inputs[i]);
    if (m.shape == n.outputs[0].shape) {
      role.inputs[i] = true;
    } else if (IsDynamic(m.shape) || NumElements(m.shape) != 1) {
      return std::nullopt;  // a broadcast along some axes: the layout matters
    }
  }
  return role;
}

int32_t Find(std::vector<int32_t>& parent, int32_t x) {
  while (parent[static_cast<size_t>(x)] != x) {
    parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    x = parent[static_cast<size_t>(x)];
  }
  return x;
}

}  // namespace

bool UseChannelsLast(Graph& graph, DeviceTarget device, std::string* report, LayoutStats* stats) {
  const auto& nodes = graph.nodes();
  const size_t count = nodes.size();

  // Values written in place keep their layout: a copy would not see the write.
  std::unordered_set<ValueRef, ir::ValueRefHash> written;
  for (const Node& n : nodes) {
    if (n.dead) continue;
    for (size_t w : ir::WrittenInputs(n)) written.insert(n.inputs[w]);
  }

  std::vector<std::optional<Role>> roles(count);
  for (size_t i = 0; i < count; ++i) {
    const Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    const ops::OpProperties& props = n.op->props;
    if (n.dead || n.kind != NodeKind::kOp || !n.fused.empty() || props.random || props.side_effect || props.inplace) {
      continue;
    }
    std::optional<Role> role = props.layout ? LayoutRole(graph, n, device) : ElementwiseRole(graph, n);
    if (!role) continue;
    // An op that updates some of its inputs in place (batch_norm's running
    // statistics) may run NHWC when none of those is an activation: the
    // values it writes keep their layout.
    if (std::any_of(props.writes_inputs.begin(), props.writes_inputs.end(),
                    [&](int w) { return role->inputs[static_cast<size_t>(w)]; })) {
      continue;
    }
    bool rewritten = false;
    for (size_t k = 0; k < n.outputs.size(); ++k) rewritten |= written.contains({id, static_cast<int32_t>(k)});
    if (!rewritten) roles[i] = std::move(role);
  }

  // Regions: candidates joined by the activations flowing between them.
  std::vector<int32_t> parent(count);
  std::iota(parent.begin(), parent.end(), 0);
  for (size_t i = 0; i < count; ++i) {
    if (!roles[i]) continue;
    for (size_t k = 0; k < nodes[i].inputs.size(); ++k) {
      const ValueRef& v = nodes[i].inputs[k];
      const auto& producer = roles[static_cast<size_t>(v.node)];
      if (roles[i]->inputs[k] && producer && producer->outputs[static_cast<size_t>(v.index)]) {
        parent[static_cast<size_t>(Find(parent, static_cast<int32_t>(i)))] = Find(parent, v.node);
      }
    }
  }
  std::vector<bool> region_prefers(count, false);
  for (size_t i = 0; i < count; ++i) {
    if (roles[i] && roles[i]->prefers)
      region_prefers[static_cast<size_t>(Find(parent, static_cast<int32_t>(i)))] = true;
  }
  std::vector<bool> convert(count, false);
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    convert[i] = roles[i] && region_prefers[static_cast<size_t>(Find(parent, static_cast<int32_t>(i)))];
    any |= convert[i];
  }
  if (!any) return false;

  // Rebuild in program order. Each old value has a plain (NCHW) form, an
  // NHWC form, or both; the missing one is made on first demand.
  std::vector<Node> rebuilt;
  rebuilt.reserve(count + 16);
  std::vector<std::vector<ValueRef>> plain(count), channels_last(count);
  for (size_t i = 0; i < count; ++i) {
    plain[i].resize(nodes[i].outputs.size());
    channels_last[i].resize(nodes[i].outputs.size());
  }
  std::vector<int32_t> new_id(count, -1);
  size_t conversions = 0;
  auto convert_value = [&](ValueRef from, const ops::TensorMeta& meta, const std::vector<int64_t>& perm,
                           const Node& origin) {
    Node t;
    t.kind = NodeKind::kOp;
    Shape shape = Permute(meta.shape, perm);
    if (OnlyUnitAxesMove(meta.shape, perm)) {
      t.op = &ops::GetOp("reshape");
      t.attrs = ops::NormalizeAttrs(*t.op, {{"shape", IntList(shape)}});
    } else {
      t.op = &ops::GetOp("transpose");
      t.attrs = ops::NormalizeAttrs(*t.op, {{"perm", IntList(perm)}});
    }
    t.inputs = {from};
    t.outputs = {{shape, meta.dtype}};
    t.scope = origin.scope;
    t.source = origin.source;
    rebuilt.push_back(std::move(t));
    ++conversions;
    return ValueRef{static_cast<int32_t>(rebuilt.size() - 1), 0};
  };
  auto plain_of = [&](ValueRef v) {
    auto node = static_cast<size_t>(v.node), index = static_cast<size_t>(v.index);
    if (!plain[node][index].valid()) {
      ops::TensorMeta nhwc = nodes[node].outputs[index];
      nhwc.shape = Permute(nhwc.shape, kToChannelsLast);
      plain[node][index] = convert_value(channels_last[node][index], nhwc, kToChannelsFirst, nodes[node]);
    }
    return plain[node][index];
  };
  auto channels_last_of = [&](ValueRef v) {
    auto node = static_cast<size_t>(v.node), index = static_cast<size_t>(v.index);
    if (!channels_last[node][index].valid()) {
      channels_last[node][index] = convert_value(plain[node][index], nodes[node].outputs[index], kToChannelsLast,
                                                 nodes[node]);
    }
    return channels_last[node][index];
  };

  size_t region_ops = 0;
  for (size_t i = 0; i < count; ++i) {
    if (nodes[i].dead) continue;
    Node n = nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      n.inputs[k] = convert[i] && roles[i]->inputs[k] ? channels_last_of(nodes[i].inputs[k])
                                                      : plain_of(nodes[i].inputs[k]);
    }
    if (convert[i]) {
      ++region_ops;
      if (roles[i]->layout_op) n.attrs = ChannelsLastAttrs(nodes[i]);
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        if (roles[i]->outputs[k]) n.outputs[k].shape = Permute(n.outputs[k].shape, kToChannelsLast);
      }
    }
    rebuilt.push_back(std::move(n));
    auto id = static_cast<int32_t>(rebuilt.size() - 1);
    new_id[i] = id;
    for (size_t k = 0; k < nodes[i].outputs.size(); ++k) {
      ValueRef out{id, static_cast<int32_t>(k)};
      (convert[i] && roles[i]->outputs[k] ? channels_last[i][k] : plain[i][k]) = out;
    }
  }
  std::vector<ValueRef> outputs;
  for (const ValueRef& v : graph.outputs()) outputs.push_back(plain_of(v));
  std::vector<int32_t> inputs;
  for (int32_t id : graph.inputs()) inputs.push_back(new_id[static_cast<size_t>(id)]);

  if (report != nullptr) {
    *report += StrCat("channels_last: ", region_ops, " ops run NHWC, ", conversions, " layout conversions\n");
  }
  if (stats != nullptr) {
    stats->channels_last_ops += region_ops;
    stats->layout_conversions += conversions;
  }
  graph.nodes() = std::move(rebuilt);
  graph.outputs() = std::move(outputs);
  graph.inputs() = std::move(inputs);
  return true;
}

}  // namespace msrt::compiler
