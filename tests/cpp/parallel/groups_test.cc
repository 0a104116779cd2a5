// The named groups (parallel/groups.h), and a collective op called through
// ops::Call on a registered group, in forked processes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "msrt/core/errors.h"
#include "ops/call.h"
#include "parallel/communicator.h"
#include "parallel/groups.h"
#include "parallel/multiprocess.h"
#include "parallel/store.h"

namespace msrt::parallel {
namespace {

using parallel::testing::ConnectStore;
using parallel::testing::Failures;
using parallel::testing::RunRanks;

#define RANK_CHECK(cond)                                                                        \
  do {                                                                                          \
    if (!(cond)) throw std::runtime_error(::msrt::StrCat(#cond, " failed at line ", __LINE__)); \
  } while (0)

template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(ErrorKindName(e.kind())) + ": " + e.what();
  }
  return "(no error)";
}

TEST(CollectiveOpsOnGroupsTest, RegisterGetUnregister) {
  if (!BuiltWithGloo()) GTEST_SKIP() << "this build has no Gloo";
  auto outcomes = RunRanks(2, [](int rank, uint16_t port) {
    std::shared_ptr<Communicator> world = CreateGlooCommunicator(ConnectStore(port), rank, 2);
    RANK_CHECK(!HasGroup(kWorldGroup));
    std::string unknown = ErrorOf([] { GetGroup(kWorldGroup); });
    RANK_CHECK(unknown.find("RuntimeError") == 0 &&
               unknown.find("call msrt.communication.init() first") != std::string::npos);
    RegisterGroup(kWorldGroup, world);
    RANK_CHECK(HasGroup(kWorldGroup) && GetGroup(kWorldGroup) == world);
    RANK_CHECK(ErrorOf([&] { RegisterGroup(kWorldGroup, world); }).find("ValueError") == 0);
    // An op names its group; ranks 1, 0 in that order make a group whose rank 0 is world rank 1.
    RegisterGroup("reversed", world->NewGroup({1, 0}));
    Tensor x = Tensor::FromHost(&rank, sizeof(int), {1}, DType::kInt32);
    Tensor gathered = ops::Call1("all_gather", {x}, {{"group", Value("reversed")}});
    const int* got = gathered.data<int>();
    RANK_CHECK(gathered.shape() == Shape({2}) && got[0] == 1 && got[1] == 0);
    Tensor sum = ops::Call1("all_reduce", {x}, {{"op", Value("sum")}});
    RANK_CHECK(sum.data<int>()[0] == 1);
    UnregisterGroup("reversed");
    RANK_CHECK(!HasGroup("reversed") && HasGroup(kWorldGroup));
    ClearGroups();
    RANK_CHECK(!HasGroup(kWorldGroup));
  });
  EXPECT_EQ(Failures(outcomes), "");
}

}  // namespace
}  // namespace msrt::parallel
