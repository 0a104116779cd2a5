#include "memory/allocator.h"

#include <malloc.h>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "context/env_config.h"
#include "context/options.h"
#include "context/testing.h"
#include "core/allocator.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"

namespace msrt::memory {
namespace {

namespace opts = context::runtime_options;

constexpr std::string_view kConsumer = "device memory pool";
// The keys frozen once the pool starts.
const std::array<const context::OptionKey*, 3>& FrozenKeys() {
  static const std::array<const context::OptionKey*, 3> keys = {&opts::MaxDeviceMemory(),
                                                                &opts::VariableMemoryMaxSize(),
                                                                &opts::MempoolBlockSize()};
  return keys;
}
constexpr double kGiB = double(int64_t{1} << 30);

// sys.mem_Reuse of the env_config_path file, followed as the key changes.
class ReuseSetting {
 public:
  ReuseSetting() {
    Read();
    subscription_ = context::Global().Subscribe({opts::EnvConfigPath()}, std::string(kConsumer),
                                                [this](const context::Change&) { Read(); });
  }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

 private:
  void Read() {
    std::string path = opts::EnvConfigPath().Get();
    if (path.empty()) {
      enabled_ = true;
      return;
    }
    try {
      enabled_ = context::LoadEnvConfigFile(path).mem_reuse;
    } catch (const Error& e) {  // set_context checked it; it changed on disk since
      MSRT_LOG(Warning) << "memory pool: keeping buffer reuse " << (enabled_ ? "on" : "off") << ": " << e.what();
    }
  }
  std::atomic<bool> enabled_{true};
  context::Subscription subscription_;
};

ReuseSetting& Reuse() {
  static auto* setting = new ReuseSetting();
  return *setting;
}

std::string GbText(double gb) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", gb);
  return text;
}

// The limits the context asks for now.
PoolLimits LimitsFromContext() {
  PoolLimits limits;
  double cap_gb = opts::MaxDeviceMemory().Get();
  limits.cap = static_cast<int64_t>(std::min(cap_gb * kGiB, 9.0e18));
  limits.cap_origin = StrCat("max_device_memory=\"", GbText(cap_gb), "GB\"");
  // Stored as "N * 1024 * 1024 * 1024", or "0" when unset.
  std::string variable = opts::VariableMemoryMaxSize().Get();
  int64_t variable_gb = std::atoll(variable.c_str());
  if (variable_gb > 0 && variable_gb * (int64_t{1} << 30) < limits.cap) {
    limits.cap = variable_gb * (int64_t{1} << 30);
    limits.cap_origin = StrCat("variable_memory_max_size=\"", variable_gb, "GB\"");
  }
  limits.block_size = static_cast<int64_t>(opts::MempoolBlockSize().Get() * kGiB);
  limits.reuse = Reuse().enabled();
  return limits;
}

class DevicePool {
 public:
  DevicePool() : pool_(MakeHostBlockSource(), LimitsFromContext()) {
    subscription_ = context::Global().Subscribe({opts::MaxDeviceMemory(), opts::VariableMemoryMaxSize(),
                                                 opts::MempoolBlockSize(), opts::EnvConfigPath()},
                                                std::string(kConsumer), [this](const context::Change&) {
                                                  pool_.SetLimits(LimitsFromContext());
                                                });
  }

  MemoryPool& Started() {
    if (!started_.load(std::memory_order_acquire)) Start();
    return pool_;
  }
  MemoryPool& pool() { return pool_; }
  bool started() const { return started_.load(std::memory_order_acquire); }
  void Thaw() {
    std::lock_guard lock(start_mutex_);
    for (const context::OptionKey* key : FrozenKeys()) {
      context::testing::ForgetInEffect(context::Global(), key->family(), key->key());
    }
    started_.store(false, std::memory_order_release);
  }

 private:
  void Start() {
    std::lock_guard lock(start_mutex_);
    if (started_.load(std::memory_order_relaxed)) return;
    // Marked before reading, so a concurrent set_context cannot slip in between.
    for (const context::OptionKey* key : FrozenKeys()) {
      context::Global().MarkInEffect(*key, "the CPU memory pool started (first tensor allocation)");
    }
    pool_.SetLimits(LimitsFromContext());
    started_.store(true, std::memory_order_release);
  }

  MemoryPool pool_;
  std::mutex start_mutex_;
  std::atomic<bool> started_{false};
  context::Subscription subscription_;
};

DevicePool& HostPool() {
  static auto* pool = new DevicePool();  // outlives tensors freed at exit
  return *pool;
}

std::atomic<void (*)()> g_pressure_hook{nullptr};

void ReleaseHost(void* p, size_t) { HostPool().pool().Free(p); }

void RequireHost(DeviceTarget device) {
  if (device != DeviceTarget::kCPU) {
    throw RuntimeError(StrCat("No memory pool for device '", DeviceTargetName(device), "' in this build of msrt."));
  }
}

// Declared at load so explain() and the docs name the pool before its first use.
const bool kConsumersDeclared = [] {
  for (const context::OptionKey* key : FrozenKeys()) context::Global().DeclareConsumer(*key, std::string(kConsumer));
  context::Global().DeclareConsumer(opts::EnvConfigPath(), "device memory pool (sys.mem_Reuse)");
  return true;
}();

// What Tensor::Empty allocates through (core/allocator.h), installed at load.
class PoolAllocator final : public Allocator {
 public:
  std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device) override {
    return memory::Allocate(nbytes, device);
  }
};

const bool kAllocatorInstalled = [] {
  InstallAllocator(new PoolAllocator());  // never destroyed: tensors may allocate during exit
  return true;
}();

}  // namespace

std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device) {
  RequireHost(device);
  MemoryPool& pool = HostPool().Started();
  size_t granted = 0;
  std::string why;
  void* p = pool.TryAllocate(nbytes, &granted, &why);
  if (p == nullptr) {
    if (auto hook = g_pressure_hook.load()) hook();  // queued kernels may free what is needed
    p = pool.Allocate(nbytes, &granted);
  }
  return std::make_shared<Storage>(p, granted, device, &ReleaseHost);
}

void SetPressureHook(void (*hook)()) { g_pressure_hook = hook; }

PoolStats Stats(DeviceTarget device) {
  RequireHost(device);
  DevicePool& host = HostPool();
  PoolStats stats = host.pool().Stats();
  if (!host.started()) {
    PoolLimits limits = LimitsFromContext();
    stats.cap = std::min(limits.cap, host.pool().source().Capacity());
    stats.block_size = limits.block_size;
    stats.reuse = limits.reuse;
  }
  return stats;
}

void ResetPeak(DeviceTarget device) {
  RequireHost(device);
  HostPool().pool().ResetPeak();
}

void EmptyCache(DeviceTarget device) {
  RequireHost(device);
  HostPool().pool().EmptyCache();
}

std::string Summary(DeviceTarget device) {
  PoolStats s = Stats(device);
  auto row = [](std::string_view name, int64_t bytes) {
    char text[96];
    std::snprintf(text, sizeof text, "  %-22s %12.2f MiB  (%lld bytes)\n", std::string(name).c_str(),
                  static_cast<double>(bytes) / double(1 << 20), static_cast<long long>(bytes));
    return std::string(text);
  };
  std::string out = StrCat("Memory pool of ", DeviceTargetName(device), HostPool().started() ? "" : " (not started)",
                           "\n");
  out += row("allocated", s.allocated);
  out += row("peak allocated", s.peak_allocated);
  out += row("reserved", s.reserved);
  out += row("peak reserved", s.peak_reserved);
  out += row("cap", s.cap);
  out += row("block size", s.block_size);
  out += StrCat("  blocks                 ", s.blocks, "\n", "  live tensors' buffers  ", s.live_pieces, "\n",
                "  allocations            ", s.allocations, " (", s.reused_allocations, " from reused memory, ",
                s.failed_allocations, " refused)\n", "  buffer reuse           ", s.reuse ? "on" : "off", "\n");
  return out;
}

bool BufferReuseEnabled() { return Reuse().enabled(); }

// Note [Freed host heap]
// Tensors live in the pools, but NumPy and the compiler use malloc, and
// glibc keeps what they free: after the first large block it returns to the
// system, it serves blocks up to that size from its heap, and gives heap
// pages back only from the top. Building a network leaves that heap full of
// freed initialiser arrays (a normal sample in float64, its float32 copy;
// 13 MiB for a 784-1024-1024-10 MLP), which no tensor can use: the pools map
// their own memory. msrt's initialisers draw in blocks into the tensor
// (python/msrt/common/initializer.py); what others left, and the
// compiler's own temporaries, go back when a graph is compiled: its start
// and its end hand the heap's free pages to the system (malloc_trim),
// before the plan's arena is first touched.
void ReleaseFreeHostHeap() { malloc_trim(0); }

namespace testing {
void ThawPools() { HostPool().Thaw(); }
}  // namespace testing

void LockPoolsForFork() { HostPool().pool().LockForFork(); }
void UnlockPoolsAfterFork() { HostPool().pool().UnlockAfterFork(); }

}  // namespace msrt::memory
