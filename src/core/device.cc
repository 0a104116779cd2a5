#include "msrt/core/device.h"

#include <thread>

#include "msrt/core/errors.h"

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

void RequireDevice(DeviceTarget target, int64_t device_id) {
  if (target == DeviceTarget::kAscend) {
    throw RuntimeError(
        "The device target is 'Ascend', but msrt has no Ascend backend. Use set_context(device_target='CPU') or "
        "'GPU' (with a CUDA build and device).");
  }
  if (target == DeviceTarget::kGPU) {
    std::string problem = CudaDeviceProblem(device_id);
    if (!problem.empty()) {
      throw RuntimeError(StrCat("The device target is 'GPU' (device_id ", device_id, "), but ", problem,
                                ". Use set_context(device_target='CPU')."));
    }
    if (!BuiltWithGpuKernels()) {
      throw RuntimeError(StrCat("The device target is 'GPU' (device_id ", device_id,
                                "), but this build of msrt has no GPU kernels yet: operators run on the CPU only (NCCL "
                                "collectives on device buffers aside). Use set_context(device_target='CPU')."));
    }
  }
}

DeviceTarget BestAvailableDevice() {
  return BuiltWithGpuKernels() && VisibleCudaDevices() > 0 ? DeviceTarget::kGPU : DeviceTarget::kCPU;
}

int HardwareConcurrency() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace msrt
