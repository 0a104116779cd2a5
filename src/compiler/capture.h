// Graph capture: tracing a Python function into IR.
//
// Note [Graph capture]
// While a Capture is installed as the thread's executor (ops::ExecutorScope),
// every op call becomes an IR node instead of running: its outputs are
// symbolic tensors (shape and dtype, no data; each has its own Storage, the
// key of its IR value). Python control flow on Python values simply runs,
// which unrolls it; reading a symbolic tensor's value raises
// GraphCaptureError, which the Python front end turns into a STRICT error or
// an eager fallback. Real tensors reaching an op are bound by reference:
// named ones (Parameters) become weights, others constants, and a constant
// some op writes in place becomes unnamed mutable state (a weight). Gradients
// taken during capture run the ops' gradient rules on the symbolic tensors,
// so the backward pass is captured too, in the "Gradients/" scope.
// In-place ops return their input tensor, as in eager mode; later readers of
// a symbolic tensor see the writing node's output.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "ops/call.h"

namespace msrt::compiler {

class Capture final : public ops::Executor {
 public:
  /// `max_call_depth`: nested scopes allowed (RuntimeError beyond);
  /// `whole_stack`: record the whole Python stack per node (debug_level=DEBUG).
  Capture(std::string graph_name, int64_t max_call_depth, bool whole_stack);

  /// A graph input: returns its symbolic tensor.
  Tensor AddInput(const Shape& shape, DType dtype, DeviceTarget device, std::string name);

  /// A replay recomputes a forward whose effects already happened (the
  /// backward graph of a compiled call, Note [Gradients of compiled calls]
  /// in msrt/_jit.py): side-effecting ops (Print) are left out, and an op
  /// writing a real tensor in place (BatchNorm's running statistics, assign)
  /// writes a private copy of it instead.
  void set_replay(bool replay) { replay_ = replay; }

  /// Enters a nested call (a Cell's construct) with this scope.
  void PushScope(std::string scope);
  void PopScope();
  size_t depth() const { return scopes_.size(); }

  std::vector<Tensor> Run(const ops::OpDef& op, const std::vector<Tensor>& inputs, const Dict& attrs,
                          const std::vector<ops::TensorMeta>& input_metas,
                          const std::vector<ops::TensorMeta>& metas) override;

  /// Ends capture with these results; the capture cannot be used afterwards.
  std::shared_ptr<ir::Graph> Finish(const std::vector<Tensor>& outputs);

 private:
  ir::ValueRef Lookup(const Tensor& t);
  std::string CurrentScope() const;

  std::shared_ptr<ir::Graph> graph_;
  int64_t max_call_depth_;
  bool whole_stack_;
  // Symbolic values by storage; real tensors by TensorImpl (kept alive).
  std::unordered_map<const Storage*, ir::ValueRef> symbolic_;
  std::unordered_map<const TensorImpl*, int32_t> bound_;
  std::vector<Tensor> keep_alive_;
  std::vector<std::string> scopes_;
  int64_t unnamed_states_ = 0;
  bool replay_ = false;
  std::unordered_set<const TensorImpl*> private_copies_;  // replay: written tensors bound to copies
};

/// Installs `capture` as this thread's executor while alive.
class CaptureScope {
 public:
  explicit CaptureScope(Capture* capture);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  ops::ExecutorScope executor_;
  Capture* previous_;
};

/// The capture installed on this thread, or nullptr.
Capture* ActiveCapture();

/// Calls a compiled graph's program (its nodes before the backend stage) on
/// `inputs`, op by op: inside a capture its ops are recorded into the graph
/// being captured -- the call is inlined, and gradients flow through it --
/// and outside one they run eagerly. Weights and constants are the tensors
/// the graph holds, taken as constants (a loaded graph's weights are
/// frozen). ValueError when an input's shape or dtype is not the
/// graph's.
std::vector<Tensor> InlineGraph(const ir::Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace msrt::compiler
