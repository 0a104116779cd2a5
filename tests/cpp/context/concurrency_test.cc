// The store under concurrent use. Every test name contains "Concurrency" so
// that `make tsan` (filter '*Concurren*:*Thread*') runs them under
// ThreadSanitizer. Loops are bounded; each test takes well under a second.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "context/context_test_util.h"

namespace msrt::context {
namespace {

constexpr Family kRt = Family::kRuntime;
constexpr Family kAp = Family::kAutoParallel;

constexpr int kIterations = 2000;
constexpr int kMaxReads = 200000;  // bound on reader loops, whatever the writers do

/// Lets threads start their loops together, so that they overlap.
class StartGate {
 public:
  explicit StartGate(int threads) : waiting_(threads) {}
  void Arrive() {
    --waiting_;
    while (waiting_.load() > 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> waiting_;
};

class ContextConcurrencyTest : public testing::ContextTest {
 protected:
  /// Starts `body(i)` on `n` threads and joins them.
  template <typename F>
  static void RunThreads(int n, F body) {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back(body, i);
    for (auto& t : threads) t.join();
  }
};

TEST_F(ContextConcurrencyTest, WritersOfDifferentKeysAndReaders) {
  Store store(Profile::kR2_3);
  const std::vector<std::string> keys = {"runtime_num_threads", "inter_op_parallel_num", "max_call_depth"};
  const std::vector<int64_t> initial = {30, 0, 1000};
  std::vector<OptionRef<int64_t>> refs;
  for (const auto& key : keys) refs.emplace_back(kRt, key, store);
  OptionRef<double> memory(kRt, "max_device_memory", store);
  std::atomic<int> writers_left{static_cast<int>(keys.size()) + 1};
  std::atomic<int> errors{0};
  StartGate gate(static_cast<int>(keys.size()) + 3);

  auto writer = [&](int k) {
    gate.Arrive();
    for (int i = 1; i <= kIterations; ++i) {
      store.Set(kRt, {{keys[k], 1000 + i}});
      if (store.Get(kRt, keys[k]) != Value(1000 + i)) ++errors;
      if (refs[k].Get() != 1000 + i) ++errors;
    }
    --writers_left;
  };
  auto memory_writer = [&] {
    gate.Arrive();
    for (int i = 1; i <= kIterations; ++i) {
      store.Set(kRt, {{"max_device_memory", std::to_string(i) + ".5GB"}});
      if (memory.Get() != i + 0.5) ++errors;
    }
    --writers_left;
  };
  auto reader = [&] {
    std::vector<int64_t> last(keys.size(), 0);
    double last_memory = 0;
    gate.Arrive();
    for (int n = 0; n < kMaxReads && writers_left.load() > 0; ++n) {
      for (size_t k = 0; k < keys.size(); ++k) {
        int64_t fast = refs[k].Get();
        int64_t slow = store.Get(kRt, keys[k]).as_int();
        // Each key has one writer with increasing values: reads never go back.
        if (fast < last[k] || slow < fast) ++errors;
        bool valid = fast == initial[k] || (fast >= 1001 && fast <= 1000 + kIterations);
        if (!valid) ++errors;
        last[k] = fast;
      }
      double gb = memory.Get();
      bool valid = gb == 1024.0 || (gb >= 1.5 && gb <= kIterations + 0.5 && gb - static_cast<int64_t>(gb) == 0.5);
      if (!valid || (gb < last_memory && last_memory != 1024.0)) ++errors;
      last_memory = gb;
    }
  };
  std::vector<std::thread> threads;
  for (size_t k = 0; k < keys.size(); ++k) threads.emplace_back(writer, static_cast<int>(k));
  threads.emplace_back(memory_writer);
  threads.emplace_back(reader);
  threads.emplace_back(reader);
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  for (size_t k = 0; k < keys.size(); ++k) EXPECT_EQ(refs[k].Get(), 1000 + kIterations);
  EXPECT_EQ(memory.Get(), kIterations + 0.5);
}

TEST_F(ContextConcurrencyTest, KeysSetTogetherAreReadTogetherBySnapshot) {
  // Keys that one call always writes together: three runtime keys, and
  // variable_memory_max_size with the graph-memory share derived from it
  // (N and 31 - N). Under r1.0 the old key is not deprecated (no warnings).
  Store store(Profile::kR1_0);
  std::atomic<bool> writing{true};
  std::atomic<int> torn{0};
  std::atomic<int> snapshots{0};
  auto gb = [](int n) { return std::to_string(n) + " * 1024 * 1024 * 1024"; };
  StartGate gate(3);
  std::thread writer([&] {
    gate.Arrive();
    // At least kIterations calls, and on until the readers took some snapshots.
    for (int i = 1; i <= 10 * kIterations && (i <= kIterations || snapshots.load() < 3000); ++i) {
      int n = 1 + i % 30;
      store.Set(kRt, {{"runtime_num_threads", i},
                      {"inter_op_parallel_num", i},
                      {"save_graphs", i % 4},
                      {"variable_memory_max_size", std::to_string(n) + "GB"}});
    }
    writing = false;
  });
  auto reader = [&](int) {
    gate.Arrive();
    for (int n = 0; n < kMaxReads && writing.load(); ++n) {
      Value snapshot = store.Snapshot();
      const Dict& context = snapshot.as_dict().Find("context")->as_dict();
      if (*context.Find("runtime_num_threads") != *context.Find("inter_op_parallel_num") &&
          !(context.Find("runtime_num_threads")->as_int() == 30 &&
            context.Find("inter_op_parallel_num")->as_int() == 0)) {
        ++torn;
      }
      // Far apart in the table: the widest window for a torn read.
      if (context.Find("save_graphs")->as_int() != context.Find("runtime_num_threads")->as_int() % 4 &&
          context.Find("runtime_num_threads")->as_int() != 30) {
        ++torn;
      }
      const std::string& variable = context.Find("variable_memory_max_size")->as_string();
      const std::string& graph = context.Find("_graph_memory_max_size")->as_string();
      bool consistent = variable == "0" ? graph == "0" : false;
      for (int m = 1; m <= 30 && !consistent; ++m) consistent = variable == gb(m) && graph == gb(31 - m);
      if (!consistent) ++torn;
      ++snapshots;
    }
  };
  RunThreads(2, reader);
  writer.join();
  EXPECT_EQ(torn.load(), 0) << "out of " << snapshots.load() << " snapshots";
  EXPECT_GE(store.Get(kRt, "runtime_num_threads").as_int(), kIterations);
}

TEST_F(ContextConcurrencyTest, PerThreadKeysAndOverridesDoNotLeak) {
  Store store(Profile::kR2_3);
  std::atomic<int> errors{0};
  RunThreads(4, [&](int t) {
    bool reserve = t % 2 == 0;
    int64_t mode = t % 2;
    int64_t depth = 100 + t;
    // The hash this thread should see: the same values set on a private store.
    Store reference(Profile::kR2_3);
    reference.Set(kRt, {{"mode", mode}, {"max_call_depth", depth}, {"reserve_class_name_in_scope", reserve}});
    uint64_t expected_hash = reference.CompileKeyHash();

    store.Set(kRt, {{"reserve_class_name_in_scope", reserve}});
    OptionRef<int64_t> depth_ref(kRt, "max_call_depth", store);
    OptionRef<bool> reserve_ref(kRt, "reserve_class_name_in_scope", store);
    for (int i = 0; i < kIterations / 2; ++i) {
      {
        ScopedOverride o(kRt, {{"mode", mode}, {"max_call_depth", depth}}, store);
        if (store.Get(kRt, "mode") != Value(mode)) ++errors;
        if (depth_ref.Get() != depth) ++errors;
        if (reserve_ref.Get() != reserve) ++errors;
        if (store.CompileKeyHash() != expected_hash) ++errors;
      }
      if (store.Get(kRt, "max_call_depth") != Value(1000)) ++errors;
      if (depth_ref.Get() != 1000) ++errors;
      if (store.Get(kRt, "reserve_class_name_in_scope") != Value(reserve)) ++errors;
    }
  });
  EXPECT_EQ(errors.load(), 0);
  // This thread set nothing per-thread and holds no override.
  EXPECT_EQ(store.Get(kRt, "reserve_class_name_in_scope"), Value(true));
  EXPECT_EQ(store.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_EQ(store.CompileKeyHash(), Store(Profile::kR2_3).CompileKeyHash());
}

TEST_F(ContextConcurrencyTest, SubscriberRunsWhileOtherThreadsRead) {
  Store store(Profile::kR2_3);
  std::atomic<int> heard{0};
  std::atomic<int> errors{0};
  Subscription sub = store.Subscribe(kRt, {"mode"}, "compiler", [&](const Change& change) {
    ++heard;
    if (change.keys.size() != 1 || change.keys[0] != "mode") ++errors;
    Value mode = store.Get(kRt, "mode");  // reading from the callback is allowed
    if (!mode.is_int() || (mode.as_int() != 0 && mode.as_int() != 1)) ++errors;
    store.Explain(kRt, "mode");
  });
  std::atomic<bool> writing{true};
  StartGate gate(4);
  std::thread writer([&] {
    gate.Arrive();
    for (int i = 0; i < kIterations; ++i) store.Set(kRt, {{"mode", i % 2 == 0 ? kGraphMode : kPynativeMode}});
    writing = false;
  });
  // Other threads read every way there is, and come and go as subscribers.
  RunThreads(3, [&](int t) {
    gate.Arrive();
    for (int n = 0; n < kMaxReads && writing.load(); ++n) {
      switch (t) {
        case 0: {
          Value mode = store.Get(kRt, "mode");
          if (!mode.is_int()) ++errors;
          store.CompileKeyHash();
          break;
        }
        case 1: {
          Explanation e = store.Explain(kRt, "mode");
          if (e.consumers.empty() || e.consumers[0] != "compiler") ++errors;
          if (n % 16 == 0) store.Summary();
          break;
        }
        default: {
          Subscription passing = store.Subscribe(kRt, {"mode"}, "passing", [](const Change&) {});
          store.Snapshot();
          break;
        }
      }
    }
  });
  writer.join();
  EXPECT_EQ(heard.load(), kIterations);
  EXPECT_EQ(errors.load(), 0);
}

TEST_F(ContextConcurrencyTest, WarningsAndMarksFromSeveralThreads) {
  Store store(Profile::kR2_3);
  std::atomic<int> errors{0};
  RunThreads(3, [&](int t) {
    for (int i = 0; i < kIterations / 3; ++i) {
      switch (t) {
        case 0:
          store.Set(kAp, {{"mirror_mean", i % 2 == 0}});  // warns: deprecated alias
          break;
        case 1:
          store.MarkInEffect(kRt, "max_device_memory", "the memory pool was created");
          if (!store.IsInEffect(kRt, "max_device_memory")) ++errors;
          break;
        default:
          if (!store.Explain(kRt, "device_id").info.freezes) ++errors;
          store.Set(kRt, {{"runtime_num_threads", i}});
          break;
      }
    }
  });
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(warnings_.Count(), static_cast<size_t>(kIterations / 3));
  EXPECT_THROW(store.Set(kRt, {{"max_device_memory", "2GB"}}), RuntimeError);
}

}  // namespace
}  // namespace msrt::context
