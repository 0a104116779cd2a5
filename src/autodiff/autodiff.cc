#include "autodiff/autodiff.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "ops/call.h"

namespace msrt::autodiff {

namespace {

thread_local GradTape* t_tape = nullptr;
thread_local bool t_paused = false;
thread_local int t_creating_graph = 0;  // create_graph gradients running on this thread
std::atomic<uint64_t> g_next_tape{1};

bool Active() { return t_tape != nullptr && !t_paused; }

// Gradients flow into (node, output index) or into a leaf tensor.
using NodeKey = std::pair<const Node*, int>;

Tensor Accumulate(const Tensor& sum, const Tensor& g) {
  if (!sum.defined()) return g;
  return ops::Call1("add", {sum, g});
}

Tensor OnesLike(const Tensor& t) { return ops::Call1("ones_like", {t}); }
Tensor ZerosLike(const Tensor& t) { return ops::Call1("zeros_like", {t}); }

// Note [Higher-order gradients]
// A gradient asked for with create_graph keeps recording while the gradient
// rules run, on the same tape, so the gradients it returns are tracked values
// whose own gradient the tape can compute (grad of grad). That holds only
// when every op the rules call is differentiable itself. A rule that calls a
// non-differentiable op on floating-point data (batch_norm_grad,
// max_pool2d_grad, which compute a first derivative in one kernel) would cut
// the second derivative off silently, so during a create_graph gradient any
// non-differentiable op outside the list below raises instead. The listed
// ops have a zero derivative (constants, masks) or non-floating outputs.
bool HasZeroDerivative(std::string_view name) {
  static constexpr std::string_view kZero[] = {"arange",      "argmax",      "argmin",        "equal",
                                               "fill",        "greater",     "greater_equal", "less",
                                               "less_equal",  "logical_and", "logical_not",   "logical_or",
                                               "logical_xor", "not_equal",   "one_hot",       "ones_like",
                                               "zeros_like",  "print"};
  for (std::string_view z : kZero) {
    if (z == name) return true;
  }
  return false;
}

class FirstOrderOnlyCheck final : public ops::CallObserver {
 public:
  void OnCall(const ops::OpDef& op, const Dict&) override {
    if (t_creating_graph == 0 || t_paused || op.grad || op.composite || HasZeroDerivative(op.name)) return;
    MSRT_CHECK(false, "higher-order gradients are not supported through op '", op.name,
               "': it has no gradient of its own, and a gradient rule calls it while the gradient is being "
               "differentiated again (grad of grad).");
  }
};

void InstallFirstOrderOnlyCheck() {
  static std::once_flag once;
  static FirstOrderOnlyCheck check;
  std::call_once(once, [] { ops::AddRecordingCallObserver(&check); });  // acts only while creating a graph
}

}  // namespace

void RecordCall(const ops::OpDef& op, const Dict& attrs, const std::vector<Tensor>& inputs,
                const std::vector<Tensor>& outputs) {
  GradTape* tape = t_tape;
  bool tracked = std::any_of(inputs.begin(), inputs.end(), [tape](const Tensor& t) { return tape->Tracks(t); });
  if (!tracked) return;
  // Note [Complex gradients]
  // Gradients flow through complex values only through ops whose rule
  // handles them (props.complex_grad): add, sub, mul, neg, matmul,
  // reduce_sum, the parts (real, imag, conj, complex), cast, identity,
  // reshape, transpose and expand_dims.
  // Any other op on the path is an error rather than a gradient that is
  // silently wrong or cut.
  bool complex_in = std::any_of(inputs.begin(), inputs.end(),
                                [tape](const Tensor& t) { return IsComplex(t.dtype()) && tape->Tracks(t); });
  bool complex_out = false, continues = false;
  for (const Tensor& out : outputs) {
    complex_out |= IsComplex(out.dtype());
    continues |= IsFloating(out.dtype()) || IsComplex(out.dtype());
  }
  if ((complex_in || complex_out) && continues && !op.props.complex_grad) {
    throw NotImplementedError(StrCat("[", op.name, "] has no gradient for complex values: a gradient would flow ",
                                     complex_in ? "from a complex input" : "into a complex output",
                                     ". Ops with complex gradients: add, sub, mul, neg, matmul, batch_matmul, ",
                                     "reduce_sum, real, imag, conj, complex, cast, identity, reshape, transpose, ",
                                     "expand_dims."));
  }
  if (!op.grad) return;  // not differentiable: the path ends here
  auto node = std::make_shared<Node>();
  node->op = &op;
  node->attrs = attrs;
  node->inputs = inputs;
  for (int k : op.props.meta_only_inputs) {  // a value never read has no gradient: keep its meta, not its bytes
    Tensor& t = node->inputs.at(static_cast<size_t>(k));
    if (t.defined() && !t.symbolic()) t = Tensor::Symbolic(t.shape(), t.dtype(), t.device());
  }
  node->outputs = outputs;
  node->tape_id = tape->id_;
  node->sequence = tape->nodes_.size();
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].impl()->grad_node = node;
    outputs[i].impl()->grad_output_index = static_cast<int>(i);
  }
  tape->nodes_.push_back(std::move(node));
}

namespace {
const bool kRecorderInstalled = (ops::SetRecorder(ops::Recorder{&Active, &RecordCall}), true);
}  // namespace

bool IsRecording() { return Active(); }

GradTape::GradTape() : outer_paused_(t_paused), id_(g_next_tape.fetch_add(1)), previous_(t_tape) {
  t_tape = this;
  t_paused = false;
}

GradTape::~GradTape() { End(); }

void GradTape::End() {
  if (ended_) return;
  ended_ = true;
  // Break the cycles output -> node -> output and drop saved tensors.
  for (const auto& node : nodes_) {
    for (const Tensor& out : node->outputs) {
      if (out.impl()->grad_node.get() == node.get()) out.impl()->grad_node.reset();
    }
    node->inputs.clear();
    node->outputs.clear();
  }
  nodes_.clear();
  if (t_tape == this) {
    t_tape = previous_;
    t_paused = outer_paused_;
  }
}

// Note [Integer gradients]
// Gradients flow through floating-point (and complex) values only. An integer or boolean
// tensor is never tracked, even with requires_grad set, and a recorded op's
// integer outputs (argmax, a cast to int32, a comparison) carry no gradient;
// asked for directly, an integer input's gradient is zeros of its dtype
// (MindSpore returns zeros for inputs without a gradient path).
bool GradTape::Tracks(const Tensor& t) const {
  const TensorImpl* impl = t.impl();
  if (!IsFloating(impl->dtype) && !IsComplex(impl->dtype)) return false;
  return impl->requires_grad || (impl->grad_node && impl->grad_node->tape_id == id_);
}

bool IsTracked(const Tensor& t) { return Active() && t_tape->Tracks(t); }

// Note [Freeing during backward]
// A node's saved inputs and outputs are read by its own gradient rule and by
// no later step of the walk: its inputs are outputs of earlier nodes, which
// hold them themselves until their own turn, and every consumer of its
// outputs comes before it in the walk. So once a node's rule has run (or is
// skipped) the node drops what it saved, and the gradients of its outputs,
// which nothing reads again, are dropped too. The peak of a backward is then
// the forward's saved values shrinking as the gradients grow, as in PyTorch,
// instead of both together. A tape asked for a second gradient after that
// raises rather than walking nodes that no longer hold their values; with
// retain_graph (or create_graph, whose gradient is walked again) nothing is
// freed.
std::vector<Tensor> GradTape::Gradient(const std::vector<Tensor>& outputs, const std::vector<Tensor>& sens,
                                       const std::vector<Tensor>& wrt, bool create_graph, bool retain_graph) {
  if (freed_) {
    throw RuntimeError(
        "a gradient was already computed on this tape and freed its saved values on the way (as a backward "
        "pass does); to take more than one gradient from one recording, ask the earlier ones with "
        "retain_graph=True");
  }
  const bool free_as_walked = !create_graph && !retain_graph;
  if (create_graph) {
    MSRT_CHECK(!ended_ && t_tape == this && !t_paused,
               "a gradient with create_graph needs its tape to be the one recording on this thread");
    InstallFirstOrderOnlyCheck();
  }
  struct Pause {
    bool record;
    bool saved = t_paused;
    explicit Pause(bool keep_recording) : record(keep_recording) {
      if (record) {
        ++t_creating_graph;
      } else {
        t_paused = true;
      }
    }
    ~Pause() {
      if (record) --t_creating_graph;
      t_paused = saved;
    }
  } pause(create_graph);

  std::map<NodeKey, Tensor> node_grads;
  std::unordered_map<const TensorImpl*, Tensor> leaf_grads;
  std::unordered_map<const TensorImpl*, bool> wanted;
  for (const Tensor& w : wrt) wanted[w.impl()] = true;

  auto node_of = [this](const Tensor& t) -> const Node* {
    const auto& n = t.impl()->grad_node;
    return (n && n->tape_id == id_) ? n.get() : nullptr;
  };
  auto deliver = [&](const Tensor& target, const Tensor& g) {
    if (wanted.contains(target.impl())) leaf_grads[target.impl()] = Accumulate(leaf_grads[target.impl()], g);
    if (const Node* n = node_of(target)) {
      NodeKey key{n, target.impl()->grad_output_index};
      node_grads[key] = Accumulate(node_grads[key], g);
    }
  };

  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor seed = (i < sens.size() && sens[i].defined()) ? sens[i] : OnesLike(outputs[i]);
    deliver(outputs[i], seed);
  }

  // Nodes reachable from the outputs, latest first (a reverse topological order).
  std::vector<const Node*> order;
  {
    std::vector<const Node*> stack;
    std::unordered_map<const Node*, bool> seen;
    for (const Tensor& o : outputs) {
      if (const Node* n = node_of(o)) stack.push_back(n);
    }
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (seen[n]) continue;
      seen[n] = true;
      order.push_back(n);
      for (const Tensor& in : n->inputs) {
        if (const Node* p = node_of(in)) stack.push_back(p);
      }
    }
    std::sort(order.begin(), order.end(), [](const Node* a, const Node* b) { return a->sequence > b->sequence; });
  }

  if (free_as_walked) freed_ = true;
  // After a node's turn: drop its outputs' gradients and, unless retained, its saved values.
  const auto done = [&](const Node* node) {
    for (size_t k = 0; k < node->outputs.size(); ++k) node_grads.erase({node, static_cast<int>(k)});
    if (!free_as_walked) return;
    auto* mutable_node = const_cast<Node*>(node);
    for (const Tensor& out : mutable_node->outputs) {
      if (out.impl()->grad_node.get() == node) out.impl()->grad_node.reset();  // the output -> node cycle
    }
    mutable_node->inputs.clear();
    mutable_node->outputs.clear();
  };
  for (const Node* node : order) {
    std::vector<Tensor> dys(node->outputs.size());
    bool any = false;
    for (size_t k = 0; k < dys.size(); ++k) {
      auto it = node_grads.find({node, static_cast<int>(k)});
      if (it != node_grads.end()) {
        dys[k] = std::move(it->second);
        node_grads.erase(it);
        any = true;
      }
    }
    if (!any) {
      done(node);
      continue;
    }
    std::vector<bool> needs(node->inputs.size());
    bool need_any = false;
    for (size_t i = 0; i < needs.size(); ++i) {
      needs[i] = Tracks(node->inputs[i]);
      need_any |= needs[i];
    }
    if (!need_any) {
      done(node);
      continue;
    }
    std::vector<Tensor> grads;
    {
      ops::GradientContext gradient_of(&node->outputs.front());
      grads = node->op->grad(ops::GradArgs{node->inputs, node->outputs, dys, node->attrs, needs});
    }
    dys.clear();
    MSRT_INTERNAL_ASSERT(grads.size() == node->inputs.size(), "gradient of ", node->op->name, " returned ",
                         grads.size(), " tensors for ", node->inputs.size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!needs[i] || !grads[i].defined()) continue;
      const Tensor& in = node->inputs[i];
      MSRT_INTERNAL_ASSERT(grads[i].shape() == in.shape(), "gradient of ", node->op->name, " input ", i, " has shape ",
                           ShapeRepr(grads[i].shape()), ", expected ", ShapeRepr(in.shape()));
      deliver(in, grads[i]);
    }
    grads.clear();
    done(node);
  }

  std::vector<Tensor> out;
  out.reserve(wrt.size());
  for (const Tensor& w : wrt) {
    auto it = leaf_grads.find(w.impl());
    out.push_back(it != leaf_grads.end() ? it->second : ZerosLike(w));
  }
  return out;
}

}  // namespace msrt::autodiff
