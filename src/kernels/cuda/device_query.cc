// Device discovery through the CUDA runtime.
#include <cuda_runtime_api.h>

#include <mutex>

#include "msrt/core/device.h"
#include "msrt/core/errors.h"

namespace msrt {

bool BuiltWithCuda() { return true; }

// The CUDA backend has device discovery (here) and NCCL's collectives on
// device buffers (src/parallel/nccl), but no operator kernels yet, so the
// default device stays the CPU on a machine with a GPU. The kernel test
// (tests/cpp/kernels/registry_test.cc) holds this to the registry's content.
bool BuiltWithGpuKernels() { return false; }

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

namespace {

// What a failed CUDA runtime call means for a user, by its error code.
std::string Explain(cudaError_t status) {
  std::string code = StrCat(cudaGetErrorName(status), ": ", cudaGetErrorString(status));
  switch (status) {
    case cudaErrorInsufficientDriver:
      return StrCat("the NVIDIA driver is missing or older than this CUDA runtime needs (", code, ")");
    case cudaErrorNoDevice: return StrCat("no CUDA device is visible (", code, "; check CUDA_VISIBLE_DEVICES)");
    case cudaErrorInitializationError: return StrCat("the CUDA driver failed to initialise (", code, ")");
    default: return StrCat("the CUDA runtime reports ", code);
  }
}

}  // namespace

std::string CudaDeviceProblem(int64_t device_id) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    return Explain(status);
  }
  if (device_id < 0 || device_id > INT32_MAX) return StrCat("device_id ", device_id, " is not a CUDA device index");
  int major = 0;
  status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, static_cast<int>(device_id));
  if (status == cudaErrorInvalidDevice) {
    cudaGetLastError();
    return StrCat("device_id ", device_id, " is out of range: ", count, " CUDA device", count == 1 ? " is" : "s are",
                  " visible (", cudaGetErrorName(status), ")");
  }
  if (status != cudaSuccess) {
    cudaGetLastError();
    return Explain(status);
  }
  return "";
}

}  // namespace msrt
