// Scoped overrides and OptionRef fast reads.
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "context/context_test_util.h"

namespace msrt::context {
namespace {

using testing::Contains;
using testing::MessageOf;

constexpr Family kRt = Family::kRuntime;
constexpr Family kAp = Family::kAutoParallel;

class OverrideTest : public testing::ContextTest {
 protected:
  /// Runs `read` on a fresh thread and returns what it returned.
  template <typename F>
  static auto OnOtherThread(F read) {
    decltype(read()) out{};
    std::thread([&] { out = read(); }).join();
    return out;
  }
  Store store_{Profile::kR2_3};
};

TEST_F(OverrideTest, VisibleOnItsThreadOnly) {
  {
    ScopedOverride o(kRt, {{"mode", 0}, {"max_call_depth", 50}}, store_);
    EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
    EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(50));
    EXPECT_EQ(OnOtherThread([&] { return store_.Get(kRt, "mode"); }), Value(kPynativeMode));
    Explanation e = store_.Explain(kRt, "mode");
    EXPECT_EQ(e.source, Source::kOverride);
    EXPECT_EQ(e.source_detail, "this thread's context.override");
    // A snapshot holds the stored state, not the override: loading it later
    // must not make the override permanent.
    EXPECT_EQ(*store_.Snapshot().as_dict().Find("context")->as_dict().Find("mode"), Value(kPynativeMode));
  }
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(1000));
  EXPECT_EQ(store_.Explain(kRt, "mode").source, Source::kDefault);
}

TEST_F(OverrideTest, OtherStoresAreUnaffected) {
  Store other(Profile::kR2_3);
  ScopedOverride o(kRt, {{"mode", 0}}, store_);
  EXPECT_EQ(other.Get(kRt, "mode"), Value(kPynativeMode));
  ScopedOverride p(kRt, {{"max_call_depth", 7}}, other);
  EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(1000));
  EXPECT_EQ(other.Get(kRt, "max_call_depth"), Value(7));
}

TEST_F(OverrideTest, Nested) {
  {
    ScopedOverride outer(kRt, {{"mode", 0}, {"max_call_depth", 50}}, store_);
    {
      ScopedOverride inner(kRt, {{"mode", 1}}, store_);
      EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
      EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(50));  // from the outer one
    }
    EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
    EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(50));
  }
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(1000));
}

TEST_F(OverrideTest, SetUnderAnOverrideIsHiddenUntilItEnds) {
  {
    ScopedOverride o(kRt, {{"max_call_depth", 50}}, store_);
    store_.Set(kRt, {{"max_call_depth", 70}});
    EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(50));
    EXPECT_EQ(OnOtherThread([&] { return store_.Get(kRt, "max_call_depth"); }), Value(70));
  }
  EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(70));
}

TEST_F(OverrideTest, RestoredWhenAnExceptionUnwinds) {
  try {
    ScopedOverride o(kRt, {{"mode", 0}}, store_);
    ScopedOverride p(kAp, {{"device_num", 4}}, store_);
    throw std::runtime_error("failure inside the scope");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_EQ(store_.Get(kAp, "device_num"), Value(1));
  EXPECT_THROW(store_.PopOverride(), RuntimeError);  // nothing left on this thread
}

TEST_F(OverrideTest, InvalidOverrideThrowsAndPushesNothing) {
  std::string message = MessageOf<ValueError>([&] {
    ScopedOverride o(kRt, {{"mode", 0}, {"max_call_depth", 0}}, store_);
  });
  EXPECT_TRUE(Contains(message, "'max_call_depth'")) << message;
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  message = MessageOf<RuntimeError>([&] { store_.PopOverride(); });
  EXPECT_EQ(message, "context.override: there is no active override on this thread to end.");
  EXPECT_THROW(ScopedOverride o(kRt, {{"no_such_key", 1}}, store_), ValueError);
}

TEST_F(OverrideTest, OverrideFollowsTheSetRules) {
  // device_target first, within the override.
  store_.Set(kRt, {{"device_target", "CPU"}});
  {
    ScopedOverride o(kRt, {{"gpu_config", Dict{{"matmul_allow_tf32", true}}}, {"device_target", "GPU"}}, store_);
    EXPECT_EQ(warnings_.Count(), 0u);
    EXPECT_EQ(*store_.Get(kRt, "gpu_config").as_dict().Find("matmul_allow_tf32"), Value(true));
  }
  EXPECT_EQ(store_.Get(kRt, "device_target"), Value("CPU"));
  // Aliases warn where deprecated.
  {
    ScopedOverride o(kAp, {{"mirror_mean", true}}, store_);
    EXPECT_EQ(store_.Get(kAp, "gradients_mean"), Value(true));
  }
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kDeprecated);
}

TEST_F(OverrideTest, PerThreadKey) {
  store_.Set(kRt, {{"reserve_class_name_in_scope", false}});
  EXPECT_EQ(store_.Get(kRt, "reserve_class_name_in_scope"), Value(false));
  // Another thread starts from the default.
  EXPECT_EQ(OnOtherThread([&] { return store_.Get(kRt, "reserve_class_name_in_scope"); }), Value(true));
  {
    ScopedOverride o(kRt, {{"reserve_class_name_in_scope", true}}, store_);
    EXPECT_EQ(store_.Get(kRt, "reserve_class_name_in_scope"), Value(true));
    EXPECT_EQ(store_.Explain(kRt, "reserve_class_name_in_scope").source, Source::kOverride);
  }
  EXPECT_EQ(store_.Get(kRt, "reserve_class_name_in_scope"), Value(false));
  Explanation e = store_.Explain(kRt, "reserve_class_name_in_scope");
  EXPECT_EQ(e.source, Source::kApi);
  EXPECT_EQ(e.source_detail, "set on this thread");
  // An override on another thread does not touch this thread's value.
  OnOtherThread([&] {
    ScopedOverride o(kRt, {{"reserve_class_name_in_scope", false}}, store_);
    return store_.Get(kRt, "reserve_class_name_in_scope").as_bool();
  });
  EXPECT_EQ(store_.Get(kRt, "reserve_class_name_in_scope"), Value(false));
}

// ---------------------------------------------------------------------------
// OptionRef.

TEST_F(OverrideTest, OptionRefReadsEveryScalarKind) {
  OptionRef<bool> reduce(kRt, "enable_reduce_precision", store_);
  OptionRef<int64_t> threads(kRt, "runtime_num_threads", store_);
  OptionRef<double> memory(kRt, "max_device_memory", store_);
  OptionRef<std::string> deterministic(kRt, "deterministic", store_);
  OptionRef<int64_t> mode(kRt, "mode", store_);
  EXPECT_EQ(reduce.Get(), true);
  EXPECT_EQ(threads.Get(), 30);
  EXPECT_EQ(memory.Get(), 1024.0);
  EXPECT_EQ(deterministic.Get(), "OFF");
  EXPECT_EQ(mode.Get(), kPynativeMode);

  store_.Set(kRt, {{"enable_reduce_precision", false},
                   {"runtime_num_threads", 4},
                   {"max_device_memory", "3.5GB"},
                   {"deterministic", "ON"},
                   {"mode", 0}});
  EXPECT_EQ(reduce.Get(), false);
  EXPECT_EQ(threads.Get(), 4);
  EXPECT_EQ(memory.Get(), 3.5);
  EXPECT_EQ(deterministic.Get(), "ON");
  EXPECT_EQ(mode.Get(), kGraphMode);

  {
    ScopedOverride o(kRt,
                     {{"enable_reduce_precision", true},
                      {"runtime_num_threads", 8},
                      {"max_device_memory", "0.5GB"},
                      {"deterministic", "OFF"},
                      {"mode", 1}},
                     store_);
    EXPECT_EQ(reduce.Get(), true);
    EXPECT_EQ(threads.Get(), 8);
    EXPECT_EQ(memory.Get(), 0.5);
    EXPECT_EQ(deterministic.Get(), "OFF");
    EXPECT_EQ(mode.Get(), kPynativeMode);
    // Other threads keep reading the stored values.
    EXPECT_EQ(OnOtherThread([&] { return threads.Get(); }), 4);
    EXPECT_EQ(OnOtherThread([&] { return memory.Get(); }), 3.5);
  }
  EXPECT_EQ(threads.Get(), 4);
  EXPECT_EQ(memory.Get(), 3.5);

  // Reset, Load and profile switches reach the fast path too.
  Value snapshot = store_.Snapshot();
  store_.Load(Store(Profile::kR2_3).Snapshot());
  EXPECT_EQ(threads.Get(), 30);
  EXPECT_EQ(reduce.Get(), true);
  store_.Load(snapshot);
  EXPECT_EQ(threads.Get(), 4);
  Store fresh(Profile::kR2_3);
  OptionRef<int64_t> fresh_mode(kRt, "mode", fresh);
  fresh.SetProfile(Profile::kR1_6);
  EXPECT_EQ(fresh_mode.Get(), kGraphMode);
}

TEST_F(OverrideTest, OptionRefOnAKeyOfTheWrongKindThrows) {
  std::string message = MessageOf<ValueError>([&] { OptionRef<int64_t> ref(kRt, "device_target", store_); });
  EXPECT_EQ(message, "OptionRef: the context key 'device_target' holds str values, not int.");
  message = MessageOf<ValueError>([&] { OptionRef<bool> ref(kRt, "mode", store_); });
  EXPECT_EQ(message, "OptionRef: the context key 'mode' holds int values, not bool.");
  EXPECT_THROW((OptionRef<double>(kRt, "runtime_num_threads", store_)), ValueError);
  EXPECT_THROW((OptionRef<std::string>(kRt, "max_device_memory", store_)), ValueError);
  EXPECT_THROW((OptionRef<int64_t>(kRt, "mdoe", store_)), ValueError);
  EXPECT_THROW((OptionRef<std::string>(kRt, "_graph_memory_max_size", store_)), ValueError);
}

TEST_F(OverrideTest, OptionRefOnSlowPathKeys) {
  // A per-thread key, a derived key, an environment-default key and a dict.
  OptionRef<bool> reserve(kRt, "reserve_class_name_in_scope", store_);
  OptionRef<std::string> parallel_mode(kAp, "parallel_mode", store_);
  OptionRef<int64_t> device_id(kRt, "device_id", store_);
  OptionRef<Value> gpu_config(kRt, "gpu_config", store_);
  store_.Set(kRt, {{"reserve_class_name_in_scope", false}});
  EXPECT_EQ(reserve.Get(), false);
  EXPECT_EQ(OnOtherThread([&] { return reserve.Get(); }), true);
  store_.Set(kAp, {{"parallel_mode", "data_parallel"}});
  EXPECT_EQ(parallel_mode.Get(), "data_parallel");
  {
    testing::ScopedEnv env("DEVICE_ID", "6");
    EXPECT_EQ(device_id.Get(), 6);
  }
  EXPECT_EQ(device_id.Get(), 0);
  EXPECT_TRUE(gpu_config.Get().is_dict());
  // An alias resolves to its key.
  OptionRef<bool> mean(kAp, "mirror_mean", store_);
  store_.Set(kAp, {{"gradients_mean", true}});
  EXPECT_EQ(mean.Get(), true);
}

}  // namespace
}  // namespace msrt::context
