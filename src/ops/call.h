// Calling an op: the one front door for eager execution, graph capture and
// autodiff recording.
//
// Call() checks inputs and attributes against the OpDef, expands composites,
// infers output metadata, then hands the call to the thread's Executor (the
// eager dispatcher unless a graph capture installed its own) and lets the
// autodiff recorder see it.
#pragma once

#include <vector>

#include "ops/op_def.h"

namespace msrt::ops {

std::vector<Tensor> Call(std::string_view name, const std::vector<Tensor>& inputs, const Dict& attrs = {});
/// Call for a caller that looked the op up once (GetOp) and keeps it: ops
/// live as long as the process.
std::vector<Tensor> Call(const OpDef& op, const std::vector<Tensor>& inputs, const Dict& attrs = {});
/// Call for single-output ops.
Tensor Call1(std::string_view op, const std::vector<Tensor>& inputs, const Dict& attrs = {});

/// Runs prepared calls. Outputs must be returned with the inferred metadata.
/// `input_metas` are the inputs' shapes and dtypes, as inference saw them.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::vector<Tensor> Run(const OpDef& op, const std::vector<Tensor>& inputs, const Dict& attrs,
                                  const std::vector<TensorMeta>& input_metas,
                                  const std::vector<TensorMeta>& output_metas) = 0;
};

/// The executor used when a thread installed none (set once by the runtime).
void SetDefaultExecutor(Executor* executor);
/// Installs `executor` for this thread until the guard is destroyed.
class ExecutorScope {
 public:
  explicit ExecutorScope(Executor* executor);
  ~ExecutorScope();

 private:
  Executor* previous_;
};

/// While alive, calls on this thread compute the gradient of the op that
/// produced `forward_output` (graph capture scopes them "Gradients/<its scope>").
class GradientContext {
 public:
  explicit GradientContext(const Tensor* forward_output);
  ~GradientContext();
  GradientContext(const GradientContext&) = delete;
  GradientContext& operator=(const GradientContext&) = delete;
  /// The forward output whose gradient is being computed, or nullptr.
  static const Tensor* Current();

 private:
  const Tensor* previous_;
};

/// Autodiff's view of calls: consulted after each call whose op has a
/// gradient (set once by the autodiff library).
struct Recorder {
  bool (*active)() = nullptr;
  void (*record)(const OpDef& op, const Dict& attrs, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& outputs) = nullptr;
};
void SetRecorder(Recorder recorder);
/// Whether calls on this thread are being recorded for differentiation now:
/// inside a gradient rule, true only while a gradient with create_graph
/// runs (the gradient itself will be differentiated).
bool RecordingCalls();

/// Whether a call made now on this thread goes straight to the default
/// executor with nothing else seeing it: no executor scope (a graph
/// capture), no call observer, no gradient recording. Shortcuts that give an
/// op's result without calling it (Note [Host shortcuts] in runtime/eager.h)
/// are taken only then.
bool CallsUnobserved();

/// Sees every call before it runs: composites and the calls their bodies make
/// included, outer call first, with the attributes parsed (every attribute,
/// in its canonical form). For tracing which ops a function runs; any thread
/// may call it.
class CallObserver {
 public:
  virtual ~CallObserver() = default;
  virtual void OnCall(const OpDef& op, const Dict& attrs) = 0;
};
/// Adding or removing is rare and copies the list; a call with none pays one
/// relaxed load.
void AddCallObserver(CallObserver* observer);
/// AddCallObserver for an observer that acts only on calls made while calls
/// are recorded (RecordingCalls): it does not keep CallsUnobserved false.
void AddRecordingCallObserver(CallObserver* observer);
void RemoveCallObserver(CallObserver* observer);

}  // namespace msrt::ops
