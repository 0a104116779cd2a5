// Typed handles (src/context/options.h): each names a record of its family
// with the kind it holds, reads what the store holds, and subscribes,
// declares and validates without spelling a key.
#include "context/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "msrt/context/context.h"
#include "msrt/core/errors.h"

namespace msrt::context {
namespace {

namespace rt = runtime_options;

// Every handle, with what the store answers for its key.
template <typename T>
void ExpectReadsTheStore(const OptionRef<T>& handle) {
  SCOPED_TRACE(std::string(handle.key()));
  Value stored = Global().Get(handle.family(), handle.key());
  if constexpr (std::is_same_v<T, bool>) {
    EXPECT_EQ(handle.Get(), stored.as_bool());
  } else if constexpr (std::is_same_v<T, int64_t>) {
    EXPECT_EQ(handle.Get(), stored.as_int());
  } else if constexpr (std::is_same_v<T, double>) {
    EXPECT_EQ(handle.Get(), stored.as_float());
  } else {
    EXPECT_EQ(handle.Get(), stored.as_string());
  }
}

TEST(OptionHandles, EveryHandleNamesARecordOfItsKind) {
  // Building a handle checks the key exists and holds T (ValueError otherwise).
  ExpectReadsTheStore(rt::DeviceTarget());
  ExpectReadsTheStore(rt::DeviceId());
  ExpectReadsTheStore(rt::MaxDeviceMemory());
  ExpectReadsTheStore(rt::VariableMemoryMaxSize());
  ExpectReadsTheStore(rt::MempoolBlockSize());
  ExpectReadsTheStore(rt::MemoryOptimizeLevel());
  ExpectReadsTheStore(rt::RuntimeNumThreads());
  ExpectReadsTheStore(rt::InterOpParallelNum());
  ExpectReadsTheStore(rt::OpTimeout());
  ExpectReadsTheStore(rt::Deterministic());
  ExpectReadsTheStore(rt::PynativeSynchronize());
  ExpectReadsTheStore(rt::PynativeQueueDepth());
  ExpectReadsTheStore(rt::EnableGraphKernel());
  ExpectReadsTheStore(rt::GraphKernelFlags());
  ExpectReadsTheStore(rt::EnableReducePrecision());
  ExpectReadsTheStore(rt::SaveGraphs());
  ExpectReadsTheStore(rt::SaveGraphsPath());
  ExpectReadsTheStore(rt::EnvConfigPath());
  ExpectReadsTheStore(rt::EnableDump());
  ExpectReadsTheStore(rt::SaveDumpPath());
  ExpectReadsTheStore(rt::EnableProfiling());
  ExpectReadsTheStore(rt::ProfilingOptions());
  ExpectReadsTheStore(rt::PrintFilePath());
  ExpectReadsTheStore(parallel_options::GlobalRank());
  EXPECT_EQ(parallel_options::GlobalRank().family(), Family::kAutoParallel);
}

TEST(OptionHandles, ReadOverridesAndTheEnvironment) {
  {
    ScopedOverride o(Family::kRuntime, Dict{{"op_timeout", Value(int64_t{17})}});
    EXPECT_EQ(rt::OpTimeout().Get(), 17);
  }
  EXPECT_EQ(rt::OpTimeout().Get(), Global().Get(Family::kRuntime, "op_timeout").as_int());
  EXPECT_EQ(rt::SaveGraphs().Effective(), Global().Effective(Family::kRuntime, "save_graphs").as_int());
}

TEST(OptionHandles, SubscribeAndValidateThroughHandles) {
  Store store(Profile::kR2_3);
  OptionRef<int64_t> timeout(Family::kRuntime, "op_timeout", store);
  OptionRef<int64_t> depth(Family::kRuntime, "pynative_queue_depth", store);
  std::vector<std::string> heard;
  Subscription sub = store.Subscribe({timeout, depth}, "test consumer", [&](const Change& c) {
    for (const std::string& k : c.keys) heard.push_back(k);
  });
  Subscription check = store.AddValidator({timeout}, "test consumer", [&](const Store::PendingGet& get) {
    if (timeout.Pending(get) == 13) throw ValueError("13 is refused");
  });
  store.Set(Family::kRuntime, {{"op_timeout", Value(int64_t{5})}});
  EXPECT_THROW(store.Set(Family::kRuntime, {{"op_timeout", Value(int64_t{13})}}), ValueError);
  EXPECT_EQ(timeout.Get(), 5);
  EXPECT_EQ(heard, std::vector<std::string>{"op_timeout"});
  store.DeclareConsumer(depth, "another consumer");
  EXPECT_EQ(store.Explain(Family::kRuntime, "pynative_queue_depth").consumers,
            (std::vector<std::string>{"test consumer", "another consumer"}));
}

TEST(OptionHandles, OneSubscriptionSpansOneFamily) {
  Store store(Profile::kR2_3);
  OptionRef<int64_t> timeout(Family::kRuntime, "op_timeout", store);
  OptionRef<int64_t> rank(Family::kAutoParallel, "global_rank", store);
  EXPECT_THROW(store.Subscribe({timeout, rank}, "mixed", [](const Change&) {}), ValueError);
}

}  // namespace
}  // namespace msrt::context
