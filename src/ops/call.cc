#include "ops/call.h"

#include <algorithm>

#include "core/observer_list.h"
#include "msrt/op_call.h"
#include "ops/op_registry.h"

namespace msrt::ops {
namespace {

Executor* g_default_executor = nullptr;
thread_local Executor* t_executor = nullptr;
thread_local const Tensor* t_gradient_of = nullptr;
Recorder g_recorder;

ObserverList<CallObserver>& CallObservers() {
  static auto* list = new ObserverList<CallObserver>();  // calls may run during exit
  return *list;
}

// The observers of CallObservers that may act on calls made while nothing
// is recorded (all but those added by AddRecordingCallObserver).
ObserverList<CallObserver>& WatchingObservers() {
  static auto* list = new ObserverList<CallObserver>();
  return *list;
}

}  // namespace

void SetDefaultExecutor(Executor* executor) { g_default_executor = executor; }

ExecutorScope::ExecutorScope(Executor* executor) : previous_(t_executor) { t_executor = executor; }
ExecutorScope::~ExecutorScope() { t_executor = previous_; }

void SetRecorder(Recorder recorder) { g_recorder = recorder; }
bool RecordingCalls() { return g_recorder.active != nullptr && g_recorder.active(); }
bool CallsUnobserved() { return t_executor == nullptr && WatchingObservers().empty() && !RecordingCalls(); }
void AddCallObserver(CallObserver* observer) {
  WatchingObservers().Add(observer);
  CallObservers().Add(observer);
}
void AddRecordingCallObserver(CallObserver* observer) { CallObservers().Add(observer); }
void RemoveCallObserver(CallObserver* observer) {
  CallObservers().Remove(observer);
  WatchingObservers().Remove(observer);
}

GradientContext::GradientContext(const Tensor* forward_output) : previous_(t_gradient_of) {
  t_gradient_of = forward_output;
}
GradientContext::~GradientContext() { t_gradient_of = previous_; }
const Tensor* GradientContext::Current() { return t_gradient_of; }

std::vector<Tensor> Call(std::string_view name, const std::vector<Tensor>& inputs, const Dict& attrs) {
  return Call(GetOp(name), inputs, attrs);
}

std::vector<Tensor> Call(const OpDef& op, const std::vector<Tensor>& inputs, const Dict& attrs) {
  bool variadic = op.inputs.size() == 1 && op.inputs[0].ends_with("...");
  if (!variadic && inputs.size() != op.inputs.size()) {
    OpError(ErrorKind::kType, op.name, StrCat("takes ", op.inputs.size(), " inputs, but got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() && !IsOptionalInput(op, i)) {
      OpError(ErrorKind::kValue, op.name, StrCat("input ", i, " is an undefined tensor"));
    }
  }
  Dict normalized_storage;
  const Dict& normalized = NormalizedAttrs(op, attrs, normalized_storage);
  if (!CallObservers().empty()) {
    for (CallObserver* observer : *CallObservers().snapshot()) observer->OnCall(op, normalized);
  }
  if (op.composite) return op.composite(inputs, normalized);

  std::vector<TensorMeta> input_metas;
  input_metas.reserve(inputs.size());
  for (const Tensor& t : inputs) input_metas.push_back(TensorMeta{t.shape(), t.dtype()});
  std::vector<TensorMeta> output_metas = op.infer(input_metas, normalized);
  // One check for every op: inferred shapes are non-negative and their sizes fit.
  for (const TensorMeta& meta : output_metas) CheckShape(meta.shape, meta.dtype, op.name);

  Executor* executor = t_executor != nullptr ? t_executor : g_default_executor;
  MSRT_INTERNAL_ASSERT(executor != nullptr, "no executor installed");
  std::vector<Tensor> outputs = executor->Run(op, inputs, normalized, input_metas, output_metas);
  // Ops without a gradient are seen too when they give complex values (Note
  // [Complex gradients] in autodiff.cc): the recorder rejects a gradient path into them.
  const bool complex_io = std::any_of(output_metas.begin(), output_metas.end(),
                                      [](const TensorMeta& m) { return IsComplex(m.dtype); }) ||
                          std::any_of(inputs.begin(), inputs.end(),
                                      [](const Tensor& t) { return IsComplex(t.dtype()); });
  if ((op.grad || complex_io) && g_recorder.active != nullptr && g_recorder.active()) {
    g_recorder.record(op, normalized, inputs, outputs);
  }
  return outputs;
}

Tensor Call1(std::string_view op, const std::vector<Tensor>& inputs, const Dict& attrs) {
  std::vector<Tensor> out = Call(op, inputs, attrs);
  MSRT_INTERNAL_ASSERT(out.size() == 1, "op ", op, " returned ", out.size(), " outputs to Call1");
  return out[0];
}

}  // namespace msrt::ops

namespace msrt::ops {

Outputs CallOp(std::string_view name, const std::vector<Tensor>& inputs, const Dict& attrs) {
  return Outputs(Call(name, inputs, attrs));
}

}  // namespace msrt::ops
