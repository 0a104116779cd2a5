// Kernel dumps (Note [Dump layout]): graph launches name files by node.
#include "runtime/kernel_dump.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "msrt/context/context.h"
#include "runtime/observe_test_util.h"

namespace msrt::runtime {
namespace {

using context::Family;
using testing::ReadFile;
using testing::ScratchDir;

TEST(KernelDump, GraphLaunchesWriteNodeNamedFilesUnderTheGraphAndIteration) {
  ScratchDir dir;
  context::Global().Set(Family::kRuntime,
                        {{"enable_dump", Value(true)}, {"save_dump_path", Value(dir.path().string())}});
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30};
  Tensor x = Tensor::FromHost(a.data(), 12, {3}, DType::kFloat32);
  Tensor y = Tensor::FromHost(b.data(), 12, {3}, DType::kFloat32);
  const LaunchSite site{.graph = "kernel_graph_0", .node = "Default/network-Net/Add-op3", .iteration = 7};
  testing::Launch("add", {x, y}, site);
  context::Global().Set(Family::kRuntime, {{"enable_dump", Value(false)}});
  testing::Launch("add", {x, y}, site);  // not dumped

  auto folder = dir.path() / "rank_0" / "kernel_graph_0" / "7";
  std::string out = ReadFile(folder / "Default_network-Net_Add-op3.output.0.npy");
  ASSERT_GE(out.size(), 128u + 12u);
  EXPECT_EQ(out.substr(0, 6), "\x93NUMPY");
  std::vector<float> sum(3);
  std::memcpy(sum.data(), out.data() + out.size() - 12, 12);
  EXPECT_EQ(sum, (std::vector<float>{11, 22, 33}));
  EXPECT_TRUE(std::filesystem::exists(folder / "Default_network-Net_Add-op3.input.1.npy"));

  std::string index = ReadFile(dir.path() / "rank_0" / "index.jsonl");
  ASSERT_EQ(std::count(index.begin(), index.end(), '\n'), 1);
  auto line = nlohmann::json::parse(index);
  EXPECT_EQ(line["graph"], "kernel_graph_0");
  EXPECT_EQ(line["node"], "Default/network-Net/Add-op3");
  EXPECT_EQ(line["iteration"], 7);
  EXPECT_EQ(line["op"], "add");
  EXPECT_EQ(line["outputs"][0]["file"], "kernel_graph_0/7/Default_network-Net_Add-op3.output.0.npy");
  EXPECT_EQ(line["inputs"][1]["shape"], nlohmann::json::array({3}));
}

TEST(KernelDump, NpyHeadersAreAlignedAndDescribeTheData) {
  ScratchDir dir;
  std::vector<int64_t> v = {1, 2, 3, 4, 5, 6};
  WriteNpy((dir.path() / "a.npy").string(), Tensor::FromHost(v.data(), 48, {2, 3}, DType::kInt64));
  std::string data = ReadFile(dir.path() / "a.npy");
  uint16_t header_len = static_cast<uint8_t>(data[8]) | (static_cast<uint8_t>(data[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0);
  EXPECT_NE(data.find("'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos);
  EXPECT_EQ(data[10 + header_len - 1], '\n');
  EXPECT_EQ(data.size(), 10u + header_len + 48u);
  bool b = true;
  WriteNpy((dir.path() / "b.npy").string(), Tensor::FromHost(&b, 1, {}, DType::kBool));
  EXPECT_NE(ReadFile(dir.path() / "b.npy").find("'descr': '|b1', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
  EXPECT_THROW(WriteNpy((dir.path() / "missing" / "c.npy").string(), Tensor::FromHost(&b, 1, {}, DType::kBool)),
               OSError);
}

TEST(KernelDump, SanitizedNamesAreSafeFileNames) {
  EXPECT_EQ(SanitizeFileName("Default/net-Net/Conv2D-op1"), "Default_net-Net_Conv2D-op1");
  EXPECT_EQ(SanitizeFileName("../x y:z"), "_._x_y_z");
  EXPECT_EQ(SanitizeFileName(""), "_");
}

}  // namespace
}  // namespace msrt::runtime
