// Storage: pool memory and foreign memory (Note [Foreign and host-shared
// memory] in src/core/tensor.cc).
#include "msrt/tensor/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/views.h"
#include "memory/allocator.h"
#include "msrt/core/errors.h"
#include "ops/call.h"
#include "runtime/eager.h"

namespace msrt {
namespace {

// Foreign memory with a release callback that records how often and where it ran.
struct Owner {
  std::vector<float> data;
  std::atomic<int> releases{0};
  std::atomic<std::thread::id> released_on{};
  std::shared_ptr<Storage> Share() {
    return Storage::Foreign(data.data(), data.size() * sizeof(float), DeviceTarget::kCPU, [this] {
      releases.fetch_add(1);
      released_on.store(std::this_thread::get_id());
    });
  }
};

TEST(Storage, ForeignMemoryIsReleasedOnceWhenTheLastTensorGoes) {
  Owner owner{.data = {1, 2, 3, 4, 5, 6}};
  {
    Tensor t = Tensor::FromStorage(owner.Share(), {2, 3}, DType::kFloat32);
    EXPECT_TRUE(t.impl()->storage->foreign());
    EXPECT_EQ(t.raw(), owner.data.data());
    Tensor view = t.Reshaped({6});  // shares the storage
    t = Tensor();
    EXPECT_EQ(owner.releases.load(), 0);
    EXPECT_EQ(view.data<float>()[5], 6.0f);
  }
  EXPECT_EQ(owner.releases.load(), 1);
}

TEST(Storage, ForeignMemoryIsNeverThePools) {
  runtime::Synchronize();  // no earlier op frees pool memory meanwhile
  const memory::PoolStats before = memory::Stats(DeviceTarget::kCPU);
  Owner owner{.data = std::vector<float>(1 << 16, 1.0f)};
  {
    Tensor t = Tensor::FromStorage(owner.Share(), {1 << 16}, DType::kFloat32);
    const memory::PoolStats during = memory::Stats(DeviceTarget::kCPU);
    EXPECT_EQ(during.allocations, before.allocations);
    EXPECT_EQ(during.allocated, before.allocated);
  }
  const memory::PoolStats after = memory::Stats(DeviceTarget::kCPU);
  EXPECT_EQ(after.allocated, before.allocated);  // nothing was returned to the pool
  EXPECT_EQ(after.live_pieces, before.live_pieces);
  EXPECT_EQ(owner.releases.load(), 1);
}

TEST(Storage, ForeignMemoryMayBeReleasedOnAnotherThread) {
  Owner owner{.data = {1, 2}};
  Tensor t = Tensor::FromStorage(owner.Share(), {2}, DType::kFloat32);
  std::thread::id worker_id;
  std::thread worker([held = std::move(t), &worker_id]() mutable {
    worker_id = std::this_thread::get_id();
    held = Tensor();
  });
  worker.join();
  EXPECT_EQ(owner.releases.load(), 1);
  EXPECT_EQ(owner.released_on.load(), worker_id);
  EXPECT_NE(worker_id, std::this_thread::get_id());
}

TEST(Storage, FromStorageRefusesATensorLargerThanTheMemory) {
  Owner owner{.data = {1, 2, 3}};
  auto storage = owner.Share();
  EXPECT_THROW(Tensor::FromStorage(storage, {4}, DType::kFloat32), ValueError);
  EXPECT_THROW(Tensor::FromStorage(storage, {1}, DType::kFloat32, 12), ValueError);
  Tensor last = Tensor::FromStorage(storage, {1}, DType::kFloat32, 8);
  EXPECT_EQ(last.data<float>()[0], 3.0f);
  storage.reset();
  last = Tensor();
  EXPECT_EQ(owner.releases.load(), 1);
}

TEST(Storage, HostViewsMarkPoolMemoryShared) {
  Tensor t = Tensor::Zeros({4}, DType::kFloat32);
  Storage& s = *t.impl()->storage;
  EXPECT_FALSE(s.foreign());
  EXPECT_FALSE(s.shared_with_host());
  s.AddHostView();
  s.AddHostView();
  EXPECT_TRUE(s.shared_with_host());
  s.RemoveHostView();
  EXPECT_TRUE(s.shared_with_host());
  s.RemoveHostView();
  EXPECT_FALSE(s.shared_with_host());
}

// Eager ops on foreign memory run at the call: a write to the memory right
// after the call cannot reach an op still queued.
TEST(Storage, EagerOpsOnForeignMemoryRunAtTheCall) {
  Owner owner{.data = {1, 2, 3, 4}};
  Tensor x = Tensor::FromStorage(owner.Share(), {4}, DType::kFloat32);
  Tensor y = ops::Call1("mul", {x, x});
  EXPECT_EQ(y.pending(), nullptr);  // already computed
  owner.data[0] = 100;
  EXPECT_EQ(y.data<float>()[0], 1.0f);
  EXPECT_FALSE(y.impl()->storage->foreign());  // a new tensor in the pool's memory
  // An in-place op writes the foreign memory itself.
  ops::Call("assign", {x, y});
  EXPECT_EQ(owner.data[3], 16.0f);
  runtime::Synchronize();
  x = Tensor();
  y = Tensor();
  EXPECT_EQ(owner.releases.load(), 1);
}

}  // namespace
}  // namespace msrt

namespace msrt {
namespace {

Tensor Iota(const Shape& shape) {
  Tensor t = Tensor::Empty(shape, DType::kFloat32);
  auto* p = t.raw<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i);
  return t;
}

TEST(Storage, StampsAreUniqueAcrossThreadsAndWrites) {
  // Note [Storage stamps]: taken from per-thread runs, never the same twice.
  constexpr int kThreads = 4;
  constexpr int kEach = 5000;  // several runs per thread
  std::vector<std::vector<uint64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&seen, t] {
      for (int i = 0; i < kEach; ++i) {
        Tensor x = Tensor::Empty({1}, DType::kFloat32);
        seen[t].push_back(x.impl()->storage->stamp());
        x.impl()->storage->MarkWritten();
        seen[t].push_back(x.impl()->storage->stamp());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<uint64_t> all;
  for (const auto& s : seen) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), size_t{2 * kThreads * kEach});
}

TEST(Views, AViewSharesStorageWhileBothLive) {
  Tensor t = Iota({2, 3});
  EXPECT_FALSE(SharesStorage(t));
  {
    Tensor view = t.Reshaped({6});
    EXPECT_EQ(view.raw(), t.raw());
    EXPECT_TRUE(SharesStorage(t));
    EXPECT_TRUE(SharesStorage(view));
  }
  EXPECT_FALSE(SharesStorage(t));
  Tensor orphan = Iota({2, 3}).Reshaped({3, 2});  // its source is gone
  EXPECT_FALSE(SharesStorage(orphan));
  const void* before = orphan.raw();
  DetachFromViews(orphan);
  EXPECT_EQ(orphan.raw(), before);  // nothing to copy
}

TEST(Views, DetachingGivesTheWrittenTensorItsOwnCopy) {
  Tensor t = Iota({2, 3});
  Tensor view = t.Reshaped({6});
  DetachFromViews(t);
  EXPECT_NE(t.raw(), view.raw());
  EXPECT_FALSE(SharesStorage(t));
  EXPECT_FALSE(SharesStorage(view));
  t.raw<float>()[0] = 100.0F;  // a write to t is not seen through the view
  EXPECT_EQ(view.raw<float>()[0], 0.0F);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.raw<float>()[i], i == 0 ? 100.0F : static_cast<float>(i));
}

TEST(Views, HostSharedMemoryIsNeverDetached) {
  Owner owner{.data = {1, 2, 3, 4}};
  Tensor t = Tensor::FromStorage(owner.Share(), {4}, DType::kFloat32);
  Tensor other = t.Reshaped({2, 2});  // e.g. another handle made inside the runtime
  EXPECT_FALSE(SharesStorage(t));
  DetachFromViews(t);
  EXPECT_EQ(t.raw(), owner.data.data());
}

TEST(Views, EagerReshapeIsAViewAndInPlaceOpsKeepValues) {
  Tensor t = Iota({2, 3});
  Tensor view = ops::Call1("reshape", {t}, Dict{{"shape", Value(List{Value(3), Value(2)})}});
  EXPECT_EQ(view.raw(), t.raw());
  EXPECT_EQ(view.shape(), (Shape{3, 2}));
  ops::Call("assign", {t, Tensor::Zeros({2, 3}, DType::kFloat32)});
  runtime::Synchronize();
  EXPECT_NE(view.raw(), t.raw());
  EXPECT_EQ(view.data<float>()[5], 5.0F);
  EXPECT_EQ(t.data<float>()[5], 0.0F);
}

TEST(Views, FirstAxisViewsStartAtTheirFirstRowAndDetachLikeTheOthers) {
  Tensor t = Iota({4, 3});
  Tensor row = FirstAxisView(t, 2, 3, /*drop_axis=*/true);
  EXPECT_EQ(row.shape(), (Shape{3}));
  EXPECT_EQ(row.raw<float>(), t.raw<float>() + 6);
  Tensor rows = FirstAxisView(t, 1, 3, /*drop_axis=*/false);
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_EQ(rows.raw<float>(), t.raw<float>() + 3);
  EXPECT_EQ(FirstAxisView(t, 4, 4, /*drop_axis=*/false).shape(), (Shape{0, 3}));
  Tensor inner = FirstAxisView(rows, 1, 2, /*drop_axis=*/true);  // a view of a view: offsets add up
  EXPECT_EQ(inner.raw<float>(), t.raw<float>() + 6);
  EXPECT_TRUE(SharesStorage(t));
  DetachFromViews(rows);  // its own copy of its six values
  EXPECT_NE(rows.raw<float>(), t.raw<float>() + 3);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(rows.raw<float>()[i], static_cast<float>(i + 3));
  rows.raw<float>()[0] = -1.0F;
  EXPECT_EQ(t.raw<float>()[3], 3.0F);
  EXPECT_EQ(row.raw<float>()[0], 6.0F);
}

TEST(Views, HostShortcutsOnlyWhileNothingWouldSeeTheOps) {
  runtime::Synchronize();
  EXPECT_TRUE(runtime::HostShortcutAllowed(false));
  EXPECT_TRUE(runtime::HostShortcutAllowed(true));
  struct Watcher final : ops::CallObserver {
    void OnCall(const ops::OpDef&, const Dict&) override {}
  } watcher;
  ops::AddCallObserver(&watcher);
  EXPECT_FALSE(ops::CallsUnobserved());
  EXPECT_FALSE(runtime::HostShortcutAllowed(false));
  ops::RemoveCallObserver(&watcher);
  EXPECT_TRUE(runtime::HostShortcutAllowed(false));
  ops::AddRecordingCallObserver(&watcher);  // acts only on recorded calls: shortcuts stay
  EXPECT_TRUE(ops::CallsUnobserved());
  ops::RemoveCallObserver(&watcher);
}

}  // namespace
}  // namespace msrt
