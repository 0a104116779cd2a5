// The oneDNN primitive cache (Note [oneDNN primitive cache]): a training loop
// builds its primitives once, and the cache stays bounded.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/onednn_cache.h"
#include "msrt/context/context.h"
#include "msrt/core/device.h"
#include "ops/call.h"

namespace msrt {
namespace {

namespace onednn = kernels::onednn;

Tensor Filled(const Shape& shape, float value) {
  std::vector<float> data(static_cast<size_t>(NumElements(shape)), value);
  return Tensor::FromHost(data.data(), data.size() * sizeof(float), shape, DType::kFloat32);
}

Value Ints(const Shape& shape) {
  List items;
  for (int64_t v : shape) items.emplace_back(v);
  return Value(std::move(items));
}

// One forward and backward step of a conv layer.
void ConvStep(const Tensor& x, const Tensor& w) {
  Tensor y = ops::Call1("conv2d", {x, w});
  Tensor dx = ops::Call1("conv2d_backprop_input", {y, w}, Dict{{"input_shape", Ints(x.shape())}});
  Tensor dw = ops::Call1("conv2d_backprop_filter", {y, x}, Dict{{"filter_shape", Ints(w.shape())}});
  dx.Sync();
  dw.Sync();
}

TEST(OneDnnCache, ATrainingLoopBuildsItsPrimitivesOnce) {
  onednn::ClearCache();
  Tensor x = Filled({2, 3, 8, 8}, 0.5f);
  Tensor w = Filled({4, 3, 3, 3}, 0.25f);
  for (int step = 0; step < 5; ++step) ConvStep(x, w);
  onednn::PrimitiveCacheStats stats = onednn::CacheStats();
  EXPECT_EQ(stats.misses, 3);  // conv forward, backward data, backward weights
  EXPECT_EQ(stats.hits, 12);
  EXPECT_EQ(stats.entries, 3);

  // Another shape is another primitive; the first ones stay.
  ConvStep(Filled({1, 3, 8, 8}, 1.0f), w);
  ConvStep(x, w);
  stats = onednn::CacheStats();
  EXPECT_EQ(stats.misses, 6);
  EXPECT_EQ(stats.entries, 6);
}

// Runs a matmul of a by a on 2, then 3 kernel-loop threads (one scheduler
// and one kernel thread; then two of each: Note [Thread plan]), then 2
// again; returns the primitives built.
int64_t MissesAcrossThreadCounts(const Tensor& a) {
  onednn::ClearCache();
  for (int inter_op : {0, 2, 0}) {
    // On this thread (primitives are cached per thread; StaysBounded says why).
    SetContext(Dict{{"runtime_num_threads", Value(2)},
                    {"inter_op_parallel_num", Value(inter_op)},
                    {"pynative_synchronize", Value(true)}});
    ops::Call1("matmul", {a, a}).Sync();
  }
  SetContext(Dict{{"runtime_num_threads", Value(30)},
                  {"inter_op_parallel_num", Value(0)},
                  {"pynative_synchronize", Value(false)}});  // the defaults
  return onednn::CacheStats().misses;
}

TEST(OneDnnCache, AThreadCountChangeRebuildsPrimitives) {
  // oneDNN sizes its work split when it builds a primitive.
  int64_t expected = HardwareConcurrency() > 1 ? 2 : 1;
  EXPECT_EQ(MissesAcrossThreadCounts(Filled({256, 256}, 1.0f)), expected);
}

TEST(OneDnnCache, SmallPrimitivesRunOnOneThreadWhateverTheCount) {
  EXPECT_EQ(MissesAcrossThreadCounts(Filled({17, 17}, 1.0f)), 1);    // above the tiny products
  EXPECT_EQ(MissesAcrossThreadCounts(Filled({128, 128}, 1.0f)), 1);  // 4.2 M FLOP: under 16 M
}

// Runs `call` on 2, then 3 kernel-loop threads, then 2 again (as
// MissesAcrossThreadCounts); returns the primitives built.
template <typename Call>
int64_t MissesOfCallAcrossThreadCounts(Call&& call) {
  onednn::ClearCache();
  for (int inter_op : {0, 2, 0}) {
    // On this thread, as MissesAcrossThreadCounts.
    SetContext(Dict{{"runtime_num_threads", Value(2)},
                    {"inter_op_parallel_num", Value(inter_op)},
                    {"pynative_synchronize", Value(true)}});
    call().Sync();
  }
  SetContext(Dict{{"runtime_num_threads", Value(30)},
                  {"inter_op_parallel_num", Value(0)},
                  {"pynative_synchronize", Value(false)}});  // the defaults
  return onednn::CacheStats().misses;
}

TEST(OneDnnCache, ConvolutionWeightGradientsFollowTheSmallPrimitiveLimit) {
  // 2 * 4 * 8 * 8 * 8 * 8 * 9 = 0.3 MFLOP: one thread. Splitting larger ones
  // pays on an idle machine: a ResNet's 150-600 MFLOP weight gradients ran
  // 10-20% slower on one thread than on two.
  Dict same{{"pad_mode", Value("same")}};
  Dict small_filter = same;
  small_filter.Set("filter_shape", Ints({8, 8, 3, 3}));
  Tensor small_x = Filled({4, 8, 8, 8}, 0.5f);
  Tensor small_dy = Filled({4, 8, 8, 8}, 1.0f);
  EXPECT_EQ(MissesOfCallAcrossThreadCounts([&] {
              return ops::Call1("conv2d_backprop_filter", {small_dy, small_x}, small_filter);
            }),
            1);
  // 2 * 32 * 16 * 16 * 16 * 32 * 9 = 75 MFLOP splits over threads: by
  // batch, one-thread primitives per slice shape and executing thread (Note
  // [float32 backward weights] in onednn_conv.cc): 2 slices of 16 images,
  // then on 3 threads slices of 11, 11 and 10 (2 on a 1-core machine), so
  // at least 3 primitives where one per thread count would be 2.
  Tensor x = Filled({32, 32, 16, 16}, 0.5f);
  Tensor dy = Filled({32, 16, 16, 16}, 1.0f);
  Dict filter = same;
  filter.Set("filter_shape", Ints({16, 32, 3, 3}));
  auto large = [&] { return ops::Call1("conv2d_backprop_filter", {dy, x}, filter); };
  EXPECT_GE(MissesOfCallAcrossThreadCounts(large), HardwareConcurrency() > 1 ? 3 : 1);
  // deterministic="ON": the unsplit primitive on one thread, whatever the thread count.
  SetContext(Dict{{"deterministic", Value("ON")}});
  EXPECT_EQ(MissesOfCallAcrossThreadCounts(large), 1);
  SetContext(Dict{{"deterministic", Value("OFF")}});
}

TEST(OneDnnCache, StaysBounded) {
  // Every product on this thread: primitives are cached per thread, and an
  // op runs at the call or on the dispatcher by its measured time (Note
  // [Kernel cost estimates] in runtime/eager.cc).
  SetContext(Dict{{"pynative_synchronize", Value(true)}});
  onednn::ClearCache();
  int64_t capacity = onednn::CacheStats().capacity;
  Tensor b = Filled({65, 64}, 1.0f);  // every product above the tiny ones (Note [Tiny products])
  for (int64_t rows = 1; rows <= capacity + 10; ++rows) ops::Call1("matmul", {Filled({rows, 65}, 1.0f), b}).Sync();
  onednn::PrimitiveCacheStats stats = onednn::CacheStats();
  EXPECT_EQ(stats.entries, capacity);
  EXPECT_EQ(stats.misses, capacity + 10);
  // The most recent survive; the oldest were evicted.
  ops::Call1("matmul", {Filled({capacity + 10, 65}, 1.0f), b}).Sync();
  ops::Call1("matmul", {Filled({1, 65}, 1.0f), b}).Sync();
  stats = onednn::CacheStats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, capacity + 11);
  SetContext(Dict{{"pynative_synchronize", Value(false)}});
}

Tensor Counting(const Shape& shape, float scale) {
  std::vector<float> data(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = scale * static_cast<float>(i + 1);
  return Tensor::FromHost(data.data(), data.size() * sizeof(float), shape, DType::kFloat32);
}

// Note [Tiny products]: up to 4096 multiply-adds run the reference loop on
// the calling thread, building no primitive; the results are the product's.
TEST(OneDnnCache, TinyProductsBuildNoPrimitive) {
  onednn::ClearCache();
  Tensor a = Counting({2, 3}, 1.0f);   // [[1 2 3] [4 5 6]]
  Tensor b = Counting({3, 2}, 0.5f);   // [[.5 1] [1.5 2] [2.5 3]]
  Tensor bt = Counting({2, 3}, 0.5f);  // [[.5 1 1.5] [2 2.5 3]], used transposed
  Tensor ab = ops::Call1("matmul", {a, b});
  Tensor abt = ops::Call1("matmul", {a, bt}, Dict{{"transpose_b", Value(true)}});
  Tensor bias = Counting({2}, 10.0f);  // [10 20]
  Tensor dense = ops::Call1("dense", {a, bt, bias});
  const std::vector<float> want_ab{11.0f, 14.0f, 24.5f, 32.0f};
  const std::vector<float> want_abt{7.0f, 16.0f, 16.0f, 38.5f};
  const std::vector<float> want_dense{17.0f, 36.0f, 26.0f, 58.5f};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(ab.data<float>()[i], want_ab[i]) << i;
    EXPECT_FLOAT_EQ(abt.data<float>()[i], want_abt[i]) << i;
    EXPECT_FLOAT_EQ(dense.data<float>()[i], want_dense[i]) << i;
  }
  EXPECT_EQ(onednn::CacheStats().misses, 0);
  ops::Call1("matmul", {Counting({17, 16}, 1.0f), Counting({16, 16}, 1.0f)}).Sync();  // 4352 multiply-adds
  EXPECT_EQ(onednn::CacheStats().misses, 1);
}

TEST(OneDnnCache, ResultsAreRightFromACachedPrimitive) {
  Tensor x = Filled({1, 1, 4, 4}, 1.0f);
  Tensor w = Filled({1, 1, 3, 3}, 1.0f);
  for (int i = 0; i < 2; ++i) {
    Tensor y = ops::Call1("conv2d", {x, w}, Dict{{"pad_mode", Value("valid")}});
    const float* p = y.data<float>();
    ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
    for (int j = 0; j < 4; ++j) EXPECT_EQ(p[j], 9.0f);
  }
}

}  // namespace
}  // namespace msrt
