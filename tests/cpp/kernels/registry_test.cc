// What the kernel registry holds per device, and what the runtime makes of
// it: the default device is one that has kernels, and work sent to the GPU
// without GPU kernels is refused with one RuntimeError saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "msrt/core/device.h"
#include "msrt/core/errors.h"

namespace msrt {
namespace {

std::string RequireDeviceError(DeviceTarget target) {
  try {
    RequireDevice(target, 0);
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KernelRegistry, TheCpuHasKernelsForTheCommonOps) {
  std::vector<std::string> ops = kernels::OpsWithKernelsOn(DeviceTarget::kCPU);
  for (const char* op : {"add", "matmul", "conv2d", "reduce_sum", "cast"}) {
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), op)) << op;
  }
  EXPECT_TRUE(kernels::OpsWithKernelsOn(DeviceTarget::kAscend).empty());
}

TEST(KernelRegistry, BuiltWithGpuKernelsSaysWhatTheRegistryHolds) {
  EXPECT_EQ(BuiltWithGpuKernels(), !kernels::OpsWithKernelsOn(DeviceTarget::kGPU).empty());
  if (!BuiltWithCuda()) {
    EXPECT_FALSE(BuiltWithGpuKernels());
  }
}

// On a machine with a GPU and no GPU kernels the default stays the CPU:
// every op would fail on the GPU.
TEST(KernelRegistry, TheBestDeviceHasKernels) {
  DeviceTarget best = BestAvailableDevice();
  EXPECT_FALSE(kernels::OpsWithKernelsOn(best).empty()) << DeviceTargetName(best);
  if (!BuiltWithGpuKernels()) {
    EXPECT_EQ(best, DeviceTarget::kCPU);
  }
}

TEST(KernelRegistry, GpuWorkWithoutADeviceOrKernelsIsOneRuntimeError) {
  EXPECT_EQ(RequireDeviceError(DeviceTarget::kCPU), "(no error)");
  std::string error = RequireDeviceError(DeviceTarget::kGPU);
  std::string why;
  if (VisibleCudaDevices(&why) == 0) {
    EXPECT_NE(error.find("The device target is 'GPU' (device_id 0), but"), std::string::npos) << error;
  } else if (!BuiltWithGpuKernels()) {
    EXPECT_NE(error.find("this build of msrt has no GPU kernels yet"), std::string::npos) << error;
  } else {
    EXPECT_EQ(error, "(no error)");
  }
  EXPECT_NE(error.find("set_context(device_target='CPU')"), std::string::npos) << error;
  EXPECT_NE(RequireDeviceError(DeviceTarget::kAscend).find("no Ascend backend"), std::string::npos);
}

}  // namespace
}  // namespace msrt
