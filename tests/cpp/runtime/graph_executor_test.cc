// Results kept from weights (Note [Results kept from weights] in
// runtime/graph_executor.cc): a step that reads only weights keeps its
// results once the same weight contents come a second time, uses them while
// the weights keep their stamps, and computes again after any write.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "compiler/capture.h"
#include "ops/call.h"
#include "runtime/graph_executor.h"

namespace msrt::runtime {
namespace {

Tensor Floats(const std::vector<float>& v, const Shape& shape) {
  return Tensor::FromHost(v.data(), v.size() * sizeof(float), shape, DType::kFloat32);
}

Tensor Weight(const std::vector<float>& v, const Shape& shape) {
  Tensor w = Floats(v, shape);
  w.impl()->name = "w";
  return w;
}

// x (2, 3) times the float16 rounding of the weight w (3, 2); with
// `return_rounded`, the rounding is returned too.
std::shared_ptr<ir::Graph> ProductGraph(const Tensor& w, bool return_rounded = false) {
  compiler::Capture capture("kept", /*max_call_depth=*/100, /*whole_stack=*/false);
  Tensor x = capture.AddInput({2, 3}, DType::kFloat32, DeviceTarget::kCPU, "x");
  std::vector<Tensor> outs;
  {
    compiler::CaptureScope scope(&capture);
    Tensor r = ops::Call1("round_to_float16", {w});
    outs = {ops::Call1("matmul", {x, r})};
    if (return_rounded) outs.push_back(r);
  }
  return capture.Finish(outs);
}

std::vector<float> Read(const Tensor& t) {
  t.Sync();
  const float* p = t.data<float>();
  return {p, p + t.numel()};
}

// x times w rounded to float16, for x = ones: each output is the column sum.
std::vector<float> Expected(const std::vector<float>& w) {
  auto rounded = [](float v) {
    Tensor r = ops::Call1("round_to_float16", {Floats({v}, {1})});
    return Read(r)[0];
  };
  std::vector<float> out(4);
  for (int j = 0; j < 2; ++j) {
    float sum = 0;
    for (int k = 0; k < 3; ++k) sum += rounded(w[static_cast<size_t>(k * 2 + j)]);
    out[static_cast<size_t>(j)] = out[static_cast<size_t>(2 + j)] = sum;
  }
  return out;
}

const std::vector<float> kOnes(6, 1.0f);

TEST(KeptResults, KeptOnTheSecondSightOfTheSameWeightsAndUsedWhileTheyLast) {
  std::vector<float> values{1.0f + 1.0f / 4096.0f, 2.5f, -3.0f, 1e-6f, 70000.0f, 0.1f};
  Tensor w = Weight(values, {3, 2});
  GraphExecutable exe(ProductGraph(w), {});
  Tensor x = Floats(kOnes, {2, 3});
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(exe.kept_bytes(), 0u);  // first sight: nothing kept
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(exe.kept_bytes(), 24u);  // the same contents again: the rounding is kept
  EXPECT_EQ(exe.kept_reuses(), 0u);
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(exe.kept_reuses(), 2u);

  // A write to the weight (as an optimizer's) gives it a new stamp: computed again, the kept copy goes.
  values = {4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f};
  std::memcpy(w.raw<float>(), values.data(), 24);
  w.impl()->storage->MarkWritten();
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(exe.kept_reuses(), 2u);
  EXPECT_EQ(exe.kept_bytes(), 0u);
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(exe.kept_reuses(), 3u);

  // Another tensor bound to the weight is other contents.
  std::vector<float> other{-1.0f, -2.0f, -3.0f, -4.0f, -5.0f, -6.0f};
  EXPECT_EQ(Read(exe.Run({x}, {Floats(other, {3, 2})})[0]), Expected(other));
  EXPECT_EQ(exe.kept_reuses(), 3u);
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
}

TEST(KeptResults, ATrainingStepsWeightsChangeEveryRunAndKeepNothing) {
  std::vector<float> values{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  Tensor w = Weight(values, {3, 2});
  GraphExecutable exe(ProductGraph(w), {});
  Tensor x = Floats(kOnes, {2, 3});
  for (int step = 0; step < 4; ++step) {
    for (float& v : values) v += 0.25f;
    std::memcpy(w.raw<float>(), values.data(), 24);
    w.impl()->storage->MarkWritten();
    EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values)) << "step " << step;
  }
  EXPECT_EQ(exe.kept_bytes(), 0u);
  EXPECT_EQ(exe.kept_reuses(), 0u);
}

TEST(KeptResults, NeitherReturnedResultsNorMemorySharedWithTheHost) {
  std::vector<float> values{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  Tensor x = Floats(kOnes, {2, 3});
  {
    GraphExecutable exe(ProductGraph(Weight(values, {3, 2}), /*return_rounded=*/true), {});
    for (int run = 0; run < 3; ++run) exe.Run({x});
    EXPECT_EQ(exe.kept_bytes(), 0u);  // the caller may write what it gets
    EXPECT_EQ(exe.kept_reuses(), 0u);
  }
  // A weight over host memory (a NumPy array's) can change without a stamp.
  auto storage = Storage::Foreign(values.data(), 24, DeviceTarget::kCPU, [] {});
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = storage;
  impl->shape = {3, 2};
  impl->dtype = DType::kFloat32;
  impl->name = "w";
  GraphExecutable exe(ProductGraph(Tensor(impl)), {});
  for (int run = 0; run < 3; ++run) EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  values[0] = 10.0f;  // written by the host, no stamp
  EXPECT_EQ(Read(exe.Run({x})[0]), Expected(values));
  EXPECT_EQ(exe.kept_bytes(), 0u);
  EXPECT_EQ(exe.kept_reuses(), 0u);
}

}  // namespace
}  // namespace msrt::runtime
