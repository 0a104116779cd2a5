// Fused elementwise loops (runtime/fused_kernel.h): how they spread their
// tiles over the thread pool.
#include <gtest/gtest.h>

#include "kernels/cpu/elementwise_loops.h"
#include "runtime/fused_kernel.h"

namespace msrt::runtime {
namespace {

TEST(FusedLoop, ASmallChainRunsOnTheCallingThreadAsItsOpsWould) {
  // An elementwise kernel runs inline below two grains of elements; so does a fused chain of them.
  EXPECT_EQ(FusedLoopChunks(1, 2), 1);
  EXPECT_EQ(FusedLoopChunks(32 * 32 * 16, 2), 1);  // a ResNet block's activation at batch 1
  EXPECT_EQ(FusedLoopChunks(2 * kernels::cpu::kGrain - 1, 2), 1);
  EXPECT_EQ(FusedLoopChunks(2 * kernels::cpu::kGrain, 2), 2);
  EXPECT_EQ(FusedLoopChunks(1 << 20, 2), 2);  // a weight gradient: every thread
  EXPECT_EQ(FusedLoopChunks(1 << 20, 1), 1);
}

}  // namespace
}  // namespace msrt::runtime
