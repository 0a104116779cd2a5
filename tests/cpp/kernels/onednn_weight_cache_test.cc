// Cached weight reorders (Note [Cached weight reorders]) and the storage
// stamps they rely on (Note [Storage stamps]): repeated inference calls
// reorder a weight once, and any write to the weight is seen.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/onednn_common.h"
#include "ops/call.h"

namespace msrt {
namespace {

namespace onednn = kernels::onednn;

Tensor Ramp(const Shape& shape, float scale) {
  std::vector<float> data(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
  return Tensor::FromHost(data.data(), data.size() * sizeof(float), shape, DType::kFloat32);
}

std::vector<float> Read(const Tensor& t) {
  const auto* p = t.data<float>();
  return {p, p + t.numel()};
}

// A channels-last 3x3 convolution of 64 channels: oneDNN's AVX2 and AVX-512
// implementations take its weights blocked, so they go through a reorder.
const Dict kNhwc{{"data_format", Value("NHWC")}};
Tensor Conv(const Tensor& x, const Tensor& w) { return ops::Call1("conv2d", {x, w}, kNhwc); }

Tensor Input() { return Ramp({1, 6, 6, 64}, 0.01f); }
Tensor Weight() { return Ramp({64, 64, 3, 3}, 0.02f); }

// Skips a test when this CPU's primitive takes the plain weights (nothing to cache).
#define SKIP_WITHOUT_A_WEIGHT_REORDER(copies) \
  if ((copies) == 0) GTEST_SKIP() << "oneDNN takes this convolution's weights as they are here"

TEST(OneDnnWeightCache, RepeatedCallsReorderAWeightOnce) {
  Tensor x = Input(), w = Weight();
  onednn::WeightCacheStats before = onednn::GetWeightCacheStats();
  std::vector<float> first = Read(Conv(x, w));
  for (int call = 0; call < 4; ++call) EXPECT_EQ(Read(Conv(x, w)), first) << call;
  onednn::WeightCacheStats after = onednn::GetWeightCacheStats();
  SKIP_WITHOUT_A_WEIGHT_REORDER(after.copies - before.copies);
  // The first call reorders; the second reorders into the copy it keeps; the other three use it.
  EXPECT_EQ(after.copies - before.copies, 1);
  EXPECT_EQ(after.hits - before.hits, 3);
  // A fresh weight of the same values gives the same result through its own reorder.
  EXPECT_EQ(Read(Conv(x, Weight())), first);
}

TEST(OneDnnWeightCache, AnInPlaceWriteOfTheWeightIsSeen) {
  Tensor x = Input(), w = Weight();
  onednn::WeightCacheStats before = onednn::GetWeightCacheStats();
  Conv(x, w).Sync();
  std::vector<float> old_result = Read(Conv(x, w));
  Conv(x, w).Sync();
  SKIP_WITHOUT_A_WEIGHT_REORDER(onednn::GetWeightCacheStats().copies - before.copies);
  // assign writes w in place (same tensor, same storage): the kept copy is of the old values.
  Tensor other = Ramp({64, 64, 3, 3}, -0.03f);
  ops::Call("assign", {w, other});
  std::vector<float> got = Read(Conv(x, w));
  EXPECT_EQ(got, Read(Conv(x, Ramp({64, 64, 3, 3}, -0.03f))));
  EXPECT_NE(got, old_result);
  EXPECT_EQ(Read(Conv(x, w)), got);  // and again, from the new copy
}

TEST(OneDnnWeightCache, WeightsThatChangeEveryStepKeepNoCopy) {
  Tensor x = Input(), w = Weight(), step = Ramp({64, 64, 3, 3}, 0.001f);
  onednn::WeightCacheStats before = onednn::GetWeightCacheStats();
  for (int i = 0; i < 4; ++i) {
    Conv(x, w).Sync();
    ops::Call("assign_add", {w, step});  // an optimizer's in-place update
  }
  onednn::WeightCacheStats after = onednn::GetWeightCacheStats();
  EXPECT_EQ(after.copies - before.copies, 0);
  EXPECT_EQ(after.hits - before.hits, 0);
}

TEST(OneDnnWeightCache, MemorySharedWithTheHostIsNeverKept) {
  std::vector<float> host = Read(Weight());
  auto storage = Storage::Foreign(host.data(), host.size() * sizeof(float), DeviceTarget::kCPU, [] {});
  Tensor w = Tensor::FromStorage(storage, {64, 64, 3, 3}, DType::kFloat32);
  Tensor x = Input();
  onednn::WeightCacheStats before = onednn::GetWeightCacheStats();
  std::vector<float> first = Read(Conv(x, w));
  Read(Conv(x, w));
  for (float& v : host) v = -v;  // the owner writes its memory: no stamp moves
  std::vector<float> negated = Read(Conv(x, w));
  onednn::WeightCacheStats after = onednn::GetWeightCacheStats();
  EXPECT_EQ(after.copies - before.copies, 0);
  for (size_t i = 0; i < first.size(); ++i) ASSERT_FLOAT_EQ(negated[i], -first[i]) << i;
}

TEST(StorageStamps, MoveWithEveryWrite) {
  Tensor a = Ramp({4}, 1.0f), b = Ramp({4}, 2.0f);
  const uint64_t fresh = a.impl()->storage->stamp();
  EXPECT_NE(fresh, b.impl()->storage->stamp());  // no two storages share one
  Tensor sum = ops::Call1("add", {a, b});
  sum.Sync();
  EXPECT_EQ(a.impl()->storage->stamp(), fresh);  // read, not written
  const uint64_t written = sum.impl()->storage->stamp();
  ops::Call("assign", {a, b});  // in place
  a.Sync();
  EXPECT_NE(a.impl()->storage->stamp(), fresh);
  EXPECT_EQ(sum.impl()->storage->stamp(), written);
  const uint64_t assigned = a.impl()->storage->stamp();
  a.impl()->storage->AddHostView();
  a.impl()->storage->RemoveHostView();  // Python may have written through the array
  EXPECT_NE(a.impl()->storage->stamp(), assigned);
}

}  // namespace
}  // namespace msrt
