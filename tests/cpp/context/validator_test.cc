// Note [A failed call changes nothing]: validators refuse a call before
// anything is stored, and folders made for a call are removed when a later
// key of the call fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "context/context_test_util.h"

namespace msrt::context {
namespace {

namespace fs = std::filesystem;
constexpr Family kRt = Family::kRuntime;
constexpr Family kAp = Family::kAutoParallel;

class ValidatorTest : public testing::ContextTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("msrt_validator_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Store store_{Profile::kR2_3};
  fs::path dir_;
};

TEST_F(ValidatorTest, ARefusingValidatorFailsTheCallAndNothingIsStored) {
  int calls = 0;
  Subscription v = store_.AddValidator(kRt, {"max_call_depth"}, "test", [&](const Store::PendingGet& get) {
    ++calls;
    if (get(kRt, "max_call_depth").as_int() > 100) throw OSError("too deep for the test");
  });
  store_.Set(kRt, {{"max_call_depth", 50}});
  EXPECT_EQ(calls, 1);
  std::string graphs = (dir_ / "graphs").string();
  EXPECT_THROW(store_.Set(kRt, {{"max_call_depth", 500}, {"save_graphs_path", graphs}}), OSError);
  EXPECT_EQ(store_.Get(kRt, "max_call_depth").as_int(), 50);
  EXPECT_FALSE(fs::exists(graphs));  // validators run before any folder is made
  store_.Set(kRt, {{"mode", 0}});    // a call without its keys does not ask it
  EXPECT_EQ(calls, 2);
  v.Reset();
  store_.Set(kRt, {{"max_call_depth", 500}});
  EXPECT_EQ(store_.Get(kRt, "max_call_depth").as_int(), 500);
}

TEST_F(ValidatorTest, FoldersMadeForAFailedCallAreRemoved) {
  // The first key's folder is made, then the second key's preparation fails
  // (its place is taken after validation, by this test's validator): the
  // first folder is removed again and nothing is stored.
  std::string first = (dir_ / "a" / "b" / "strategy.ckpt").string();
  std::string second = (dir_ / "c" / "group.ckpt").string();
  Subscription v = store_.AddValidator(kAp, {"group_ckpt_save_file"}, "test",
                                       [&](const Store::PendingGet&) { std::ofstream(dir_ / "c") << "in the way"; });
  EXPECT_THROW(store_.Set(kAp, {{"strategy_ckpt_save_file", first}, {"group_ckpt_save_file", second}}), OSError);
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_EQ(store_.Get(kAp, "strategy_ckpt_save_file").as_string(), "");
  fs::remove(dir_ / "c");
  v.Reset();
  store_.Set(kAp, {{"strategy_ckpt_save_file", first}, {"group_ckpt_save_file", second}});
  EXPECT_TRUE(fs::is_directory(dir_ / "a" / "b"));
  EXPECT_TRUE(fs::is_directory(dir_ / "c"));
}

TEST_F(ValidatorTest, ResetRestoresTheValuesALiveValidatorHolds) {
  store_.Set(kAp, {{"device_num", 4}, {"global_rank", 2}, {"gradients_mean", true}});
  Subscription v = store_.AddValidator(
      kAp, {"device_num", "global_rank"}, "test",
      [](const Store::PendingGet& get) {
        if (get(kAp, "device_num").as_int() != 4) throw ValueError("device_num is held at 4");
      },
      Dict{{"device_num", Value(4)}, {"global_rank", Value(2)}});
  store_.Reset(kAp);
  EXPECT_EQ(store_.Get(kAp, "device_num").as_int(), 4);
  EXPECT_EQ(store_.Get(kAp, "global_rank").as_int(), 2);
  EXPECT_FALSE(store_.Get(kAp, "gradients_mean").as_bool());  // the others reset
  EXPECT_THROW(store_.Set(kAp, {{"device_num", 8}}), ValueError);
  v.Reset();
  store_.Reset(kAp);
  EXPECT_EQ(store_.Get(kAp, "device_num").as_int(), 1);
  EXPECT_EQ(store_.Get(kAp, "global_rank").as_int(), 0);
  EXPECT_THROW(store_.AddValidator(
                   kAp, {"device_num"}, "test", [](const Store::PendingGet&) {}, Dict{{"global_rank", Value(1)}}),
               ValueError);
}

}  // namespace
}  // namespace msrt::context
