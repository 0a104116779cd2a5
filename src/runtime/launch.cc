#include "runtime/launch.h"

#include "core/observer_list.h"

namespace msrt::runtime {
namespace {

ObserverList<KernelObserver>& Observers() {
  static auto* list = new ObserverList<KernelObserver>();  // launches may run during exit
  return *list;
}

// Every storage the kernel may have written gets a new stamp (Note [Storage
// stamps] in msrt/tensor/tensor.h): its outputs' and those of the inputs
// its op writes in place.
void MarkWritten(const ops::OpDef& op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs) {
  auto mark = [](const Tensor& t) {
    if (t.defined() && t.impl()->storage != nullptr) t.impl()->storage->MarkWritten();
  };
  for (const Tensor& t : outputs) mark(t);
  if (op.props.inplace && !inputs.empty()) mark(inputs[0]);
  for (int i : op.props.writes_inputs) {
    if (static_cast<size_t>(i) < inputs.size()) mark(inputs[static_cast<size_t>(i)]);
  }
}

}  // namespace

void AddKernelObserver(KernelObserver* observer) { Observers().Add(observer); }
void RemoveKernelObserver(KernelObserver* observer) { Observers().Remove(observer); }

void LaunchKernel(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>& outputs, const Dict& attrs, const LaunchSite& site, const void* plan) {
  kernels::KernelArgs args{op, inputs, outputs, attrs, plan};
  if (Observers().empty()) {
    try {
      kernel.run(args);
    } catch (...) {
      MarkWritten(op, inputs, outputs);
      throw;
    }
    MarkWritten(op, inputs, outputs);
    return;
  }
  const auto* observers = Observers().snapshot();
  LaunchEvent event{kernel, op, inputs, outputs, attrs, site};
  size_t armed = 0;  // observers whose Before() returned
  try {
    for (KernelObserver* o : *observers) {
      o->Before(event);
      ++armed;
    }
    kernel.run(args);
  } catch (...) {
    MarkWritten(op, inputs, outputs);
    for (size_t i = 0; i < armed; ++i) (*observers)[i]->Aborted(event);
    throw;
  }
  MarkWritten(op, inputs, outputs);
  for (KernelObserver* o : *observers) o->After(event);
}

}  // namespace msrt::runtime
