// Device discovery through the CUDA runtime.
#include <cuda_runtime_api.h>

#include <mutex>

#include "msrt/core/device.h"

namespace msrt {

bool BuiltWithCuda() { return true; }

int VisibleCudaDevices(std::string* why_not) {
  static std::once_flag once;
  static int count = 0;
  static std::string reason;
  std::call_once(once, [] {
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      reason = std::string("the CUDA runtime reports: ") + cudaGetErrorString(status);
      count = 0;
      cudaGetLastError();  // clear the sticky error
    } else if (count == 0) {
      reason = "no CUDA device is visible";
    }
  });
  if (why_not != nullptr) *why_not = reason;
  return count;
}

}  // namespace msrt
