// Subscriptions: who hears about a change, when, and what a callback may do.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "context/context_test_util.h"

namespace msrt::context {
namespace {

using testing::Contains;
using testing::MessageOf;

constexpr Family kRt = Family::kRuntime;
constexpr Family kAp = Family::kAutoParallel;
constexpr Family kPs = Family::kParameterServer;

using Keys = std::vector<std::string>;

/// Records the changes a subscriber hears.
struct Heard {
  std::vector<Change> changes;
  std::function<void(const Change&)> Callback() {
    return [this](const Change& c) { changes.push_back(c); };
  }
  Keys SortedKeys(size_t i) const {
    Keys keys = changes.at(i).keys;
    std::sort(keys.begin(), keys.end());
    return keys;
  }
};

class SubscriptionTest : public testing::ContextTest {
 protected:
  Store store_{Profile::kR2_3};
};

TEST_F(SubscriptionTest, FiresOncePerCallWithOnlyTheChangedSubscribedKeys) {
  Heard heard;
  Subscription sub = store_.Subscribe(kRt, {"mode", "runtime_num_threads", "max_call_depth"}, "thread_pool",
                                      heard.Callback());
  store_.Set(kRt, {{"mode", 0}, {"runtime_num_threads", 4}, {"inter_op_parallel_num", 2}});
  ASSERT_EQ(heard.changes.size(), 1u);
  EXPECT_EQ(heard.changes[0].family, kRt);
  EXPECT_EQ(heard.SortedKeys(0), (Keys{"mode", "runtime_num_threads"}));

  // A call that touches none of the subscribed keys is not announced.
  store_.Set(kRt, {{"inter_op_parallel_num", 3}});
  EXPECT_EQ(heard.changes.size(), 1u);
  // Nor is one to another family with a key of the same name.
  store_.Set(kAp, {{"device_num", 2}});
  EXPECT_EQ(heard.changes.size(), 1u);
}

TEST_F(SubscriptionTest, SettingAnUnchangedValueDoesNotFire) {
  Heard heard;
  Subscription sub = store_.Subscribe(kRt, {"mode", "max_call_depth"}, "compiler", heard.Callback());
  store_.Set(kRt, {{"mode", kPynativeMode}});  // already the default
  EXPECT_TRUE(heard.changes.empty());
  store_.Set(kRt, {{"mode", 0}});
  store_.Set(kRt, {{"mode", 0}, {"max_call_depth", 1000}});  // both unchanged
  ASSERT_EQ(heard.changes.size(), 1u);
  EXPECT_EQ(heard.changes[0].keys, (Keys{"mode"}));
}

TEST_F(SubscriptionTest, PerThreadKeyFiresOnlyWhenThisThreadsValueChanges) {
  Heard heard;
  Subscription sub = store_.Subscribe(kRt, {"reserve_class_name_in_scope"}, "scope_names", heard.Callback());
  store_.Set(kRt, {{"reserve_class_name_in_scope", true}});  // the default
  EXPECT_TRUE(heard.changes.empty());
  store_.Set(kRt, {{"reserve_class_name_in_scope", false}});
  store_.Set(kRt, {{"reserve_class_name_in_scope", false}});
  ASSERT_EQ(heard.changes.size(), 1u);
  EXPECT_EQ(heard.changes[0].keys, (Keys{"reserve_class_name_in_scope"}));
  // Another thread starts from the default: False is a change there.
  std::thread([&] { store_.Set(kRt, {{"reserve_class_name_in_scope", false}}); }).join();
  EXPECT_EQ(heard.changes.size(), 2u);
}

TEST_F(SubscriptionTest, FailedCallDoesNotFire) {
  Heard heard;
  Subscription sub = store_.Subscribe(kRt, {"mode"}, "compiler", heard.Callback());
  EXPECT_THROW(store_.Set(kRt, {{"mode", 0}, {"device_id", -1}}), ValueError);
  EXPECT_TRUE(heard.changes.empty());
}

TEST_F(SubscriptionTest, DestroyedSubscriptionStopsFiring) {
  Heard heard;
  {
    Subscription sub = store_.Subscribe(kRt, {"mode"}, "compiler", heard.Callback());
    store_.Set(kRt, {{"mode", 0}});
    EXPECT_EQ(heard.changes.size(), 1u);
  }
  store_.Set(kRt, {{"mode", 1}});
  EXPECT_EQ(heard.changes.size(), 1u);

  Subscription sub = store_.Subscribe(kRt, {"mode"}, "compiler", heard.Callback());
  sub.Reset();
  store_.Set(kRt, {{"mode", 0}});
  EXPECT_EQ(heard.changes.size(), 1u);

  // Move-assigning over a live subscription ends the old one.
  Heard first, second;
  Subscription moving = store_.Subscribe(kRt, {"mode"}, "first", first.Callback());
  moving = store_.Subscribe(kRt, {"mode"}, "second", second.Callback());
  store_.Set(kRt, {{"mode", 1}});
  EXPECT_TRUE(first.changes.empty());
  EXPECT_EQ(second.changes.size(), 1u);
  EXPECT_EQ(store_.Explain(kRt, "mode").consumers, (Keys{"second"}));

  // A moved-from subscription is empty; the moved-to one keeps firing.
  Subscription target(std::move(moving));
  moving.Reset();
  store_.Set(kRt, {{"mode", 0}});
  EXPECT_EQ(second.changes.size(), 2u);
}

TEST_F(SubscriptionTest, SubscriptionMayOutliveItsStore) {
  Subscription sub;
  {
    Store short_lived(Profile::kR2_3);
    sub = short_lived.Subscribe(kRt, {"mode"}, "compiler", [](const Change&) {});
  }
  sub.Reset();  // must not touch the destroyed store
  SUCCEED();
}

TEST_F(SubscriptionTest, ThrowingCallbackIsLoggedAndDoesNotBreakTheStore) {
  Heard after;
  Subscription bad = store_.Subscribe(kRt, {"mode"}, "broken", [](const Change&) { throw std::runtime_error("boom"); });
  Subscription good = store_.Subscribe(kRt, {"mode"}, "healthy", after.Callback());
  EXPECT_NO_THROW(store_.Set(kRt, {{"mode", 0}}));
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(after.changes.size(), 1u);  // later subscribers still hear it
  EXPECT_NO_THROW(store_.Set(kRt, {{"mode", 1}}));
  EXPECT_EQ(after.changes.size(), 2u);
}

TEST_F(SubscriptionTest, CallbackThrowingANonStandardExceptionDoesNotBreakTheStore) {
  Heard after;
  Subscription bad = store_.Subscribe(kRt, {"mode"}, "broken", [](const Change&) { throw 42; });
  Subscription good = store_.Subscribe(kRt, {"mode"}, "healthy", after.Callback());
  EXPECT_NO_THROW(store_.Set(kRt, {{"mode", 0}}));
  EXPECT_EQ(after.changes.size(), 1u);
  bad.Reset();
  // The thread is not left marked as "inside a callback".
  EXPECT_NO_THROW(store_.Set(kRt, {{"mode", 1}}));
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
}

TEST_F(SubscriptionTest, ChangingTheContextFromACallbackIsRefused) {
  std::vector<std::string> refusals;
  Value mode_seen;
  Subscription sub = store_.Subscribe(kRt, {"mode"}, "meddler", [&](const Change&) {
    mode_seen = store_.Get(kRt, "mode");  // reading is fine and sees the new value
    auto refused = [&](auto&& body) { refusals.push_back(MessageOf<RuntimeError>(body)); };
    refused([&] { store_.Set(kRt, {{"runtime_num_threads", 2}}); });
    refused([&] { store_.Reset(kAp); });
    refused([&] { store_.SetProfile(Profile::kR1_6); });
    refused([&] { store_.Load(store_.Snapshot()); });
    refused([&] { ScopedOverride o(kRt, {{"mode", 1}}, store_); });
  });
  store_.Set(kRt, {{"mode", 0}, {"max_call_depth", 50}});
  EXPECT_EQ(mode_seen, Value(kGraphMode));
  ASSERT_EQ(refusals.size(), 5u);
  for (const std::string& message : refusals) {
    EXPECT_EQ(message, "The context can not be changed from inside a context subscriber callback.");
  }
  // The outer call committed, the refused ones did nothing.
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(store_.Get(kRt, "max_call_depth"), Value(50));
  EXPECT_EQ(store_.Get(kRt, "runtime_num_threads"), Value(30));
  EXPECT_EQ(store_.profile(), Profile::kR2_3);
  sub.Reset();
  store_.Set(kRt, {{"runtime_num_threads", 2}});  // allowed again outside the callback
  EXPECT_EQ(store_.Get(kRt, "runtime_num_threads"), Value(2));
}

TEST_F(SubscriptionTest, SubscribeToAnUnknownKeyThrows) {
  std::string message = MessageOf<ValueError>([&] {
    store_.Subscribe(kRt, {"mode", "mdoe"}, "x", [](const Change&) {});
  });
  EXPECT_EQ(message, "Store::Subscribe: 'mdoe' is not a key of context.");
  EXPECT_THROW(store_.Subscribe(kRt, {"_graph_memory_max_size"}, "x", [](const Change&) {}), ValueError);
  EXPECT_THROW(store_.Subscribe(kAp, {"mode"}, "x", [](const Change&) {}), ValueError);
  // Nothing was registered by the failed calls.
  EXPECT_TRUE(store_.Explain(kRt, "mode").consumers.empty());
}

TEST_F(SubscriptionTest, AliasSetAnnouncesTheCanonicalName) {
  Heard heard;
  Subscription sub = store_.Subscribe(kAp, {"gradients_mean"}, "data_parallel", heard.Callback());
  store_.Set(kAp, {{"mirror_mean", true}});
  ASSERT_EQ(heard.changes.size(), 1u);
  EXPECT_EQ(heard.changes[0].family, kAp);
  EXPECT_EQ(heard.changes[0].keys, (Keys{"gradients_mean"}));
}

TEST_F(SubscriptionTest, ResetAndLoadAnnounceChangedKeys) {
  Heard heard;
  Subscription sub = store_.Subscribe(kAp, {"device_num", "gradients_mean"}, "parallel", heard.Callback());
  Value defaults = store_.Snapshot();
  store_.Set(kAp, {{"device_num", 4}});
  store_.Reset(kAp);
  ASSERT_EQ(heard.changes.size(), 2u);
  EXPECT_EQ(heard.changes[1].keys, (Keys{"device_num"}));
  store_.Reset(kAp);  // nothing left to change
  EXPECT_EQ(heard.changes.size(), 2u);

  store_.Set(kAp, {{"gradients_mean", true}});
  store_.Load(defaults);
  ASSERT_EQ(heard.changes.size(), 4u);
  EXPECT_EQ(heard.changes[3].keys, (Keys{"gradients_mean"}));
}

TEST_F(SubscriptionTest, ChangesMadeForAnotherFamilyReachItsSubscribers) {
  // Enabling PS as a scheduler moves an Ascend target to CPU (spec 5.9).
  testing::ScopedEnv role("MS_ROLE", std::nullopt);
  store_.Set(kRt, {{"device_target", "Ascend"}});
  Heard runtime, ps;
  Subscription device = store_.Subscribe(kRt, {"device_target"}, "device_manager", runtime.Callback());
  Subscription enable = store_.Subscribe(kPs, {"enable_ps"}, "ps", ps.Callback());
  store_.Set(kPs, {{"ms_role", "MS_SCHED"}, {"enable_ps", true}});
  EXPECT_EQ(store_.Get(kRt, "device_target"), Value("CPU"));
  ASSERT_EQ(runtime.changes.size(), 1u);
  EXPECT_EQ(runtime.changes[0].family, kRt);
  EXPECT_EQ(runtime.changes[0].keys, (Keys{"device_target"}));
  ASSERT_EQ(ps.changes.size(), 1u);
  EXPECT_EQ(ps.changes[0].keys, (Keys{"enable_ps"}));
}

TEST_F(SubscriptionTest, OverridesDoNotFire) {
  Heard heard;
  Subscription sub = store_.Subscribe(kRt, {"mode"}, "compiler", heard.Callback());
  { ScopedOverride o(kRt, {{"mode", 0}}, store_); }
  EXPECT_TRUE(heard.changes.empty());
}

TEST_F(SubscriptionTest, SubscribingFromACallbackIsAllowed) {
  Heard late;
  Subscription added;
  bool added_flag_ = false;
  Subscription sub = store_.Subscribe(kRt, {"mode"}, "first", [&](const Change&) {
    if (!added_flag_) {
      added_flag_ = true;
      added = store_.Subscribe(kRt, {"mode"}, "late", late.Callback());
    }
  });
  store_.Set(kRt, {{"mode", 0}});
  EXPECT_TRUE(late.changes.empty());  // registered during this call: hears the next one
  store_.Set(kRt, {{"mode", 1}});
  EXPECT_EQ(late.changes.size(), 1u);
}

}  // namespace
}  // namespace msrt::context

namespace msrt::context {
namespace {

TEST(DeclaredConsumerTest, IsListedByExplainAndNeverCalled) {
  Store store(Profile::kR2_3);
  store.DeclareConsumer(Family::kRuntime, "max_call_depth", "graph compiler");
  store.DeclareConsumer(Family::kRuntime, "max_call_depth", "graph compiler");  // listed once
  EXPECT_EQ(store.Explain(Family::kRuntime, "max_call_depth").consumers, std::vector<std::string>{"graph compiler"});
  store.Set(Family::kRuntime, Dict{{"max_call_depth", 20}});  // no callback to call
  EXPECT_EQ(store.Get(Family::kRuntime, "max_call_depth"), Value(20));
  EXPECT_THROW(store.DeclareConsumer(Family::kRuntime, "no_such_key", "x"), ValueError);
}

}  // namespace
}  // namespace msrt::context

namespace msrt::context {
namespace {

TEST(DerivedKeySubscriptionTest, FiresWhenTheKeysItIsComputedFromChange) {
  Store store(Profile::kR2_3);
  std::vector<std::vector<std::string>> calls;
  Subscription sub = store.Subscribe(Family::kAutoParallel, {"strategy_ckpt_config"}, "test",
                                     [&](const Change& c) { calls.push_back(c.keys); });
  store.Set(Family::kAutoParallel, Dict{{"strategy_ckpt_load_file", "/tmp/a.ckpt"}});
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::vector<std::string>{"strategy_ckpt_config"});
  store.Set(Family::kAutoParallel, Dict{{"strategy_ckpt_load_file", "/tmp/a.ckpt"}});  // unchanged
  store.Set(Family::kAutoParallel, Dict{{"gradients_mean", true}});                    // unrelated
  EXPECT_EQ(calls.size(), 1u);
}

}  // namespace
}  // namespace msrt::context
