// The thread pool's split is a pure function of (n, grain, threads), and
// ParallelFor cuts loops exactly that way: what makes chunked reductions
// reproducible for a given thread count.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "msrt/context/context.h"
#include "ops/call.h"

namespace msrt {
namespace {

TEST(SplitWork, CoversTheRangeInAtMostOneChunkPerThread) {
  for (int64_t n : {1, 7, 100, 32768, 65536, 65537, 1000003}) {
    for (int64_t grain : {1, 1000, 32768}) {
      for (int threads : {1, 2, 3, 8}) {
        Split s = SplitWork(n, grain, threads);
        EXPECT_GE(s.chunks, 1);
        EXPECT_LE(s.chunks, threads);
        EXPECT_GE(s.chunks * s.chunk_size, n);
        EXPECT_LT((s.chunks - 1) * s.chunk_size, n) << "no empty chunk";
        if (s.chunks > 1) {
          EXPECT_GE(s.chunk_size, grain);
        }
      }
    }
  }
}

TEST(SplitWork, IsAPureFunction) {
  for (int i = 0; i < 100; ++i) {
    Split a = SplitWork(123457, 1024, 2);
    Split b = SplitWork(123457, 1024, 2);
    EXPECT_EQ(a.chunks, b.chunks);
    EXPECT_EQ(a.chunk_size, b.chunk_size);
  }
  EXPECT_EQ(SplitWork(10, 32768, 8).chunks, 1);  // small loops are not split
}

// The (begin, end) ranges one ParallelFor hands out, sorted.
std::vector<std::pair<int64_t, int64_t>> RangesOf(int64_t n, int64_t grain) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard lock(mutex);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}

TEST(ParallelFor, ChunksAreExactlyThoseOfSplitWork) {
  for (int threads : {1, 2}) {
    SetContext(Dict{{"runtime_num_threads", Value(threads)}});
    for (int64_t n : {1, 5000, 65536, 100001, 1 << 20}) {
      for (int repeat = 0; repeat < 5; ++repeat) {
        auto ranges = RangesOf(n, 4096);
        Split s = SplitWork(n, 4096, IntraOpThreads());
        ASSERT_EQ(static_cast<int64_t>(ranges.size()), s.chunks) << "n=" << n << " threads=" << threads;
        for (int64_t c = 0; c < s.chunks; ++c) {
          EXPECT_EQ(ranges[c].first, c * s.chunk_size);
          EXPECT_EQ(ranges[c].second, std::min(n, (c + 1) * s.chunk_size));
        }
      }
    }
  }
  SetContext(Dict{{"runtime_num_threads", Value(30)}});  // the default
}

TEST(ParallelFor, VisitsEveryIndexOnce) {
  std::vector<int> hits(300000, 0);
  ParallelFor(static_cast<int64_t>(hits.size()), 1000, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ++hits[i];
  });
  EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
  int calls = 0;
  ParallelFor(0, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, NestedCallsRunSerially) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> inner;
  ParallelFor(4, 1, [&](int64_t, int64_t) {
    ParallelFor(100000, 10, [&](int64_t begin, int64_t end) {
      std::lock_guard lock(mutex);
      inner.emplace_back(begin, end);
    });
  });
  for (const auto& r : inner) {
    EXPECT_EQ(r.first, 0);
    EXPECT_EQ(r.second, 100000);
  }
}

// Per-chunk partial sums combined in chunk order: the recipe every
// reduction kernel follows.
float ChunkedSum(const std::vector<float>& x, int64_t grain) {
  Split s = SplitWork(static_cast<int64_t>(x.size()), grain, IntraOpThreads());
  std::vector<float> partial(static_cast<size_t>(s.chunks), 0.0f);
  ParallelFor(static_cast<int64_t>(x.size()), grain, [&](int64_t begin, int64_t end) {
    float acc = 0;
    for (int64_t i = begin; i < end; ++i) acc += x[i];
    partial[begin / s.chunk_size] = acc;
  });
  float total = 0;
  for (float p : partial) total += p;
  return total;
}

TEST(ParallelFor, ChunkOrderedReductionsAreBitwiseRepeatable) {
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  std::vector<float> x(1 << 20);
  for (float& v : x) v = normal(gen);
  for (int threads : {1, 2}) {
    SetContext(Dict{{"runtime_num_threads", Value(threads)}});
    const float first = ChunkedSum(x, 4096);
    for (int repeat = 0; repeat < 20; ++repeat) EXPECT_EQ(ChunkedSum(x, 4096), first);
  }
  SetContext(Dict{{"runtime_num_threads", Value(30)}});
}

TEST(ParallelFor, ReductionKernelsAreBitwiseRepeatable) {
  std::mt19937 gen(2);
  std::normal_distribution<float> normal;
  std::vector<float> data(3 * 400000);
  for (float& v : data) v = normal(gen);
  Tensor x = Tensor::FromHost(data.data(), data.size() * sizeof(float), {3, 400000}, DType::kFloat32);
  for (int threads : {1, 2}) {
    SetContext(Dict{{"runtime_num_threads", Value(threads)}});
    for (const Dict& attrs : {Dict{}, Dict{{"axis", Value(1)}}, Dict{{"axis", Value(0)}}}) {
      Tensor first = ops::Call1("reduce_sum", {x}, attrs);
      first.Sync();
      for (int repeat = 0; repeat < 5; ++repeat) {
        Tensor again = ops::Call1("reduce_sum", {x}, attrs);
        again.Sync();
        ASSERT_EQ(std::memcmp(first.raw(), again.raw(), first.nbytes()), 0);
      }
    }
  }
  SetContext(Dict{{"runtime_num_threads", Value(30)}});
}

}  // namespace
}  // namespace msrt
