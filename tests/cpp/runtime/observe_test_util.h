// Helpers of the instrument tests: a scratch folder and a graph-style launch.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/capture.h"
#include "kernels/kernel.h"
#include "ops/call.h"
#include "runtime/launch.h"

namespace msrt::runtime::testing {

/// A fresh folder for the current test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("msrt_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// Runs `op` on CPU through LaunchKernel at `site`, as an executor would.
inline std::vector<Tensor> Launch(std::string_view op_name, const std::vector<Tensor>& inputs, const LaunchSite& site,
                                  const Dict& attrs = {}) {
  const ops::OpDef& op = ops::GetOp(op_name);
  std::vector<ops::TensorMeta> metas;
  for (const Tensor& t : inputs) metas.push_back({t.shape(), t.dtype()});
  Dict normalized = ops::NormalizeAttrs(op, attrs);
  std::vector<Tensor> outputs;
  for (const auto& m : op.infer(metas, normalized)) outputs.push_back(Tensor::Empty(m.shape, m.dtype));
  const kernels::KernelDef* kernel = kernels::SelectKernel(op_name, DeviceTarget::kCPU, metas, normalized);
  LaunchKernel(*kernel, op, inputs, outputs, normalized, site);
  return outputs;
}

/// exp then gather, captured as graph `name`: the indices decide at run time
/// whether the second step fails.
inline std::shared_ptr<ir::Graph> GatherGraph(const std::string& name) {
  compiler::Capture capture(name, /*max_call_depth=*/100, /*whole_stack=*/false);
  Tensor x = capture.AddInput({4}, DType::kFloat32, DeviceTarget::kCPU, "x");
  Tensor idx = capture.AddInput({2}, DType::kInt32, DeviceTarget::kCPU, "idx");
  std::vector<Tensor> outs;
  {
    compiler::CaptureScope scope(&capture);
    outs = {ops::Call1("gather", {ops::Call1("exp", {x}), idx}, {{"axis", Value(0)}})};
  }
  return capture.Finish(outs);
}

/// Two int32 gather indices.
inline Tensor Indices(int32_t a, int32_t b) {
  std::vector<int32_t> v = {a, b};
  return Tensor::FromHost(v.data(), 8, {2}, DType::kInt32);
}

}  // namespace msrt::runtime::testing
