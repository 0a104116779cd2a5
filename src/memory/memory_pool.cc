#include "memory/memory_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <vector>

#include "msrt/core/errors.h"
#include "msrt/core/logging.h"

namespace msrt::memory {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kLargeGranule = size_t{2} << 20;  // blocks of their own are rounded to 2 MiB
constexpr size_t kDiscardMin = size_t{64} << 10;   // smaller free pieces keep their pages

size_t RoundUp(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }
size_t RoundDown(size_t n, size_t unit) { return n / unit * unit; }

std::string Bytes(int64_t n) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f GiB (%lld bytes)", static_cast<double>(n) / double(int64_t{1} << 30),
                static_cast<long long>(n));
  return text;
}

class HostBlockSource final : public BlockSource {
 public:
  void* Reserve(size_t bytes) override {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  void Release(void* base, size_t bytes) override { munmap(base, bytes); }
  void Discard(void* p, size_t bytes) override {
    // Only whole pages inside the piece: its neighbours may be live.
    auto begin = RoundUp(reinterpret_cast<uintptr_t>(p), kPage);
    auto end = RoundDown(reinterpret_cast<uintptr_t>(p) + bytes, kPage);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  int64_t Capacity() const override {
    static const int64_t capacity = [] {
      int64_t physical = int64_t{sysconf(_SC_PHYS_PAGES)} * int64_t{sysconf(_SC_PAGESIZE)};
      // A container's memory limit (cgroup v2) is what this process really has.
      std::ifstream limit("/sys/fs/cgroup/memory.max");
      long long bytes = 0;
      if (limit >> bytes && bytes > 0 && bytes < physical) physical = bytes;
      return physical;
    }();
    return capacity;
  }
  std::string DeviceName() const override { return "CPU"; }
};

}  // namespace

std::unique_ptr<BlockSource> MakeHostBlockSource() { return std::make_unique<HostBlockSource>(); }

MemoryPool::MemoryPool(std::unique_ptr<BlockSource> source, PoolLimits limits)
    : source_(std::move(source)),
      limits_(std::move(limits)),
      capacity_(source_->Capacity()),
      cached_(kSmallMax / kUnit) {}

MemoryPool::~MemoryPool() {
  for (auto& [base, block] : blocks_) source_->Release(block->base, block->size);
}

int64_t MemoryPool::EffectiveCap() const { return std::min(limits_.cap, capacity_); }

void MemoryPool::SetLimits(PoolLimits limits) {
  std::lock_guard lock(mutex_);
  const bool stop_reuse = limits_.reuse && !limits.reuse;
  limits_ = std::move(limits);
  if (stop_reuse) RetireUsedFreeMemory();
}

void MemoryPool::FlushSmallCache() {
  if (cached_bytes_ == 0) return;
  for (auto& list : cached_) {
    for (const auto& [p, piece] : list) {
      auto it = pieces_.find(p);
      MSRT_INTERNAL_ASSERT(it != pieces_.end() && &it->second == piece && piece->state == PieceState::kCached,
                           "memory pool: a cached piece is not where the cache says");
      MergeFree(it);
    }
    list.clear();
  }
  cached_bytes_ = 0;
}

void MemoryPool::RetireUsedFreeMemory() {
  FlushSmallCache();
  std::vector<std::pair<size_t, char*>> used;
  for (const auto& [size, p] : free_) {
    const Block* block = pieces_.at(p).block;
    if (p < block->base + block->high_water) used.emplace_back(size, p);
  }
  for (const auto& [size, p] : used) {
    Piece& piece = pieces_.at(p);
    Block* block = piece.block;
    free_.erase({size, p});
    piece.state = PieceState::kRetired;
    char* fresh = block->base + block->high_water;
    if (p + size > fresh) {  // the part never handed out stays free
      piece.size = static_cast<size_t>(fresh - p);
      InsertFree(fresh, static_cast<size_t>(p + size - fresh), block);
    }
  }
  ReleaseEmptyBlocks();
}

void MemoryPool::InsertFree(char* p, size_t size, Block* block) {
  pieces_[p] = Piece{size, block, PieceState::kFree};
  free_.emplace(size, p);
}

void* MemoryPool::Allocate(size_t nbytes, size_t* granted) {
  std::string why;
  void* p = TryAllocate(nbytes, granted, &why);
  if (p == nullptr) {
    std::lock_guard lock(mutex_);
    Refuse(nbytes, why);
  }
  return p;
}

void* MemoryPool::TryAllocate(size_t nbytes, size_t* granted, std::string* why) {
  const size_t size = RoundUp(std::max<size_t>(nbytes, 1), kUnit);
  if (size < nbytes) {
    *why = "the request is larger than any address space";
    return nullptr;
  }
  std::lock_guard lock(mutex_);
  if (size <= kSmallMax) {  // Note [Small piece cache]
    auto& list = cached_[size / kUnit - 1];
    if (!list.empty()) {
      auto [p, piece] = list.back();
      list.pop_back();
      cached_bytes_ -= size;
      return Hand(p, *piece, size, granted);
    }
  }
  auto it = free_.lower_bound({size, nullptr});
  if (it == free_.end() && cached_bytes_ > 0) {
    FlushSmallCache();  // merged, the cached pieces may serve it without growing
    it = free_.lower_bound({size, nullptr});
  }
  if (it == free_.end()) {
    *why = Grow(size);
    if (!why->empty()) return nullptr;
    it = free_.lower_bound({size, nullptr});
  }
  char* p = it->second;
  free_.erase(it);
  Piece& piece = pieces_.find(p)->second;
  if (piece.size > size) {
    InsertFree(p + size, piece.size - size, piece.block);
    piece.size = size;
  }
  return Hand(p, piece, size, granted);
}

void* MemoryPool::Hand(char* p, Piece& piece, size_t size, size_t* granted) {
  Block* block = piece.block;
  piece.state = PieceState::kLive;
  block->live_bytes += size;
  const auto offset = static_cast<size_t>(p - block->base);
  if (offset < block->high_water) ++stats_.reused_allocations;
  block->high_water = std::max(block->high_water, offset + size);
  ++stats_.allocations;
  ++stats_.live_pieces;
  stats_.allocated += static_cast<int64_t>(size);
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  *granted = size;
  return p;
}

void MemoryPool::Free(void* address) noexcept {
  auto* p = static_cast<char*>(address);
  std::lock_guard lock(mutex_);
  auto it = pieces_.find(p);
  if (it == pieces_.end() || it->second.state != PieceState::kLive) {
    MSRT_LOG(Error) << "memory pool: free of an address it did not hand out (" << address << ")";
    return;
  }
  Piece& piece = it->second;
  Block* block = piece.block;
  block->live_bytes -= piece.size;
  --stats_.live_pieces;
  stats_.allocated -= static_cast<int64_t>(piece.size);
  if (!limits_.reuse) {
    piece.state = PieceState::kRetired;
    if (block->live_bytes == 0) {
      ReleaseBlock(block);
    } else if (piece.size >= kDiscardMin) {
      source_->Discard(p, piece.size);
    }
    return;
  }
  if (piece.size <= kSmallMax && cached_bytes_ + piece.size <= kSmallCacheBytes) {  // Note [Small piece cache]
    piece.state = PieceState::kCached;
    cached_[piece.size / kUnit - 1].emplace_back(p, &piece);
    cached_bytes_ += piece.size;
    return;
  }
  MergeFree(it);
}

void MemoryPool::MergeFree(std::map<char*, Piece>::iterator it) {
  Piece& piece = it->second;
  Block* block = piece.block;
  // Merge with free neighbours of the same block.
  size_t size = piece.size;
  auto next = std::next(it);
  if (next != pieces_.end() && next->second.block == block && next->second.state == PieceState::kFree) {
    free_.erase({next->second.size, next->first});
    size += next->second.size;
    pieces_.erase(next);
  }
  if (it != pieces_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.block == block && prev->second.state == PieceState::kFree) {
      free_.erase({prev->second.size, prev->first});
      prev->second.size += size;
      free_.emplace(prev->second.size, prev->first);
      pieces_.erase(it);
      return;
    }
  }
  piece.size = size;
  piece.state = PieceState::kFree;
  free_.emplace(size, it->first);
}

std::string MemoryPool::Grow(size_t size) {
  const int64_t cap = EffectiveCap();
  const auto block_size = RoundDown(static_cast<size_t>(std::max<int64_t>(limits_.block_size, kPage)), kPage);
  size_t bytes = size > block_size ? RoundUp(size, kLargeGranule) : block_size;
  auto fits = [&] { return stats_.reserved + static_cast<int64_t>(bytes) <= cap; };
  if (!fits()) ReleaseEmptyBlocks();
  if (!fits()) {
    // The growth unit is what is left under the cap when less than a block is.
    int64_t left = cap - stats_.reserved;
    size_t shrunk = left > 0 ? RoundDown(static_cast<size_t>(left), kPage) : 0;
    if (shrunk < size) {
      return StrCat("the memory pool may hold at most ", Bytes(cap), " (", limits_.cap_origin,
                    cap < limits_.cap ? ", lowered to what the device has" : "", ")");
    }
    bytes = shrunk;
  }
  void* base = source_->Reserve(bytes);
  if (base == nullptr && ReleaseEmptyBlocks() > 0) base = source_->Reserve(bytes);
  if (base == nullptr) {
    return StrCat("the device refused a further block of ", Bytes(static_cast<int64_t>(bytes)), " (the cap, ",
                  limits_.cap_origin, ", allows ", Bytes(cap), ")");
  }
  auto block = std::make_unique<Block>(Block{static_cast<char*>(base), bytes});
  InsertFree(block->base, bytes, block.get());
  blocks_.emplace(block->base, std::move(block));
  stats_.reserved += static_cast<int64_t>(bytes);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  return {};
}

void MemoryPool::ReleaseBlock(Block* block) {
  auto first = pieces_.lower_bound(block->base);
  auto last = pieces_.lower_bound(block->base + block->size);
  for (auto it = first; it != last; ++it) {
    if (it->second.state == PieceState::kFree) free_.erase({it->second.size, it->first});
  }
  pieces_.erase(first, last);
  source_->Release(block->base, block->size);
  stats_.reserved -= static_cast<int64_t>(block->size);
  blocks_.erase(block->base);
}

size_t MemoryPool::ReleaseEmptyBlocks() {
  FlushSmallCache();  // a cached piece must not outlive its block
  std::vector<Block*> empty;
  for (auto& [base, block] : blocks_) {
    if (block->live_bytes == 0) empty.push_back(block.get());
  }
  for (Block* block : empty) ReleaseBlock(block);
  return empty.size();
}

void MemoryPool::EmptyCache() {
  std::lock_guard lock(mutex_);
  ReleaseEmptyBlocks();
  for (const auto& [size, p] : free_) {
    if (size >= kDiscardMin) source_->Discard(p, size);
  }
}

void MemoryPool::Refuse(size_t nbytes, std::string_view why) {
  ++stats_.failed_allocations;
  throw MemoryError(StrCat("Out of memory on ", source_->DeviceName(), ": cannot allocate ",
                           Bytes(static_cast<int64_t>(nbytes)), ": ", why, "; ", Bytes(stats_.allocated),
                           " are allocated to tensors and ", Bytes(stats_.reserved),
                           " reserved by the pool. Use smaller inputs (e.g. a smaller batch), or raise "
                           "max_device_memory with set_context(max_device_memory=\"xxGB\") before the "
                           "first tensor is created."));
}

PoolStats MemoryPool::Stats() const {
  std::lock_guard lock(mutex_);
  PoolStats s = stats_;
  s.cap = EffectiveCap();
  s.block_size = limits_.block_size;
  s.reuse = limits_.reuse;
  s.blocks = static_cast<int64_t>(blocks_.size());
  return s;
}

void MemoryPool::ResetPeak() {
  std::lock_guard lock(mutex_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

}  // namespace msrt::memory
