// The graph IR: what GRAPH_MODE and ms.jit compile a Python function into.
//
// A Graph is a list of nodes in program order (capture order). Each node
// is an input of the graph, a weight (a named tensor bound by reference:
// parameters and optimizer state, which ops may update in place), a
// constant, or a call of a catalogue op on earlier nodes' outputs. Program
// order is always a valid execution order; passes only delete nodes,
// replace uses and insert nodes where their inputs are ready, so the order
// of side effects (in-place updates, Print) is the program's.
//
// Every node carries its scope ("Default/net-LeNet5/conv1-Conv2d") and the
// Python line that made it; the text printer (`.ir`) and the graphviz
// exporter (`.dot`) show both. See docs/ir.md for the text format.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace msrt::ir {

/// Output `index` of node `node`.
struct ValueRef {
  int32_t node = -1;
  int32_t index = 0;
  bool operator==(const ValueRef&) const = default;
  bool valid() const { return node >= 0; }
};

/// Hash of a ValueRef, for unordered containers keyed by values.
struct ValueRefHash {
  size_t operator()(const ValueRef& v) const { return std::hash<int64_t>()((int64_t{v.node} << 16) ^ v.index); }
};

enum class NodeKind : uint8_t { kInput, kWeight, kConstant, kOp };
const char* NodeKindName(NodeKind kind);

/// A chain of elementwise ops run as one kernel (graph-kernel fusion).
struct FusedOp {
  const ops::OpDef* op = nullptr;
  Dict attrs;
  /// Operands: >= 0 an input of the fused node, < 0 the result of step (-k - 1).
  std::vector<int32_t> operands;
  ops::TensorMeta output;
};

struct Node {
  NodeKind kind = NodeKind::kOp;
  const ops::OpDef* op = nullptr;  // kOp
  std::vector<ValueRef> inputs;    // kOp
  Dict attrs;                      // kOp
  std::vector<ops::TensorMeta> outputs;
  std::string scope;   // "Default/net-LeNet5/conv1-Conv2d"
  std::string source;  // "lenet.py:42" (the whole Python stack with debug_level=DEBUG)
  std::string name;    // kInput / kWeight: the argument or parameter name
  Tensor value;        // kWeight / kConstant: the tensor bound at capture
  /// Set by graph-kernel fusion: this node runs `fused` instead of `op`,
  /// and its outputs are the results of steps `fused_outputs`, in order.
  std::vector<FusedOp> fused;
  std::vector<int32_t> fused_outputs;
  bool dead = false;  // deleted by a pass, dropped by Compact()
};

class Graph {
 public:
  explicit Graph(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  Node& node(int32_t id) { return nodes_.at(static_cast<size_t>(id)); }
  const Node& node(int32_t id) const { return nodes_.at(static_cast<size_t>(id)); }

  /// Appends a node; returns its id.
  int32_t Add(Node node);
  /// Inserts `node` right before node `before`; ids from `before` on shift by one.
  int32_t InsertBefore(int32_t before, Node node);

  std::vector<int32_t>& inputs() { return inputs_; }  // kInput node ids, in argument order
  const std::vector<int32_t>& inputs() const { return inputs_; }
  std::vector<ValueRef>& outputs() { return outputs_; }
  const std::vector<ValueRef>& outputs() const { return outputs_; }

  const ops::TensorMeta& Meta(ValueRef v) const;

  /// Points every use of `from` (node inputs and graph outputs) at `to`.
  void ReplaceAllUses(ValueRef from, ValueRef to);
  /// Drops dead nodes and renumbers the rest (program order is kept).
  void Compact();
  /// Number of uses of each node output (graph outputs count): counts[node][index].
  std::vector<std::vector<int32_t>> UseCounts() const;

  /// Whether node `id` has effects beyond its outputs: in-place writes,
  /// side-effecting ops (Print), or writes to weights.
  bool HasSideEffects(int32_t id) const;

  /// "Default/conv1-Conv2d/conv2d-op12": the node's full name.
  std::string NodeName(int32_t id) const;

  /// Number of live op nodes.
  size_t OpCount() const;

 private:
  std::string name_;
  std::vector<Node> nodes_;
  std::vector<int32_t> inputs_;
  std::vector<ValueRef> outputs_;
};

/// Positions of the inputs node `n` writes in place (none unless an op).
std::vector<size_t> WrittenInputs(const Node& n);

/// Checks the structural invariants (inputs defined before use, metadata
/// consistent with op inference, outputs valid). Throws InternalError
/// naming the pass that broke them.
void Verify(const Graph& graph, std::string_view after_pass);

/// Text form (`.ir` files, docs/ir.md).
struct PrintOptions {
  bool sources = true;  // "# source: file.py:42" after each node
};
std::string PrintText(const Graph& graph, const PrintOptions& options = {});
/// Graphviz form (`.dot` files).
std::string PrintDot(const Graph& graph);

}  // namespace msrt::ir
