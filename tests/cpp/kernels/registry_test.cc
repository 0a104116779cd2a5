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

// Note [Kernel list cache]: lists are cached by the address of the name's
// characters; a name rewritten in place at the same address finds its own op.
TEST(KernelRegistry, SelectionFollowsANameRewrittenAtTheSameAddress) {
  const std::vector<ops::TensorMeta> metas{{{4}, DType::kFloat32}, {{4}, DType::kFloat32}};
  std::string name = "add";
  const char* address = name.data();
  for (int round = 0; round < 3; ++round) {
    for (const char* op : {"add", "mul", "sub"}) {
      name.assign(op);
      ASSERT_EQ(name.data(), address);
      const kernels::KernelDef* kernel = kernels::SelectKernel(name, DeviceTarget::kCPU, metas, {});
      ASSERT_NE(kernel, nullptr) << op;
      EXPECT_EQ(kernel->op, op);
    }
  }
  name.assign("nop");  // no op of that name: no kernel, though the address was cached
  EXPECT_EQ(kernels::SelectKernel(name, DeviceTarget::kCPU, metas, {}), nullptr);
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
