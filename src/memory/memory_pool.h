// A device memory pool: address space reserved in blocks, handed out in
// best-fit pieces, freed pieces kept for the next request.
//
// Note [Memory pool]
// The pool grows by blocks of `block_size` bytes (mempool_block_size) that a
// BlockSource reserves on the device; on CPU a block is an anonymous mapping
// whose pages cost nothing until they are touched, so a 1 GB block holding a
// few small tensors uses a few pages. A request larger than a block gets a
// block of its own. Everything the pool holds (its blocks) stays within
// `cap` (max_device_memory, at most what the device has): a request that
// would take the pool past it first releases the blocks nothing lives in,
// then shrinks the new block to what is left, then raises MemoryError naming
// the cap, the request and the usage. The pool stays usable after that.
//
// Freed pieces merge with free neighbours and serve later requests (best
// fit, then lowest address). With reuse off (env_config_path:
// sys.mem_Reuse=false) a freed piece is never handed out again: its pages go
// back to the system and its block is released once nothing in it lives, so
// each tensor gets memory no earlier tensor used.
//
// Note [Small piece cache]
// Most tensors of an eager program are small, and the same few sizes come
// and go on every step. A freed piece of at most kSmallMax bytes is kept
// whole on a free list of its size (a multiple of kUnit) instead of being
// merged into the free tree, and the next request of that size takes it
// back in constant time, without touching the trees. The lists are the
// pool's, under its lock, so a piece freed on one thread (the eager
// dispatcher, an executor's worker) serves a request on any other. They
// hold at most kSmallCacheBytes in all. Cached pieces count as free in the
// statistics and never change what the pool reserves: before the pool
// would grow (or release blocks, or stop reuse) it first returns every
// cached piece to the free tree, merged with its neighbours, so a request
// is refused under the cap only when it would have been without the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace msrt::memory {

/// Where a pool's blocks come from (one per device kind).
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  /// `bytes` of fresh address space aligned to at least 4 KiB, or nullptr
  /// when the device has no room.
  virtual void* Reserve(size_t bytes) = 0;
  virtual void Release(void* base, size_t bytes) = 0;
  /// The contents of [p, p + bytes) are no longer needed; the device may
  /// take the pages back (they read as zeros or garbage afterwards).
  virtual void Discard(void* p, size_t bytes) = 0;
  /// Bytes the device has in all.
  virtual int64_t Capacity() const = 0;
  /// "CPU", "GPU", ... for messages.
  virtual std::string DeviceName() const = 0;
};

/// Host memory: anonymous private mappings, reserved without commitment.
std::unique_ptr<BlockSource> MakeHostBlockSource();

struct PoolLimits {
  int64_t cap = int64_t{1} << 40;         // most bytes the pool may hold
  int64_t block_size = int64_t{1} << 30;  // growth unit
  bool reuse = true;                      // hand freed pieces out again
  /// Where the cap comes from, for messages: "max_device_memory=\"2GB\"".
  std::string cap_origin = "max_device_memory";
};

struct PoolStats {
  int64_t allocated = 0;       // bytes in live pieces
  int64_t peak_allocated = 0;  // since the last ResetPeak
  int64_t reserved = 0;        // bytes of the blocks held
  int64_t peak_reserved = 0;   // since the last ResetPeak
  int64_t cap = 0;             // effective cap: min(limit, device capacity)
  int64_t block_size = 0;
  bool reuse = true;
  int64_t blocks = 0;
  int64_t live_pieces = 0;
  int64_t allocations = 0;         // requests served since the pool started
  int64_t reused_allocations = 0;  // of them, served from memory used before
  int64_t failed_allocations = 0;  // requests refused with MemoryError
};

class MemoryPool {
 public:
  /// Granularity of pieces: every piece starts and ends on a multiple.
  static constexpr size_t kUnit = 512;
  /// Largest piece kept on a size's free list (Note [Small piece cache]).
  static constexpr size_t kSmallMax = size_t{32} << 10;
  /// Most bytes the free lists hold in all.
  static constexpr size_t kSmallCacheBytes = size_t{4} << 20;

  explicit MemoryPool(std::unique_ptr<BlockSource> source, PoolLimits limits = {});
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  /// A piece of at least `nbytes` (`*granted` receives its size); raises
  /// MemoryError when the cap or the device refuses.
  void* Allocate(size_t nbytes, size_t* granted);
  /// Allocate, but a refusal returns nullptr with the reason in `*why`
  /// (and is not counted as a failed allocation).
  void* TryAllocate(size_t nbytes, size_t* granted, std::string* why);
  /// Returns a piece from Allocate. Never throws.
  void Free(void* address) noexcept;
  /// Held across fork() so the child never inherits it locked (runtime/fork.cc).
  void LockForFork() const { mutex_.lock(); }
  void UnlockAfterFork() const { mutex_.unlock(); }

  /// New limits apply to later growth; blocks already held stay.
  void SetLimits(PoolLimits limits);
  PoolStats Stats() const;
  void ResetPeak();
  /// Releases every block nothing lives in and returns the pages of large
  /// free pieces to the device.
  void EmptyCache();
  const BlockSource& source() const { return *source_; }

 private:
  struct Block {
    char* base;
    size_t size;
    size_t live_bytes = 0;
    size_t high_water = 0;  // bytes from base ever handed out
  };
  enum class PieceState : uint8_t { kFree, kLive, kRetired, kCached };
  struct Piece {
    size_t size;
    Block* block;
    PieceState state;
  };

  int64_t EffectiveCap() const;
  std::string Grow(size_t size);  // adds a block that can hold `size`, or says why not
  void ReleaseBlock(Block* block);
  void RetireUsedFreeMemory();  // reuse turned off: used memory is not handed out again
  size_t ReleaseEmptyBlocks();
  void InsertFree(char* p, size_t size, Block* block);
  void* Hand(char* p, Piece& piece, size_t size, size_t* granted);  // marks a free piece live
  void FlushSmallCache();                                           // every cached piece back to the free tree, merged
  void MergeFree(std::map<char*, Piece>::iterator it);              // a piece becomes free: merged, in free_
  [[noreturn]] void Refuse(size_t nbytes, std::string_view why);    // with mutex_ held

  std::unique_ptr<BlockSource> source_;
  mutable std::mutex mutex_;
  PoolLimits limits_;
  int64_t capacity_;
  std::map<char*, Piece> pieces_;            // every piece of every block, by address
  std::set<std::pair<size_t, char*>> free_;  // reusable pieces by (size, address)
  std::map<char*, std::unique_ptr<Block>> blocks_;
  // Note [Small piece cache]: cached_[size / kUnit - 1] lists the cached
  // pieces of that size (pointers into pieces_, whose nodes do not move).
  std::vector<std::vector<std::pair<char*, Piece*>>> cached_;
  size_t cached_bytes_ = 0;
  PoolStats stats_;
};

}  // namespace msrt::memory
