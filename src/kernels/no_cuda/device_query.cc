// Linked when the build has no CUDA backend.
#include "msrt/core/device.h"

namespace msrt {

bool BuiltWithCuda() { return false; }

bool BuiltWithGpuKernels() { return false; }

int VisibleCudaDevices(std::string* why_not) {
  if (why_not != nullptr) *why_not = "msrt was built without CUDA (the CUDA toolkit was not found or MSRT_CUDA=OFF)";
  return 0;
}

std::string CudaDeviceProblem(int64_t) {
  return "msrt was built without CUDA (the CUDA toolkit was not found or MSRT_CUDA=OFF)";
}

}  // namespace msrt
