// deterministic="ON": reductions give the same bits whatever the thread plan.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "msrt/context/context.h"
#include "ops/call.h"

namespace msrt {
namespace {

TEST(Deterministic, LongReductionsIgnoreTheThreadCount) {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  std::vector<float> data(2 * 1500001);
  for (float& v : data) v = normal(gen);
  Tensor x = Tensor::FromHost(data.data(), data.size() * sizeof(float), {2, 1500001}, DType::kFloat32);
  SetContext(Dict{{"deterministic", Value("ON")}});
  std::vector<std::vector<char>> results;
  std::vector<int> threads;
  for (int inter_op : {0, 2}) {
    SetContext(Dict{{"runtime_num_threads", Value(2)}, {"inter_op_parallel_num", Value(inter_op)}});
    threads.push_back(IntraOpThreads());
    Tensor sum = ops::Call1("reduce_sum", {x}, Dict{{"axis", Value(1)}});
    sum.Sync();
    const char* bytes = static_cast<const char*>(sum.raw());
    results.emplace_back(bytes, bytes + sum.nbytes());
  }
  SetContext(
      Dict{{"deterministic", Value("OFF")}, {"runtime_num_threads", Value(30)}, {"inter_op_parallel_num", Value(0)}});
  EXPECT_NE(threads[0], threads[1]);
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace msrt
