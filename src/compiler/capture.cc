#include "compiler/capture.h"

#include "runtime/eager.h"

namespace msrt::compiler {
namespace {

thread_local Capture* t_capture = nullptr;

}  // namespace

CaptureScope::CaptureScope(Capture* capture) : executor_(capture), previous_(t_capture) { t_capture = capture; }
CaptureScope::~CaptureScope() { t_capture = previous_; }
Capture* ActiveCapture() { return t_capture; }

Capture::Capture(std::string graph_name, int64_t max_call_depth, bool whole_stack)
    : graph_(std::make_shared<ir::Graph>(std::move(graph_name))),
      max_call_depth_(max_call_depth),
      whole_stack_(whole_stack) {}

Tensor Capture::AddInput(const Shape& shape, DType dtype, DeviceTarget device, std::string name) {
  MSRT_INTERNAL_ASSERT(graph_ != nullptr, "capture used after Finish");
  ir::Node node;
  node.kind = ir::NodeKind::kInput;
  node.outputs = {{shape, dtype}};
  node.name = std::move(name);
  int32_t id = graph_->Add(std::move(node));
  graph_->inputs().push_back(id);
  Tensor t = Tensor::Symbolic(shape, dtype, device);
  symbolic_[t.impl()->storage.get()] = {id, 0};
  keep_alive_.push_back(t);
  return t;
}

void Capture::PushScope(std::string scope) {
  if (static_cast<int64_t>(scopes_.size()) >= max_call_depth_) {
    throw RuntimeError(
        StrCat("Exceed function call depth limit ", max_call_depth_, ", (function call depth: ", scopes_.size() + 1,
               ", simulate call depth: ", scopes_.size() + 1, ") while compiling graph '", graph_->name(), "' at '",
               scope, "'. Raise it with set_context(max_call_depth=...) if the network is that deep."));
  }
  scopes_.push_back(std::move(scope));
}

void Capture::PopScope() {
  MSRT_INTERNAL_ASSERT(!scopes_.empty(), "PopScope without PushScope");
  scopes_.pop_back();
}

std::string Capture::CurrentScope() const { return scopes_.empty() ? "Default" : scopes_.back(); }

ir::ValueRef Capture::Lookup(const Tensor& t) {
  if (t.symbolic()) {
    auto it = symbolic_.find(t.impl()->storage.get());
    if (it == symbolic_.end()) {
      throw RuntimeError(StrCat("A Tensor of shape ", ShapeRepr(t.shape()),
                                " computed while compiling another "
                                "graph was used while compiling graph '",
                                graph_->name(),
                                "'. Tensors computed "
                                "inside a compiled function only exist there: do not keep them in attributes or "
                                "globals across calls."));
    }
    ir::ValueRef v = it->second;
    if (graph_->Meta(v).shape == t.shape()) return v;
    // A view of another shape on the same value (Tensor::Reshaped).
    ir::Node node;
    node.op = &ops::GetOp("reshape");
    node.inputs = {v};
    node.attrs = ops::NormalizeAttrs(*node.op, {{"shape", Value(List(t.shape().begin(), t.shape().end()))}});
    node.outputs = {{t.shape(), t.dtype()}};
    node.scope = CurrentScope();
    return {graph_->Add(std::move(node)), 0};
  }
  auto it = bound_.find(t.impl());
  if (it != bound_.end()) return {it->second, 0};
  ir::Node node;
  bool named = !t.impl()->name.empty();
  node.kind = named ? ir::NodeKind::kWeight : ir::NodeKind::kConstant;
  node.name = t.impl()->name;
  node.value = t;
  node.outputs = {{t.shape(), t.dtype()}};
  int32_t id = graph_->Add(std::move(node));
  bound_[t.impl()] = id;
  keep_alive_.push_back(t);
  return {id, 0};
}

std::vector<Tensor> Capture::Run(const ops::OpDef& op, const std::vector<Tensor>& inputs, const Dict& attrs,
                                 const std::vector<ops::TensorMeta>& /*input_metas*/,
                                 const std::vector<ops::TensorMeta>& metas) {
  MSRT_INTERNAL_ASSERT(graph_ != nullptr, "capture used after Finish");
  if (op.props.data_dependent_shape) {
    // As reading a tensor's value (Note [Graph capture]): LAX runs the call eagerly, STRICT refuses it.
    throw GraphCaptureError(StrCat("For '", op.name, "', the shape of the output depends on the input's values, ",
                                   "which a compiled graph does not hold yet (graph '", graph_->name(), "')"));
  }
  std::vector<int> written(op.props.writes_inputs.begin(), op.props.writes_inputs.end());
  if (op.props.inplace) written.push_back(0);
  if (replay_) {
    if (op.props.side_effect) {  // happened when the forward ran
      std::vector<Tensor> outputs;
      outputs.reserve(metas.size());
      for (const ops::TensorMeta& m : metas) outputs.push_back(Tensor::Zeros(m.shape, m.dtype));
      return outputs;
    }
    for (int w : written) {
      const Tensor& target = inputs.at(static_cast<size_t>(w));
      if (target.symbolic() || private_copies_.contains(target.impl())) continue;
      // The graph writes its own copy; later reads of `target` in this graph see the copy.
      target.Sync();
      Tensor copy = Tensor::FromHost(target.data(), static_cast<size_t>(target.nbytes()), target.shape(),
                                     target.dtype());
      ir::Node state;
      state.kind = ir::NodeKind::kWeight;
      state.name = StrCat("replay.", unnamed_states_++);
      state.value = copy;
      state.outputs = {{copy.shape(), copy.dtype()}};
      bound_[target.impl()] = graph_->Add(std::move(state));
      private_copies_.insert(target.impl());
      keep_alive_.push_back(copy);
    }
  }
  ir::Node node;
  node.op = &op;
  node.attrs = attrs;
  node.inputs.reserve(inputs.size());
  for (const Tensor& t : inputs) node.inputs.push_back(Lookup(t));
  node.outputs = metas;
  node.scope = CurrentScope();
  if (const Tensor* forward = ops::GradientContext::Current()) {
    auto it = forward->symbolic() ? symbolic_.find(forward->impl()->storage.get()) : symbolic_.end();
    std::string of = it != symbolic_.end() ? graph_->node(it->second.node).scope : CurrentScope();
    node.scope = of.starts_with("Gradients/") ? of : "Gradients/" + of;
  }
  node.source = runtime::CallOrigin(whole_stack_);

  // Constants written in place are state, not constants.
  for (int w : written) {
    ir::Node& target = graph_->node(node.inputs.at(static_cast<size_t>(w)).node);
    if (target.kind == ir::NodeKind::kConstant) {
      target.kind = ir::NodeKind::kWeight;
      target.name = StrCat("state.", unnamed_states_++);
    }
  }

  int32_t id = graph_->Add(std::move(node));
  std::vector<Tensor> outputs;
  outputs.reserve(metas.size());
  for (size_t k = 0; k < metas.size(); ++k) {
    if (k == 0 && op.props.inplace) {
      const Tensor& target = inputs[0];
      if (target.symbolic()) symbolic_[target.impl()->storage.get()] = {id, 0};
      outputs.push_back(target);
      continue;
    }
    Tensor out = Tensor::Symbolic(metas[k].shape, metas[k].dtype,
                                  inputs.empty() ? DeviceTarget::kCPU : inputs[0].device());
    symbolic_[out.impl()->storage.get()] = {id, static_cast<int32_t>(k)};
    keep_alive_.push_back(out);
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::shared_ptr<ir::Graph> Capture::Finish(const std::vector<Tensor>& outputs) {
  MSRT_INTERNAL_ASSERT(graph_ != nullptr, "capture finished twice");
  for (const Tensor& t : outputs) graph_->outputs().push_back(Lookup(t));
  symbolic_.clear();
  bound_.clear();
  private_copies_.clear();
  keep_alive_.clear();
  return std::move(graph_);
}

std::vector<Tensor> InlineGraph(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  const auto& nodes = graph.nodes();
  if (inputs.size() != graph.inputs().size()) {
    throw TypeError(StrCat("The graph '", graph.name(), "' takes ", graph.inputs().size(), " inputs, but got ",
                           inputs.size(), "."));
  }
  std::vector<std::vector<Tensor>> values(nodes.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    auto id = static_cast<size_t>(graph.inputs()[k]);
    const ops::TensorMeta& want = nodes[id].outputs[0];
    if (!ShapeMatches(want.shape, inputs[k].shape()) || inputs[k].dtype() != want.dtype) {
      throw ValueError(StrCat("The graph '", graph.name(), "' takes input ", k, " as ", DTypeName(want.dtype),
                              ShapeRepr(want.shape), ", but got ", DTypeName(inputs[k].dtype()),
                              ShapeRepr(inputs[k].shape()), "."));
    }
    values[id] = {inputs[k]};
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    if (n.dead || n.kind == ir::NodeKind::kInput) continue;
    if (n.kind != ir::NodeKind::kOp) {
      // The graph's weights are its own: unnamed, a capture holds them as
      // constants instead of rebinding them by name to the caller's parameters.
      auto alias = std::make_shared<TensorImpl>();
      alias->storage = n.value.impl()->storage;
      alias->offset = n.value.impl()->offset;
      alias->shape = n.value.shape();
      alias->dtype = n.value.dtype();
      values[i] = {Tensor(std::move(alias))};
      continue;
    }
    if (!n.fused.empty()) throw InternalError("InlineGraph takes a graph before graph-kernel fusion");
    std::vector<Tensor> args;
    args.reserve(n.inputs.size());
    for (const ir::ValueRef& v : n.inputs)
      args.push_back(values[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)]);
    values[i] = ops::Call(n.op->name, args, n.attrs);
  }
  std::vector<Tensor> outputs;
  for (const ir::ValueRef& v : graph.outputs())
    outputs.push_back(values[static_cast<size_t>(v.node)][static_cast<size_t>(v.index)]);
  return outputs;
}

}  // namespace msrt::compiler
