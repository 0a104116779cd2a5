// The profiler's sessions, spans and output files (Note [Profiler output]).
#include "runtime/profiler.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "msrt/core/errors.h"
#include "runtime/observe_test_util.h"

namespace msrt::runtime::profiler {
namespace {

using testing::ReadFile;
using testing::ScratchDir;

Tensor Ones() {
  std::vector<float> v(4, 1.0f);
  return Tensor::FromHost(v.data(), 16, {2, 2}, DType::kFloat32);
}

TEST(Profiler, RecordsGraphLaunchesAndSpansWhileRunning) {
  ScratchDir dir;
  Options options;
  options.output_path = dir.path().string();
  options.op_details = true;
  options.profile_memory = true;
  Session session(options);
  EXPECT_FALSE(Active());
  testing::Launch("add", {Ones(), Ones()}, LaunchSite{});  // before Start: not recorded
  session.Start();
  EXPECT_TRUE(Active());
  EXPECT_THROW(session.Start(), RuntimeError);
  BeginSpan("step");
  testing::Launch("mul", {Ones(), Ones()}, LaunchSite{.graph = "g", .node = "Default/Mul-op1", .iteration = 4});
  EndSpan();
  session.Stop();
  EXPECT_FALSE(Active());
  EXPECT_THROW(session.Stop(), RuntimeError);
  testing::Launch("add", {Ones(), Ones()}, LaunchSite{});  // after Stop: not recorded

  std::vector<std::string> paths = session.Write();
  auto trace = nlohmann::json::parse(ReadFile(paths[0]));
  std::vector<nlohmann::json> ops, spans, phases, counters;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "C") counters.push_back(e);
    if (e.value("cat", "") == "op") ops.push_back(e);
    if (e.value("cat", "") == "step") (e["args"].contains("graph") ? phases : spans).push_back(e);
  }
  // The graph run's phase, made from its kernels.
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0]["name"], "forward_backward");
  EXPECT_EQ(phases[0]["args"]["graph"], "g");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]["name"], "mul");
  EXPECT_EQ(ops[0]["args"]["graph"], "g");
  EXPECT_EQ(ops[0]["args"]["node"], "Default/Mul-op1");
  EXPECT_EQ(ops[0]["args"]["step"], 4);
  EXPECT_EQ(ops[0]["args"]["inputs"], "float32(2, 2), float32(2, 2)");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_LE(spans[0]["ts"].get<double>(), ops[0]["ts"].get<double>());
  EXPECT_GE(spans[0]["ts"].get<double>() + spans[0]["dur"].get<double>(),
            ops[0]["ts"].get<double>() + ops[0]["dur"].get<double>());
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_GT(counters[0]["args"]["allocated"].get<int64_t>(), 0);

  std::string csv = ReadFile(paths[1]);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "op_type,calls,total_us,avg_us,share_percent");
  EXPECT_NE(csv.find("\nmul,1,"), std::string::npos);
  EXPECT_NE(csv.find(",100.00\n"), std::string::npos);
}

TEST(Profiler, SpansAreKeptOnlyWithTrainingTrace) {
  ScratchDir dir;
  Options options;
  options.output_path = dir.path().string();
  options.training_trace = false;
  Session session(options);
  session.Start();
  BeginSpan("step");
  EndSpan();
  session.Stop();
  auto trace = nlohmann::json::parse(ReadFile(session.Write()[0]));
  for (const auto& e : trace["traceEvents"]) EXPECT_NE(e.value("cat", ""), "step");
}

TEST(Profiler, ParsesTheContextOptions) {
  Options legacy = ParseProfilingOptions("training_trace");
  EXPECT_TRUE(legacy.training_trace);
  EXPECT_FALSE(legacy.op_details);
  Options both = ParseProfilingOptions("task_trace:training_trace");
  EXPECT_TRUE(both.training_trace && both.op_details);
  Options json = ParseProfilingOptions(R"({"result_path": "/r", "op_trace": "on", "profile_memory": true})");
  EXPECT_EQ(json.output_path, "/r");
  EXPECT_FALSE(json.training_trace);
  EXPECT_TRUE(json.op_details && json.profile_memory);
  EXPECT_EQ(ParseProfilingOptions(R"({"output": "/o", "result_path": "/r"})").output_path, "/o");
}

TEST(Profiler, ParsesProfilerArguments) {
  bool start = false;
  Options o = ParseProfilerArgs(
      Dict{{"output_path", Value("/x")}, {"profile_memory", Value(true)}, {"start_profile", Value(false)}}, &start);
  EXPECT_EQ(o.output_path, "/x");
  EXPECT_TRUE(o.profile_memory);
  EXPECT_FALSE(start);
  EXPECT_THROW(ParseProfilerArgs(Dict{{"profile_memory", Value(1)}}, &start), TypeError);
  EXPECT_THROW(ParseProfilerArgs(Dict{{"outputpath", Value("/x")}}, &start), TypeError);
  EXPECT_THROW(ParseProfilerArgs(Dict{{"output_path", Value("")}}, &start), ValueError);
}

}  // namespace
}  // namespace msrt::runtime::profiler
