// Device memory for tensors.
//
// The CPU allocator keeps freed blocks in size classes and hands them out
// again, so a training loop that allocates the same shapes every step stops
// touching the system allocator (and the page-fault cost of fresh pages)
// after its first step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "msrt/tensor/tensor.h"

namespace msrt::memory {

/// Allocates `nbytes` (64-byte aligned) on `device`; raises MemoryError.
std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device);

struct MemoryStats {
  int64_t allocated = 0;      // bytes in live tensors
  int64_t peak_allocated = 0;  // since the last ResetPeak
  int64_t reserved = 0;       // allocated + cached for reuse
};

MemoryStats Stats(DeviceTarget device);
void ResetPeak(DeviceTarget device);
/// Returns every cached block to the system.
void EmptyCache(DeviceTarget device);

}  // namespace msrt::memory
