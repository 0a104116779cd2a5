// Reverse-mode autodiff on a tape of eager op calls.
//
// While a GradTape is alive on a thread, every call of an op with a gradient
// rule whose inputs are tracked (requires_grad, or produced by a recorded
// call) is recorded. Gradient() walks the recorded calls backwards, applying
// each op's GradFn (written in ops, so it runs through the same dispatcher).
// The tape owns what it saved and drops it when it ends.
#pragma once

#include <memory>
#include <vector>

#include "ops/op_def.h"

namespace msrt::autodiff {

struct Node {
  const ops::OpDef* op = nullptr;
  Dict attrs;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  uint64_t tape_id = 0;
  uint64_t sequence = 0;  // recording order
};

class GradTape {
 public:
  GradTape();
  ~GradTape();
  GradTape(const GradTape&) = delete;
  GradTape& operator=(const GradTape&) = delete;

  /// Gradients of sum_i(sens_i * outputs_i) with respect to each of `wrt`
  /// (zeros where there is no path). An undefined sens means ones. With
  /// `create_graph` the gradient computation is itself recorded on this tape,
  /// so the gradients can be differentiated again (Note [Higher-order
  /// gradients]); this tape must be the one recording on this thread.
  /// Unless `retain_graph` (or `create_graph`), the walk frees each saved
  /// value after its last use (Note [Freeing during backward]), and a later
  /// Gradient() on this tape raises RuntimeError.
  std::vector<Tensor> Gradient(const std::vector<Tensor>& outputs, const std::vector<Tensor>& sens,
                               const std::vector<Tensor>& wrt, bool create_graph = false, bool retain_graph = false);

  /// Whether `t` is tracked by this tape (requires_grad, or recorded output).
  bool Tracks(const Tensor& t) const;

  /// Stops recording and drops what was saved (the destructor does it too).
  void End();

 private:
  bool ended_ = false;
  bool freed_ = false;  // a gradient freed the saved values
  bool outer_paused_;   // a new tape records even inside a gradient computation
  uint64_t id_;
  GradTape* previous_;
  std::vector<std::shared_ptr<Node>> nodes_;
  friend void RecordCall(const ops::OpDef&, const Dict&, const std::vector<Tensor>&, const std::vector<Tensor>&);
};

/// True while a tape records on this thread (and is not computing gradients).
bool IsRecording();

/// Whether the recording tape of this thread tracks `t`: gradients flow to
/// it. False when no tape records. Only floating-point tensors are tracked
/// (Note [Integer gradients]).
bool IsTracked(const Tensor& t);

/// Records a call of `op` on this thread's tape, as ops::Call does after
/// running it. For gradients defined outside the op registry (a Python
/// Cell's bprop): `op` need not be registered, only have a `grad`. Call it
/// only while IsRecording(); nothing is kept unless an input is tracked.
void RecordCall(const ops::OpDef& op, const Dict& attrs, const std::vector<Tensor>& inputs,
                const std::vector<Tensor>& outputs);

}  // namespace msrt::autodiff
