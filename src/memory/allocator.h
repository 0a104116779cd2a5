// Device memory for tensors: one pool per device (Note [Memory pool] in
// memory_pool.h), sized by the context.
//
// The pool of a device starts with its first allocation. It then reads
// max_device_memory (and its deprecated form variable_memory_max_size: the
// smaller cap wins), mempool_block_size and env_config_path's sys.mem_Reuse,
// and marks the first three in effect: from then on a different value is
// refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "memory/memory_pool.h"
#include "msrt/tensor/tensor.h"

namespace msrt::memory {

/// Allocates `nbytes` (64-byte aligned) on `device`; raises MemoryError.
std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device);

/// Called (on the allocating thread) when a request does not fit, before
/// it is retried once: the executor waits there for queued kernels, whose
/// tensors may be freed when they finish. Must return at once on a thread
/// that runs those kernels.
void SetPressureHook(void (*hook)());

/// Around fork(): the pools' locks are taken before and released after, in
/// the parent and in the child (runtime/fork.cc).
void LockPoolsForFork();
void UnlockPoolsAfterFork();

/// Statistics of `device`'s pool (all zero before its first allocation;
/// `cap` and `block_size` then show what the context says now).
PoolStats Stats(DeviceTarget device);
void ResetPeak(DeviceTarget device);
/// Returns every block nothing lives in to the device.
void EmptyCache(DeviceTarget device);
/// A few lines for people: usage, peaks, cap, blocks, reuse.
std::string Summary(DeviceTarget device);

/// Whether freed buffers may be handed out again (env_config_path:
/// sys.mem_Reuse, default true). Memory planners read it too.
bool BufferReuseEnabled();

/// Returns the free pages of the C heap (malloc's, not the pools') to the
/// system (Note [Freed host heap]).
void ReleaseFreeHostHeap();

namespace testing {
/// Test suites only: forgets that the pools have started, so the memory keys
/// may change again (the next allocation marks them in effect anew). Live
/// tensors keep their memory.
void ThawPools();
}  // namespace testing

}  // namespace msrt::memory
