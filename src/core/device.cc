#include "msrt/core/device.h"

#include <thread>

namespace msrt {

std::string_view DeviceTargetName(DeviceTarget target) {
  switch (target) {
    case DeviceTarget::kCPU: return "CPU";
    case DeviceTarget::kGPU: return "GPU";
    case DeviceTarget::kAscend: return "Ascend";
  }
  return "CPU";
}

std::optional<DeviceTarget> ParseDeviceTarget(std::string_view name) {
  for (DeviceTarget t : {DeviceTarget::kCPU, DeviceTarget::kGPU, DeviceTarget::kAscend}) {
    if (DeviceTargetName(t) == name) return t;
  }
  return std::nullopt;
}

std::string DeviceMaskRepr(DeviceMask mask) {
  std::string out = "[";
  bool first = true;
  for (DeviceTarget t : {DeviceTarget::kCPU, DeviceTarget::kGPU, DeviceTarget::kAscend}) {
    if (mask & MaskOf(t)) {
      out += first ? "'" : ", '";
      out += DeviceTargetName(t);
      out += "'";
      first = false;
    }
  }
  return out + "]";
}

DeviceTarget BestAvailableDevice() {
  return VisibleCudaDevices() > 0 ? DeviceTarget::kGPU : DeviceTarget::kCPU;
}

int HardwareConcurrency() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace msrt
