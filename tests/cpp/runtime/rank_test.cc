// The rank and the per-rank place of files (Note [Per-rank places]).
#include "runtime/rank.h"

#include <gtest/gtest.h>

#include "context/context_test_util.h"
#include "msrt/context/context.h"

namespace msrt::runtime {
namespace {

using context::Family;
using context::testing::ScopedEnv;

class GlobalRank {
 public:
  explicit GlobalRank(int64_t rank) { Set(rank); }
  ~GlobalRank() { Set(0); }
  GlobalRank(const GlobalRank&) = delete;
  GlobalRank& operator=(const GlobalRank&) = delete;

 private:
  static void Set(int64_t rank) { context::Global().Set(Family::kAutoParallel, {{"global_rank", Value(rank)}}); }
};

TEST(RankPlace, OneProcessWritesAtTheGivenPlace) {
  ScopedEnv env("RANK_ID", std::nullopt);
  EXPECT_FALSE(InDistributedJob());
  EXPECT_EQ(RankId(), 0);
  EXPECT_EQ(RankPlace("/tmp/out"), std::filesystem::path("/tmp/out"));
}

TEST(RankPlace, RankIdNamesTheRankFolder) {
  ScopedEnv env("RANK_ID", "3");
  EXPECT_TRUE(InDistributedJob());
  EXPECT_EQ(RankId(), 3);
  EXPECT_EQ(RankPlace("/tmp/out"), std::filesystem::path("/tmp/out/rank_3"));
  // Rank 0 of a job has its folder too.
  ScopedEnv zero("RANK_ID", "0");
  EXPECT_EQ(RankPlace("out"), std::filesystem::path("out/rank_0"));
}

TEST(RankPlace, ANonNumericRankIdIsNoRank) {
  ScopedEnv env("RANK_ID", "abc");
  EXPECT_FALSE(InDistributedJob());
  EXPECT_EQ(RankPlace("out"), std::filesystem::path("out"));
}

TEST(RankPlace, GlobalRankWinsOverRankId) {
  ScopedEnv env("RANK_ID", "1");
  GlobalRank rank(5);
  EXPECT_EQ(RankId(), 5);
  EXPECT_EQ(RankPlace("out"), std::filesystem::path("out/rank_5"));
}

}  // namespace
}  // namespace msrt::runtime
