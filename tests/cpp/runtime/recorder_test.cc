// The running data recorder (Note [Running data recorder]): failure and exit
// records of graph executions.
#include "runtime/recorder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/capture.h"
#include "msrt/context/context.h"
#include "ops/call.h"
#include "runtime/graph_executor.h"
#include "runtime/observe_test_util.h"

namespace msrt::runtime {
namespace {

namespace fs = std::filesystem;
using context::Family;
using testing::ReadFile;
using testing::ScratchDir;

Tensor Floats() {
  std::vector<float> v = {0, 1, 2, 3};
  return Tensor::FromHost(v.data(), 16, {4}, DType::kFloat32);
}

// Points env_config_path at an rdr config for the test's duration.
class RdrConfig {
 public:
  RdrConfig(const fs::path& dir, const std::string& rdr_json) {
    fs::path file = dir / "config.json";
    std::ofstream(file) << "{\"rdr\": " << rdr_json << "}";
    context::Global().Set(Family::kRuntime, {{"env_config_path", Value(file.string())}});
  }
  ~RdrConfig() { context::Global().Set(Family::kRuntime, {{"env_config_path", Value("")}}); }
};

std::vector<fs::path> Records(const fs::path& root, const std::string& kind) {
  std::vector<fs::path> out;
  fs::path base = root / "rank_0" / "rdr";
  if (!fs::exists(base)) return out;
  for (const auto& entry : fs::directory_iterator(base)) {
    if (entry.path().filename().string().rfind(kind + "_", 0) == 0) out.push_back(entry.path());
  }
  return out;
}

TEST(Recorder, ExecutionOrderMarksOnlyTheFailingStep) {
  GraphExecutable exe(testing::GatherGraph("rdr_graph"), {});
  std::string plain = exe.ExecutionOrderText();
  EXPECT_EQ(plain.find("=>"), std::string::npos);
  std::string marked = exe.ExecutionOrderText(1);
  EXPECT_NE(marked.find("# failed at step 1 (marked =>)\n"), std::string::npos) << marked;
  EXPECT_NE(marked.find("\n   0: exp "), std::string::npos) << marked;
  EXPECT_NE(marked.find("\n=> 1: gather "), std::string::npos) << marked;
}

TEST(Recorder, AFailingGraphRunWritesItsRecordAndTheErrorGoesOn) {
  ScratchDir dir;
  GraphExecutable exe(testing::GatherGraph("rdr_graph"), {});
  EXPECT_THROW(exe.Run({Floats(), testing::Indices(0, 9)}), IndexError);  // off: nothing written
  EXPECT_TRUE(Records(dir.path(), "failure").empty());
  {
    RdrConfig config(dir.path(), StrCat("{\"enable\": true, \"path\": \"", dir.path().string(), "\"}"));
    ASSERT_TRUE(recorder::Enabled());
    exe.Run({Floats(), testing::Indices(3, 1)});
    EXPECT_THROW(exe.Run({Floats(), testing::Indices(0, 9)}), IndexError);
  }
  EXPECT_FALSE(recorder::Enabled());
  auto records = Records(dir.path(), "failure");
  ASSERT_EQ(records.size(), 1u);
  auto failure = nlohmann::json::parse(ReadFile(records[0] / "failure.json"));
  EXPECT_EQ(failure["execution"], "graph");
  EXPECT_EQ(failure["graph"], "rdr_graph");
  EXPECT_EQ(failure["op"], "gather");
  EXPECT_EQ(failure["step"], 1);
  EXPECT_EQ(failure["run"], 1);  // executions completed before (failed ones do not count)
  EXPECT_EQ(failure["error"]["type"], "IndexError");
  EXPECT_EQ(failure["inputs"][1]["dtype"], "int32");
  std::string order = ReadFile(records[0] / "rdr_graph.exec_order");
  EXPECT_NE(order.find("\n=> 1: gather "), std::string::npos) << order;
  EXPECT_NE(ReadFile(records[0] / "rdr_graph.ir").find("gather("), std::string::npos);
  auto memory = nlohmann::json::parse(ReadFile(records[0] / "memory.json"));
  EXPECT_EQ(memory["graph_plan"]["intermediates"], exe.memory_stats().intermediate_count);
  auto context = nlohmann::json::parse(ReadFile(records[0] / "context.json"));
  EXPECT_EQ(context["context"]["env_config_path"].get<std::string>().substr(0, dir.path().string().size()),
            dir.path().string());
}

TEST(Recorder, ModeTwoExitRecordListsTheGraphsThatRanWithTheirRunCounts) {
  ScratchDir dir;
  GraphExecutable first(testing::GatherGraph("rdr_graph"), {}), second(testing::GatherGraph("rdr_graph"), {});
  {
    RdrConfig config(dir.path(), StrCat("{\"enable\": true, \"mode\": 2, \"path\": \"", dir.path().string(), "\"}"));
    for (int i = 0; i < 3; ++i) first.Run({Floats(), testing::Indices(3, 1)});
    second.Run({Floats(), testing::Indices(0, 0)});
    std::string folder = recorder::WriteExitRecord();
    ASSERT_FALSE(folder.empty());
    auto graphs = nlohmann::json::parse(ReadFile(fs::path(folder) / "graphs.json"));
    ASSERT_EQ(graphs.size(), 2u);
    EXPECT_EQ(graphs[0]["runs"], 3);
    EXPECT_EQ(graphs[1]["runs"], 1);
    EXPECT_EQ(graphs[0]["ir"], "rdr_graph.ir");
    EXPECT_EQ(graphs[1]["ir"], "rdr_graph_1.ir");
    EXPECT_EQ(ReadFile(fs::path(folder) / "rdr_graph.exec_order"), first.ExecutionOrderText());
  }
  EXPECT_EQ(recorder::WriteExitRecord(), "");  // off: no exit record
  EXPECT_EQ(Records(dir.path(), "exit").size(), 1u);
}

}  // namespace
}  // namespace msrt::runtime
