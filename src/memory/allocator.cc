#include "memory/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "msrt/core/errors.h"

namespace msrt::memory {
namespace {

constexpr size_t kAlignment = 64;

// Rounds a request to its size class: multiples of 64 B up to 4 KiB, then
// four classes per power of two (at most 25% slack).
size_t SizeClass(size_t nbytes) {
  if (nbytes <= 4096) return (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  size_t power = size_t{1} << (63 - __builtin_clzll(nbytes - 1));
  size_t step = power / 4;
  return (nbytes + step - 1) / step * step;
}

class CpuCache {
 public:
  void* Take(size_t size_class) {
    std::lock_guard lock(mutex_);
    auto it = free_.find(size_class);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_bytes_ -= static_cast<int64_t>(size_class);
      return p;
    }
    return nullptr;
  }
  void Give(void* p, size_t size_class) {
    std::lock_guard lock(mutex_);
    free_[size_class].push_back(p);
    cached_bytes_ += static_cast<int64_t>(size_class);
  }
  int64_t cached_bytes() {
    std::lock_guard lock(mutex_);
    return cached_bytes_;
  }
  void Empty() {
    std::lock_guard lock(mutex_);
    for (auto& [size, blocks] : free_) {
      for (void* p : blocks) std::free(p);
    }
    free_.clear();
    cached_bytes_ = 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  int64_t cached_bytes_ = 0;
};

CpuCache& Cache() {
  static CpuCache* cache = new CpuCache();  // outlives tensors freed at exit
  return *cache;
}

std::atomic<int64_t> g_allocated{0};
std::atomic<int64_t> g_peak{0};

void ReleaseCpu(void* p, size_t size_class) {
  g_allocated.fetch_sub(static_cast<int64_t>(size_class), std::memory_order_relaxed);
  Cache().Give(p, size_class);
}

}  // namespace

std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device) {
  if (device != DeviceTarget::kCPU) {
    throw RuntimeError(StrCat("No memory allocator for device '", DeviceTargetName(device),
                              "' in this build of msrt."));
  }
  size_t size_class = SizeClass(nbytes == 0 ? 1 : nbytes);
  void* p = Cache().Take(size_class);
  if (p == nullptr) {
    p = std::aligned_alloc(kAlignment, size_class);
    if (p == nullptr) {
      Cache().Empty();
      p = std::aligned_alloc(kAlignment, size_class);
    }
    if (p == nullptr) {
      throw MemoryError(StrCat("Out of host memory: could not allocate ", nbytes, " bytes (", g_allocated.load(),
                               " bytes are in use by tensors)."));
    }
  }
  int64_t now = g_allocated.fetch_add(static_cast<int64_t>(size_class), std::memory_order_relaxed) +
                static_cast<int64_t>(size_class);
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return std::make_shared<Storage>(p, size_class, device, &ReleaseCpu);
}

MemoryStats Stats(DeviceTarget device) {
  MemoryStats s;
  if (device != DeviceTarget::kCPU) return s;
  s.allocated = g_allocated.load();
  s.peak_allocated = g_peak.load();
  s.reserved = s.allocated + Cache().cached_bytes();
  return s;
}

void ResetPeak(DeviceTarget device) {
  if (device == DeviceTarget::kCPU) g_peak.store(g_allocated.load());
}

void EmptyCache(DeviceTarget device) {
  if (device == DeviceTarget::kCPU) Cache().Empty();
}

}  // namespace msrt::memory
