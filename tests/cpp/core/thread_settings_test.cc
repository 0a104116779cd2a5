// Core's thread pool reads no context: it is sized by what is pushed in
// (the runtime pushes runtime_num_threads and inter_op_parallel_num, Note
// [Thread pool settings] in src/runtime/threads.cc).
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "msrt/context/context.h"
#include "msrt/core/device.h"

namespace msrt {
namespace {

TEST(ThreadSettings, ThePoolFollowsWhatIsPushedIn) {
  ThreadPlan pushed = ConfigureThreadPool(3, 0);
  EXPECT_EQ(pushed.kernel, PlanThreads(3, 0, HardwareConcurrency()).kernel);
  EXPECT_EQ(CurrentThreadPlan().kernel, pushed.kernel);
  EXPECT_EQ(IntraOpThreads(), pushed.kernel + 1);
  SetDeterministicKernels(true);
  EXPECT_TRUE(DeterministicKernels());
  SetDeterministicKernels(false);
  EXPECT_FALSE(DeterministicKernels());
  // Back to what the context says, as the runtime keeps it.
  ConfigureThreadPool(GetContext("runtime_num_threads").as_int(), GetContext("inter_op_parallel_num").as_int());
  SetDeterministicKernels(GetContext("deterministic").as_string() == "ON");
}

TEST(ThreadSettings, TheRuntimePushesContextChanges) {
  Value before = GetContext("runtime_num_threads");
  SetContext(Dict{{"runtime_num_threads", Value(int64_t{2})}});
  EXPECT_EQ(CurrentThreadPlan().runtime_threads,
            PlanThreads(2, GetContext("inter_op_parallel_num").as_int(), HardwareConcurrency()).runtime_threads);
  SetContext(Dict{{"runtime_num_threads", before}});
  SetContext(Dict{{"deterministic", Value("ON")}});
  EXPECT_TRUE(DeterministicKernels());
  SetContext(Dict{{"deterministic", Value("OFF")}});
  EXPECT_FALSE(DeterministicKernels());
}

}  // namespace
}  // namespace msrt
