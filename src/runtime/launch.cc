#include "runtime/launch.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

namespace msrt::runtime {
namespace {

// Copy-on-write list: launches read a snapshot without taking the lock.
struct ObserverList {
  std::mutex mutex;
  std::shared_ptr<const std::vector<KernelObserver*>> current = std::make_shared<std::vector<KernelObserver*>>();
  std::atomic<size_t> count{0};
};

ObserverList& Observers() {
  static auto* list = new ObserverList();
  return *list;
}

void Replace(const std::function<void(std::vector<KernelObserver*>&)>& edit) {
  ObserverList& list = Observers();
  std::lock_guard lock(list.mutex);
  auto next = std::make_shared<std::vector<KernelObserver*>>(*std::atomic_load(&list.current));
  edit(*next);
  list.count.store(next->size(), std::memory_order_relaxed);
  std::atomic_store(&list.current, std::shared_ptr<const std::vector<KernelObserver*>>(std::move(next)));
}

}  // namespace

void AddKernelObserver(KernelObserver* observer) {
  Replace([observer](std::vector<KernelObserver*>& v) {
    if (std::find(v.begin(), v.end(), observer) == v.end()) v.push_back(observer);
  });
}

void RemoveKernelObserver(KernelObserver* observer) {
  Replace([observer](std::vector<KernelObserver*>& v) { v.erase(std::remove(v.begin(), v.end(), observer), v.end()); });
}

void LaunchKernel(const kernels::KernelDef& kernel, const ops::OpDef& op, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>& outputs, const Dict& attrs, const LaunchSite& site, const void* plan) {
  kernels::KernelArgs args{op, inputs, outputs, attrs, plan};
  if (Observers().count.load(std::memory_order_relaxed) == 0) {
    kernel.run(args);
    return;
  }
  auto observers = std::atomic_load(&Observers().current);
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
