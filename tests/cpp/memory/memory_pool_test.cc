// The memory pool on its own (Note [Memory pool]): cap, block growth,
// reuse, statistics; and the process's CPU pool freezing its context keys.
#include "memory/memory_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "memory/allocator.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"

namespace msrt::memory {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Host memory, with the device size and refusals under the test's control.
class FakeDevice final : public BlockSource {
 public:
  explicit FakeDevice(int64_t capacity, int* reserves = nullptr) : capacity_(capacity), reserves_(reserves) {}
  void* Reserve(size_t bytes) override {
    if (reserves_) ++*reserves_;
    if (refuse_) return nullptr;
    return host_->Reserve(bytes);
  }
  void Release(void* base, size_t bytes) override { host_->Release(base, bytes); }
  void Discard(void* p, size_t bytes) override { host_->Discard(p, bytes); }
  int64_t Capacity() const override { return capacity_; }
  std::string DeviceName() const override { return "FAKE"; }
  bool refuse_ = false;

 private:
  std::unique_ptr<BlockSource> host_ = MakeHostBlockSource();
  int64_t capacity_;
  int* reserves_;
};

PoolLimits Limits(int64_t cap, int64_t block, bool reuse = true) {
  PoolLimits l;
  l.cap = cap;
  l.block_size = block;
  l.reuse = reuse;
  l.cap_origin = "max_device_memory=\"test\"";
  return l;
}

void* Take(MemoryPool& pool, int64_t bytes) {
  size_t granted = 0;
  void* p = pool.Allocate(static_cast<size_t>(bytes), &granted);
  EXPECT_GE(granted, static_cast<size_t>(bytes));
  std::memset(p, 0x5a, static_cast<size_t>(bytes));  // the memory is really there
  return p;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MemoryPool, GrowsByBlocksUpToTheCapThenRefusesWithAClearError) {
  MemoryPool pool(MakeHostBlockSource(), Limits(8 * kMiB, 4 * kMiB));
  void* a = Take(pool, 3 * kMiB);
  EXPECT_EQ(pool.Stats().reserved, 4 * kMiB);
  void* b = Take(pool, 3 * kMiB);  // does not fit the first block's rest
  EXPECT_EQ(pool.Stats().reserved, 8 * kMiB);
  EXPECT_EQ(pool.Stats().blocks, 2);
  try {
    Take(pool, 3 * kMiB);
    ADD_FAILURE() << "no MemoryError";
  } catch (const MemoryError& e) {
    std::string m = e.what();
    EXPECT_TRUE(Contains(m, "max_device_memory")) << m;
    EXPECT_TRUE(Contains(m, std::to_string(3 * kMiB) + " bytes")) << m;  // the request
    EXPECT_TRUE(Contains(m, std::to_string(6 * kMiB) + " bytes")) << m;  // in use by tensors
    EXPECT_TRUE(Contains(m, std::to_string(8 * kMiB) + " bytes")) << m;  // the cap, and reserved
  }
  EXPECT_EQ(pool.Stats().failed_allocations, 1);
  // Still usable: the freed piece serves the same request.
  pool.Free(a);
  void* c = Take(pool, 3 * kMiB);
  EXPECT_EQ(c, a);
  pool.Free(b);
  pool.Free(c);
  EXPECT_EQ(pool.Stats().allocated, 0);
}

TEST(MemoryPool, AShortBlockFillsWhatIsLeftUnderTheCap) {
  MemoryPool pool(MakeHostBlockSource(), Limits(6 * kMiB, 4 * kMiB));
  void* a = Take(pool, 3 * kMiB);
  void* b = Take(pool, 2 * kMiB);
  EXPECT_EQ(pool.Stats().reserved, 6 * kMiB);
  EXPECT_EQ(pool.Stats().blocks, 2);
  pool.Free(a);
  pool.Free(b);
}

TEST(MemoryPool, ALargeRequestGetsABlockOfItsOwnAfterEmptyBlocksAreReleased) {
  MemoryPool pool(MakeHostBlockSource(), Limits(8 * kMiB, 4 * kMiB));
  void* a = Take(pool, 3 * kMiB);
  void* b = Take(pool, 3 * kMiB);
  pool.Free(a);
  pool.Free(b);
  EXPECT_EQ(pool.Stats().reserved, 8 * kMiB);  // kept for reuse
  void* big = Take(pool, 7 * kMiB);            // 8 MiB of its own: the cached blocks go first
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.blocks, 1);
  EXPECT_EQ(s.reserved, 8 * kMiB);
  pool.Free(big);
}

TEST(MemoryPool, TheDeviceSizeLowersTheCap) {
  MemoryPool pool(std::make_unique<FakeDevice>(4 * kMiB), Limits(int64_t{1} << 40, 2 * kMiB));
  EXPECT_EQ(pool.Stats().cap, 4 * kMiB);
  void* a = Take(pool, 2 * kMiB);
  void* b = Take(pool, 2 * kMiB);
  try {
    Take(pool, 1);
    ADD_FAILURE() << "no MemoryError";
  } catch (const MemoryError& e) {
    EXPECT_TRUE(Contains(e.what(), "lowered to what the device has")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "Out of memory on FAKE")) << e.what();
  }
  pool.Free(a);
  pool.Free(b);
}

TEST(MemoryPool, ARefusingDeviceRaisesMemoryErrorAndThePoolRecovers) {
  auto device = std::make_unique<FakeDevice>(int64_t{1} << 40);
  FakeDevice* fake = device.get();
  MemoryPool pool(std::move(device), Limits(int64_t{1} << 40, 2 * kMiB));
  fake->refuse_ = true;
  EXPECT_THROW(Take(pool, kMiB), MemoryError);
  fake->refuse_ = false;
  pool.Free(Take(pool, kMiB));
}

TEST(MemoryPool, FreedNeighboursMergeAndServeALargerRequest) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 16 * kMiB));
  void* a = Take(pool, kMiB);
  void* b = Take(pool, kMiB);
  void* c = Take(pool, kMiB);
  EXPECT_EQ(static_cast<char*>(b), static_cast<char*>(a) + kMiB);
  pool.Free(b);
  pool.Free(a);
  void* ab = Take(pool, 2 * kMiB);  // a and b merged
  EXPECT_EQ(ab, a);
  EXPECT_EQ(pool.Stats().reused_allocations, 1);
  EXPECT_EQ(pool.Stats().blocks, 1);
  pool.Free(ab);
  pool.Free(c);
}

TEST(MemoryPool, WithoutReuseEveryRequestGetsFreshMemory) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 16 * kMiB, /*reuse=*/false));
  std::vector<void*> seen;
  void* keep = Take(pool, kMiB);  // keeps the block alive
  for (int i = 0; i < 8; ++i) {
    void* p = Take(pool, kMiB);
    for (void* q : seen) EXPECT_NE(p, q);
    seen.push_back(p);
    pool.Free(p);
  }
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.reused_allocations, 0);
  EXPECT_FALSE(s.reuse);
  pool.Free(keep);
  // Nothing lives in the block: it went back to the device.
  EXPECT_EQ(pool.Stats().reserved, 0);
  EXPECT_EQ(pool.Stats().blocks, 0);
}

TEST(MemoryPool, StatisticsTrackUsageAndPeaks) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 8 * kMiB));
  void* a = Take(pool, 1000);  // rounded to the pool's unit
  EXPECT_EQ(pool.Stats().allocated, 1024);
  void* b = Take(pool, 3 * kMiB);
  pool.Free(b);
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.allocated, 1024);
  EXPECT_EQ(s.peak_allocated, 1024 + 3 * kMiB);
  EXPECT_EQ(s.live_pieces, 1);
  EXPECT_EQ(s.allocations, 2);
  pool.ResetPeak();
  EXPECT_EQ(pool.Stats().peak_allocated, 1024);
  pool.Free(a);
  pool.EmptyCache();
  EXPECT_EQ(pool.Stats().reserved, 0);
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * 4096;
}

TEST(MemoryPool, UntouchedBlockMemoryCostsNothing) {
  MemoryPool pool(MakeHostBlockSource(), Limits(int64_t{8} << 30, int64_t{2} << 30));
  int64_t before = ResidentBytes();
  size_t granted = 0;
  void* p = pool.Allocate(4096, &granted);
  std::memset(p, 1, 4096);
  EXPECT_EQ(pool.Stats().reserved, int64_t{2} << 30);
  EXPECT_LT(ResidentBytes() - before, 64 * kMiB);
  pool.Free(p);
}

TEST(MemoryPool, ThreadsAllocateAndFreeConcurrently) {
  MemoryPool pool(MakeHostBlockSource(), Limits(256 * kMiB, 16 * kMiB));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      std::vector<void*> live;
      for (int i = 0; i < 2000; ++i) {
        size_t granted = 0;
        live.push_back(pool.Allocate(static_cast<size_t>(512 * (1 + (i * 7 + t) % 50)), &granted));
        if (live.size() > 16) {
          pool.Free(live.front());
          live.erase(live.begin());
        }
      }
      for (void* p : live) pool.Free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(pool.Stats().allocated, 0);
  EXPECT_EQ(pool.Stats().live_pieces, 0);
}

// Note [Small piece cache]
TEST(MemoryPool, AFreedSmallPieceServesTheNextRequestOfItsSize) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 8 * kMiB));
  void* keep = Take(pool, 512);
  void* a = Take(pool, 3000);  // 3072 bytes
  void* b = Take(pool, 512);
  pool.Free(a);
  EXPECT_EQ(pool.Stats().allocated, 1024);  // a cached piece is not allocated
  EXPECT_EQ(pool.Stats().live_pieces, 2);
  void* other = Take(pool, 1024);  // another size: not the cached piece
  EXPECT_NE(other, a);
  void* again = Take(pool, 2600);  // rounds to 3072 as well
  EXPECT_EQ(again, a);
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.allocated, 512 + 3072 + 512 + 1024);
  EXPECT_EQ(s.allocations, 5);
  EXPECT_EQ(s.reused_allocations, 1);
  for (void* p : {keep, b, other, again}) pool.Free(p);
  EXPECT_EQ(pool.Stats().allocated, 0);
  EXPECT_EQ(pool.Stats().live_pieces, 0);
}

TEST(MemoryPool, CachedSmallPiecesMergeBeforeThePoolGrowsUnderTheCap) {
  // The cap allows one block. Fill it with small pieces, free them all
  // (cached, not merged), then ask for the whole block: the cached pieces
  // must merge back rather than the pool refusing or growing past the cap.
  constexpr int64_t kBlock = 2 * kMiB;
  MemoryPool pool(MakeHostBlockSource(), Limits(kBlock, kBlock));
  std::vector<void*> small;
  for (int64_t used = 0; used < kBlock; used += 4096) small.push_back(Take(pool, 4096));
  EXPECT_THROW(Take(pool, 512), MemoryError);  // full: the cap refuses a second block
  for (void* p : small) pool.Free(p);
  void* whole = Take(pool, kBlock);
  EXPECT_EQ(whole, small.front());
  PoolStats s = pool.Stats();
  EXPECT_EQ(s.reserved, kBlock);
  EXPECT_EQ(s.blocks, 1);
  EXPECT_EQ(s.failed_allocations, 1);
  pool.Free(whole);
}

TEST(MemoryPool, CachedSmallPiecesDoNotKeepBlocksFromBeingReleased) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 8 * kMiB));
  pool.Free(Take(pool, 512));
  pool.Free(Take(pool, 8192));
  EXPECT_EQ(pool.Stats().blocks, 1);
  pool.EmptyCache();
  EXPECT_EQ(pool.Stats().blocks, 0);
  EXPECT_EQ(pool.Stats().reserved, 0);
  pool.Free(Take(pool, 512));  // usable afterwards
  // A large request that needs the room of an empty block releases it, cached pieces and all.
  MemoryPool capped(MakeHostBlockSource(), Limits(8 * kMiB, 4 * kMiB));
  capped.Free(Take(capped, 512));
  capped.Free(Take(capped, 4 * kMiB));  // a second block
  void* big = Take(capped, 7 * kMiB);
  EXPECT_EQ(capped.Stats().blocks, 1);
  capped.Free(big);
}

TEST(MemoryPool, TurningReuseOffRetiresCachedSmallPieces) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 8 * kMiB));
  void* keep = Take(pool, 512);
  void* a = Take(pool, 1024);
  pool.Free(a);
  pool.SetLimits(Limits(64 * kMiB, 8 * kMiB, /*reuse=*/false));
  void* b = Take(pool, 1024);
  EXPECT_NE(b, a);  // a was handed out before: never again
  pool.Free(b);
  void* c = Take(pool, 1024);
  EXPECT_NE(c, b);
  EXPECT_NE(c, a);
  pool.Free(c);
  pool.Free(keep);
  EXPECT_EQ(pool.Stats().blocks, 0);
}

TEST(MemoryPool, SmallPiecesFreedOnAnotherThreadServeThisOne) {
  MemoryPool pool(MakeHostBlockSource(), Limits(64 * kMiB, 8 * kMiB));
  std::vector<void*> pieces;
  for (int i = 0; i < 8; ++i) pieces.push_back(Take(pool, 2048));
  std::thread([&pool, &pieces] {
    for (void* p : pieces) pool.Free(p);
  }).join();
  EXPECT_EQ(pool.Stats().allocated, 0);
  for (int i = 0; i < 8; ++i) {
    void* p = Take(pool, 2048);
    EXPECT_NE(std::find(pieces.begin(), pieces.end(), p), pieces.end());
    pool.Free(p);
  }
  EXPECT_EQ(pool.Stats().reused_allocations, 8);
}

TEST(MemoryPool, TheSmallPieceCacheHoldsABoundedNumberOfBytes) {
  MemoryPool pool(MakeHostBlockSource(), Limits(256 * kMiB, 64 * kMiB));
  constexpr size_t kSize = MemoryPool::kSmallMax;
  const size_t count = MemoryPool::kSmallCacheBytes / kSize + 8;
  std::vector<void*> pieces;
  for (size_t i = 0; i < count; ++i) pieces.push_back(Take(pool, kSize));
  void* tail = Take(pool, 512);  // after the pieces: their merge stops here
  for (void* p : pieces) pool.Free(p);
  // Beyond the bound the pieces went to the free tree and merged: the last
  // eight, adjacent, serve one request of their joint size without growth.
  void* joint = Take(pool, 8 * kSize);
  EXPECT_EQ(joint, pieces[count - 8]);
  EXPECT_EQ(pool.Stats().blocks, 1);
  pool.Free(joint);
  pool.Free(tail);
}

// ---------------------------------------------------------------------------
// The process's CPU pool and the context.

TEST(CpuPool, TheFirstTensorFreezesTheMemoryKeys) {
  using context::Family;
  Tensor t = Tensor::Empty({1024}, DType::kFloat32);
  for (const char* key : {"max_device_memory", "mempool_block_size", "variable_memory_max_size"}) {
    EXPECT_TRUE(context::Global().IsInEffect(Family::kRuntime, key)) << key;
  }
  Value cap = GetContext("max_device_memory");
  try {
    SetContext(Dict{{"max_device_memory", Value("3GB")}});
    ADD_FAILURE() << "a frozen key changed";
  } catch (const RuntimeError& e) {
    EXPECT_TRUE(Contains(e.what(), "memory pool started")) << e.what();
  }
  EXPECT_EQ(GetContext("max_device_memory"), cap);
  EXPECT_GE(Stats(DeviceTarget::kCPU).allocated, 4096);
  testing::ThawPools();  // for the tests after this one
  EXPECT_FALSE(context::Global().IsInEffect(Family::kRuntime, "max_device_memory"));
}

}  // namespace
}  // namespace msrt::memory
