#include <algorithm>
#include <map>

#include "kernels/kernel.h"

namespace msrt::kernels {
namespace {

std::map<std::string, std::vector<KernelDef>, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, std::vector<KernelDef>, std::less<>>();
  return *registry;
}

}  // namespace

bool RegisterKernel(KernelDef def) {
  MSRT_INTERNAL_ASSERT(def.run != nullptr, "kernel for ", def.op, " has no function");
  auto& list = Registry()[std::string(def.op)];
  list.push_back(def);
  std::stable_sort(list.begin(), list.end(),
                   [](const KernelDef& a, const KernelDef& b) { return a.priority > b.priority; });
  return true;
}

const KernelDef* SelectKernel(std::string_view op, DeviceTarget device, const std::vector<ops::TensorMeta>& inputs,
                              const Dict& attrs) {
  auto it = Registry().find(op);
  if (it == Registry().end()) return nullptr;
  for (const KernelDef& k : it->second) {
    if (k.device == device && (k.supports == nullptr || k.supports(inputs, attrs))) return &k;
  }
  return nullptr;
}

std::vector<const KernelDef*> KernelsOf(std::string_view op) {
  std::vector<const KernelDef*> out;
  auto it = Registry().find(op);
  if (it != Registry().end()) {
    for (const KernelDef& k : it->second) out.push_back(&k);
  }
  return out;
}

}  // namespace msrt::kernels
