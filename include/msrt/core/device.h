// Device targets and what this build and machine can run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace msrt {

/// The device targets a context can name. Ascend is accepted (scripts set it)
/// but msrt has no Ascend backend.
enum class DeviceTarget : uint8_t { kCPU = 0, kGPU = 1, kAscend = 2 };
inline constexpr int kDeviceTargetCount = 3;

/// A set of device targets.
using DeviceMask = uint8_t;
constexpr DeviceMask MaskOf(DeviceTarget t) { return static_cast<DeviceMask>(1u << static_cast<int>(t)); }
inline constexpr DeviceMask kCPUOnly = MaskOf(DeviceTarget::kCPU);
inline constexpr DeviceMask kGPUOnly = MaskOf(DeviceTarget::kGPU);
inline constexpr DeviceMask kAscendOnly = MaskOf(DeviceTarget::kAscend);
inline constexpr DeviceMask kAllDevices = kCPUOnly | kGPUOnly | kAscendOnly;

/// "CPU", "GPU" or "Ascend".
std::string_view DeviceTargetName(DeviceTarget target);
/// Exact, case-sensitive name to target ("Davinci" is not handled here).
std::optional<DeviceTarget> ParseDeviceTarget(std::string_view name);
/// "['CPU', 'GPU']" — the names in `mask`, in MindSpore's list style.
std::string DeviceMaskRepr(DeviceMask mask);

/// Whether this build has a CUDA backend, and how many CUDA devices are
/// visible; `why_not` (if given) explains a zero.
bool BuiltWithCuda();
int VisibleCudaDevices(std::string* why_not = nullptr);

/// Whether this build has kernels that run on a CUDA device. Device
/// discovery (and NCCL's collectives on device buffers) can be built without
/// them; work on device_target 'GPU' cannot run then.
bool BuiltWithGpuKernels();

/// Why CUDA device `device_id` cannot run work, from the CUDA runtime's
/// error codes (driver missing or too old, no device visible, device_id out
/// of range, ...), or "" when it can.
std::string CudaDeviceProblem(int64_t device_id);

/// Throws one RuntimeError, the same from every executor, when work cannot
/// run on `target` (device `device_id`): no Ascend backend, the CUDA
/// device's problem, or no GPU kernels in this build. Does nothing for CPU.
void RequireDevice(DeviceTarget target, int64_t device_id);

/// The best device present: GPU when the build has GPU kernels and a CUDA
/// device is visible, else CPU.
DeviceTarget BestAvailableDevice();

/// Hardware threads of this machine (at least 1).
int HardwareConcurrency();

}  // namespace msrt
