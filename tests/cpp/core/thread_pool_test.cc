// The thread pool's split is a pure function of (n, grain, threads), and
// ParallelFor cuts loops exactly that way: what makes chunked reductions
// reproducible for a given thread count.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "msrt/context/context.h"
#include "ops/call.h"

namespace msrt {
namespace {

// Two thread plans whose kernel loops run on 2 and 3 threads (one scheduler
// and one kernel thread; two of each: Note [Thread plan]).
const Dict kPlans[] = {
    Dict{{"runtime_num_threads", Value(2)}, {"inter_op_parallel_num", Value(0)}},
    Dict{{"runtime_num_threads", Value(2)}, {"inter_op_parallel_num", Value(2)}},
};
const Dict kDefaultPlan{{"runtime_num_threads", Value(30)}, {"inter_op_parallel_num", Value(0)}};

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
  for (const Dict& plan : kPlans) {
    SetContext(plan);
    for (int64_t n : {1, 5000, 65536, 100001, 1 << 20}) {
      for (int repeat = 0; repeat < 5; ++repeat) {
        auto ranges = RangesOf(n, 4096);
        Split s = SplitWork(n, 4096, IntraOpThreads());
        ASSERT_EQ(static_cast<int64_t>(ranges.size()), s.chunks) << "n=" << n << " threads=" << IntraOpThreads();
        for (int64_t c = 0; c < s.chunks; ++c) {
          EXPECT_EQ(ranges[c].first, c * s.chunk_size);
          EXPECT_EQ(ranges[c].second, std::min(n, (c + 1) * s.chunk_size));
        }
      }
    }
  }
  SetContext(kDefaultPlan);
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
  for (const Dict& plan : kPlans) {
    SetContext(plan);
    const float first = ChunkedSum(x, 4096);
    for (int repeat = 0; repeat < 20; ++repeat) EXPECT_EQ(ChunkedSum(x, 4096), first);
  }
  SetContext(kDefaultPlan);
}

TEST(ParallelFor, ReductionKernelsAreBitwiseRepeatable) {
  std::mt19937 gen(2);
  std::normal_distribution<float> normal;
  std::vector<float> data(3 * 400000);
  for (float& v : data) v = normal(gen);
  Tensor x = Tensor::FromHost(data.data(), data.size() * sizeof(float), {3, 400000}, DType::kFloat32);
  for (const Dict& plan : kPlans) {
    SetContext(plan);
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
  SetContext(kDefaultPlan);
}

// ---------------------------------------------------------------------------
// The thread plan (Note [Thread plan]).

TEST(ThreadPlan, FollowsTheActorRuntimeRule) {
  // runtime_num_threads only: 18% schedulers (at least one), the rest kernel threads.
  ThreadPlan p = PlanThreads(30, 0, 16);
  EXPECT_EQ(p.runtime_threads, 16);
  EXPECT_EQ(p.scheduler, 2);  // floor(16 * 0.18)
  EXPECT_EQ(p.total, 16);
  EXPECT_EQ(p.kernel, 14);
  EXPECT_FALSE(p.oversubscribed);
  p = PlanThreads(2, 0, 2);
  EXPECT_EQ(p.scheduler, 1);
  EXPECT_EQ(p.kernel, 1);
  EXPECT_EQ(p.total, 2);
  // rt no larger than the schedulers: one more thread for kernels.
  p = PlanThreads(1, 0, 8);
  EXPECT_EQ(p.scheduler, 1);
  EXPECT_EQ(p.total, 2);
  EXPECT_EQ(p.kernel, 1);
  // inter_op_parallel_num > 0: that many schedulers on top of rt kernel threads.
  p = PlanThreads(4, 3, 8);
  EXPECT_EQ(p.scheduler, 3);
  EXPECT_EQ(p.kernel, 4);
  EXPECT_EQ(p.total, 7);
  // Both capped by the hardware; 0 means all of it.
  p = PlanThreads(64, 64, 4);
  EXPECT_EQ(p.runtime_threads, 4);
  EXPECT_EQ(p.inter_op, 4);
  EXPECT_EQ(p.total, 8);
  EXPECT_TRUE(p.oversubscribed);
  EXPECT_EQ(PlanThreads(0, 0, 12).runtime_threads, 12);
}

TEST(ThreadPlan, ThePoolFollowsTheContext) {
  SetContext(kPlans[1]);
  ThreadPlan plan = CurrentThreadPlan();
  EXPECT_EQ(IntraOpThreads(), plan.kernel + 1);
  ParallelFor(1 << 20, 1024, [](int64_t, int64_t) {});
  EXPECT_EQ(KernelPoolWorkers(), plan.kernel);
  SetContext(kPlans[0]);
  ParallelFor(1 << 20, 1024, [](int64_t, int64_t) {});
  EXPECT_EQ(KernelPoolWorkers(), CurrentThreadPlan().kernel);
  SetContext(kDefaultPlan);
}

// ---------------------------------------------------------------------------
// Errors and cancellation inside ParallelFor.

TEST(ParallelFor, AnErrorInAChunkReachesTheCallerAndThePoolGoesOn) {
  SetContext(kPlans[1]);
  for (int repeat = 0; repeat < 20; ++repeat) {
    std::atomic<int64_t> ran{0};
    EXPECT_THROW(ParallelFor(64, 1,
                             [&](int64_t begin, int64_t end) {
                               ran += end - begin;
                               if (begin <= 5 && 5 < end) throw ValueError("chunk 5 failed");
                             }),
                 ValueError);
    EXPECT_LE(ran.load(), 64);
    auto ranges = RangesOf(100000, 1000);  // the next job runs whole
    int64_t covered = 0;
    for (auto [b, e] : ranges) covered += e - b;
    EXPECT_EQ(covered, 100000);
  }
  SetContext(kDefaultPlan);
}

class TestCancellable final : public Cancellable {
 public:
  void Request() { state_.fetch_or(kRequested); }
  [[noreturn]] void Throw() const override { throw RuntimeError("cancelled by the test"); }
};

TEST(ParallelFor, StopsAtACancellationPointOnEveryThread) {
  SetContext(kPlans[1]);
  TestCancellable token;
  Cancellable* previous = SetThreadCancellable(&token);
  std::atomic<int64_t> chunks_started{0};
  std::thread requester([&] {
    while (chunks_started.load() < 1) std::this_thread::yield();
    token.Request();
  });
  try {
    ParallelFor(1 << 20, 1, [&](int64_t begin, int64_t end) {
      ++chunks_started;
      for (;;) CancellationPoint();  // runs until cancelled, on whichever thread
    });
    ADD_FAILURE() << "ParallelFor returned";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "cancelled by the test");
  }
  requester.join();
  SetThreadCancellable(previous);
  EXPECT_EQ(RangesOf(5000, 1000).size(), SplitWork(5000, 1000, IntraOpThreads()).chunks);
  SetContext(kDefaultPlan);
}

}  // namespace
}  // namespace msrt
