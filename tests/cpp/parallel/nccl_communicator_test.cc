// The parts of the NCCL backend that run without a GPU: the unique id's way
// through the store to every rank, and the error when no device is usable.
#include <gtest/gtest.h>

#include <string>

#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "parallel/communicator.h"
#include "parallel/multiprocess.h"
#include "parallel/store.h"

namespace msrt::parallel {
namespace {

using namespace std::chrono_literals;

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::string(ErrorKindName(e.kind())) + ": " + e.what();
  }
  return "(no error)";
}

TEST(NcclCommunicatorTest, UniqueIdReachesEveryRankThroughTheStore) {
  if (!BuiltWithNccl()) GTEST_SKIP() << "msrt was built without NCCL";
  // Each rank takes the id rank 0 made and publishes what it got; rank 0
  // checks all of them against its own, byte for byte.
  auto outcomes = testing::RunRanks(4, [](int rank, uint16_t port) {
    auto store = testing::ConnectStore(port);
    Bytes id = ShareFromRoot(*store, "job/nccl-id", rank, MakeNcclUniqueId, 10s);
    if (id.size() != 128) throw std::runtime_error("an NCCL unique id has 128 bytes, got " + std::to_string(id.size()));
    store->Set("seen/" + std::to_string(rank), id);
    if (rank != 0) return;
    for (int r = 1; r < 4; ++r) {
      if (store->Get("seen/" + std::to_string(r), 10s) != id) {
        throw std::runtime_error("rank " + std::to_string(r) + " got another id");
      }
    }
  });
  EXPECT_EQ(testing::Failures(outcomes), "");
}

TEST(NcclCommunicatorTest, UniqueIdsDiffer) {
  if (!BuiltWithNccl()) GTEST_SKIP() << "msrt was built without NCCL";
  auto outcomes = testing::RunRanks(1, [](int, uint16_t) {
    if (MakeNcclUniqueId() == MakeNcclUniqueId()) throw std::runtime_error("two unique ids are equal");
  });
  EXPECT_EQ(testing::Failures(outcomes), "");
}

TEST(NcclCommunicatorTest, WithoutADeviceCreatingOneSaysWhy) {
  std::string why;
  if (BuiltWithNccl() && VisibleCudaDevices(&why) > 0) GTEST_SKIP() << "a CUDA device is visible";
  auto outcomes = testing::RunRanks(1, [](int rank, uint16_t port) {
    std::string error = ErrorOf([&] { CreateNcclCommunicator(testing::ConnectStore(port), rank, 1); });
    std::string expected = BuiltWithNccl() ? "NCCL needs a CUDA device" : "msrt was built without NCCL";
    if (error.rfind("RuntimeError: ", 0) != 0 || error.find(expected) == std::string::npos) {
      throw std::runtime_error("expected a RuntimeError saying '" + expected + "', got " + error);
    }
  });
  EXPECT_EQ(testing::Failures(outcomes), "");
}

TEST(NcclCommunicatorTest, BadRankIsAValueError) { EXPECT_THROW(CreateNcclCommunicator(nullptr, 3, 2), ValueError); }

}  // namespace
}  // namespace msrt::parallel
