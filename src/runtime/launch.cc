#include "runtime/launch.h"

#include "core/observer_list.h"

namespace msrt::runtime {
namespace {

ObserverList<KernelObserver>& Observers() {
  static auto* list = new ObserverList<KernelObserver>();  // launches may run during exit
  return *list;
}

}  // namespace

void AddKernelObserver(KernelObserver* observer) { Observers().Add(observer); }
void RemoveKernelObserver(KernelObserver* observer) { Observers().Remove(observer); }

void LaunchKernel(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>& outputs, const Dict& attrs, const LaunchSite& site, const void* plan) {
  kernels::KernelArgs args{op, inputs, outputs, attrs, plan};
  if (Observers().empty()) {
    kernel.run(args);
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
    for (size_t i = 0; i < armed; ++i) (*observers)[i]->Aborted(event);
    throw;
  }
  for (KernelObserver* o : *observers) o->After(event);
}

}  // namespace msrt::runtime
