// Channels-last graphs (compiler/layout.h): which ops run NHWC, where the
// layout conversions go, and that results do not change.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compiler/capture_test_util.h"
#include "compiler/layout.h"
#include "runtime/graph_executor.h"

namespace msrt {
namespace {

using compiler::testing::CaptureOf;
using compiler::testing::Filled;
using compiler::testing::Read;

Value Ints(std::vector<int64_t> values) {
  List items;
  for (int64_t v : values) items.emplace_back(v);
  return Value(std::move(items));
}

std::vector<float> Ramp(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * scale);
  return v;
}

Tensor Weight(const Shape& shape, float scale) { return Filled(shape, Ramp(NumElements(shape), scale)); }

// How many live op nodes run `op`, and how many of those say data_format NHWC.
std::pair<int, int> Count(const ir::Graph& graph, std::string_view op) {
  int all = 0, nhwc = 0;
  for (const ir::Node& n : graph.nodes()) {
    if (n.dead || n.kind != ir::NodeKind::kOp || n.op->name != op) continue;
    ++all;
    const Value* format = n.attrs.Find(ops::kDataFormatAttr);
    if (format != nullptr && format->as_string() == ops::kChannelsLast) ++nhwc;
  }
  return {all, nhwc};
}

void ExpectSameResults(const std::function<std::vector<Tensor>(const Tensor&)>& body, const Shape& shape,
                       const Tensor& x, size_t expected_conversions) {
  auto plain = CaptureOf(body, shape);
  auto converted = CaptureOf(body, shape);
  compiler::LayoutStats stats;
  std::string report;
  ASSERT_TRUE(compiler::UseChannelsLast(*converted, DeviceTarget::kCPU, &report, &stats));
  ir::Verify(*converted, "channels_last");
  EXPECT_EQ(stats.layout_conversions, expected_conversions) << ir::PrintText(*converted);
  EXPECT_NE(report.find("ops run NHWC"), std::string::npos);
  runtime::GraphExecutable a(plain, {}), b(converted, {});
  std::vector<Tensor> want = a.Run({x}), got = b.Run({x});
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape());
    std::vector<float> w = Read(want[i]), g = Read(got[i]);
    for (size_t k = 0; k < w.size(); ++k) ASSERT_NEAR(g[k], w[k], 1e-4f) << "output " << i << " element " << k;
  }
}

Dict Pool2x2() { return Dict({{"kernel_size", Ints({2, 2})}, {"strides", Ints({2, 2})}}); }

TEST(ChannelsLast, ConvReluPoolConvRunsNhwcWithConversionsOnlyAtTheEdges) {
  Tensor w1 = Weight({4, 3, 3, 3}, 0.37f), w2 = Weight({5, 4, 3, 3}, 0.11f);
  auto body = [&](const Tensor& x) {
    Dict valid = Dict({{"pad_mode", Value("valid")}});
    Tensor a = ops::Call1("relu", {ops::Call1("conv2d", {x, w1}, valid)});
    Tensor p = ops::Call1("max_pool2d", {a}, Pool2x2());
    Tensor c = ops::Call1("conv2d", {p, w2}, valid);
    Tensor s = ops::Call1("mul", {c, Tensor::Scalar(2.0, DType::kFloat32)});  // a one-element operand
    return std::vector<Tensor>{ops::Call1("reshape", {s}, Dict({{"shape", Ints({2, -1})}}))};
  };
  Shape shape = {2, 3, 12, 12};
  auto graph = CaptureOf(body, shape);
  ASSERT_TRUE(compiler::UseChannelsLast(*graph, DeviceTarget::kCPU));
  EXPECT_EQ(Count(*graph, "conv2d"), std::make_pair(2, 2));
  EXPECT_EQ(Count(*graph, "max_pool2d"), std::make_pair(1, 1));
  // In: x to NHWC; out: the product back to NCHW before the reshape.
  EXPECT_EQ(Count(*graph, "transpose").first, 2);
  EXPECT_EQ(graph->Meta(graph->outputs()[0]).shape, (Shape{2, 5 * 3 * 3}));
  ExpectSameResults(body, shape, Filled(shape, Ramp(NumElements(shape), 0.05f)), 2);
}

TEST(ChannelsLast, ASingleChannelInputIsReshapedNotTransposed) {
  Tensor w = Weight({6, 1, 5, 5}, 0.21f);
  auto body = [&](const Tensor& x) {
    return std::vector<Tensor>{ops::Call1("conv2d", {x, w}, Dict({{"pad_mode", Value("valid")}}))};
  };
  Shape shape = {3, 1, 10, 10};
  auto graph = CaptureOf(body, shape);
  ASSERT_TRUE(compiler::UseChannelsLast(*graph, DeviceTarget::kCPU));
  EXPECT_EQ(Count(*graph, "reshape").first, 1);    // (3, 1, 10, 10) -> (3, 10, 10, 1): the same bytes
  EXPECT_EQ(Count(*graph, "transpose").first, 1);  // the result, back to NCHW
  ExpectSameResults(body, shape, Filled(shape, Ramp(NumElements(shape), 0.3f)), 2);
}

TEST(ChannelsLast, BackwardOpsJoinTheForwardRegion) {
  Tensor w = Weight({4, 2, 3, 3}, 0.17f);
  auto body = [&](const Tensor& x) {
    Dict conv = Dict({{"pad_mode", Value("same")}});
    Tensor y = ops::Call1("relu", {ops::Call1("conv2d", {x, w}, conv)});
    Tensor dy = ops::Call1("select", {ops::Call1("greater", {y, Tensor::Scalar(0.0, DType::kFloat32)}), y,
                                      Tensor::Scalar(0.0, DType::kFloat32)});
    Dict filter = conv;
    filter.Set("filter_shape", Ints({4, 2, 3, 3}));
    Dict input = conv;
    input.Set("input_shape", Ints({2, 2, 6, 6}));
    Tensor dw = ops::Call1("conv2d_backprop_filter", {dy, x}, filter);
    Tensor dx = ops::Call1("conv2d_backprop_input", {dy, w}, input);
    return std::vector<Tensor>{dw, dx};
  };
  Shape shape = {2, 2, 6, 6};
  auto graph = CaptureOf(body, shape);
  ASSERT_TRUE(compiler::UseChannelsLast(*graph, DeviceTarget::kCPU));
  EXPECT_EQ(Count(*graph, "conv2d_backprop_filter"), std::make_pair(1, 1));
  EXPECT_EQ(Count(*graph, "conv2d_backprop_input"), std::make_pair(1, 1));
  for (const ir::Node& n : graph->nodes()) {  // the shape attribute follows the layout
    if (n.kind == ir::NodeKind::kOp && n.op->name == "conv2d_backprop_input") {
      EXPECT_EQ(ops::AttrInts(n.attrs, "input_shape"), (std::vector<int64_t>{2, 6, 6, 2}));
    }
  }
  // x in once (shared by the conv and the filter gradient), dx out; dw is a weight's shape and stays.
  ExpectSameResults(body, shape, Filled(shape, Ramp(NumElements(shape), 0.07f)), 2);
}

TEST(ChannelsLast, RegionsWithoutConvolutionsAndBroadcastsKeepTheirLayout) {
  Tensor bias = Weight({1, 3, 1, 1}, 0.5f);
  auto pool_only = CaptureOf(
      [&](const Tensor& x) {
        return std::vector<Tensor>{ops::Call1("max_pool2d", {ops::Call1("relu", {x})}, Pool2x2())};
      },
      {1, 3, 4, 4});
  EXPECT_FALSE(compiler::UseChannelsLast(*pool_only, DeviceTarget::kCPU));

  Tensor w = Weight({3, 3, 1, 1}, 0.9f);
  auto body = [&](const Tensor& x) {
    Tensor c = ops::Call1("conv2d", {x, w});
    Tensor shifted = ops::Call1("add", {c, bias});  // broadcasts along C: the layout matters to it
    return std::vector<Tensor>{ops::Call1("conv2d", {shifted, w})};
  };
  Shape shape = {2, 3, 4, 4};
  auto graph = CaptureOf(body, shape);
  ASSERT_TRUE(compiler::UseChannelsLast(*graph, DeviceTarget::kCPU));
  EXPECT_EQ(Count(*graph, "add").first, 1);
  EXPECT_EQ(graph->Meta(graph->outputs()[0]).shape, shape);
  // Each convolution is its own region: in and out around both.
  ExpectSameResults(body, shape, Filled(shape, Ramp(NumElements(shape), 0.2f)), 4);
}

TEST(ChannelsLast, ValuesWrittenInPlaceKeepTheirLayout) {
  Tensor w = Weight({2, 2, 1, 1}, 0.4f);
  auto body = [&](const Tensor& x) {
    Tensor c = ops::Call1("conv2d", {x, w});
    ops::Call("assign", {c, x});  // c is overwritten: it must stay where the write lands
    return std::vector<Tensor>{ops::Call1("neg", {c})};
  };
  auto graph = CaptureOf(body, {1, 2, 3, 3});
  EXPECT_FALSE(compiler::UseChannelsLast(*graph, DeviceTarget::kCPU));
  EXPECT_EQ(Count(*graph, "conv2d"), std::make_pair(1, 0));
}

TEST(ChannelsLast, BatchNormAndTheResidualAddStayInsideTheBlock) {
  // conv -> batch_norm -> relu -> conv -> batch_norm -> add(x) -> relu, and batch_norm's gradient: the
  // normalizations run NHWC (they update their running statistics, 1-D values, in place), so only x goes in
  // and the results come out.
  Tensor w1 = Weight({4, 4, 3, 3}, 0.23f), w2 = Weight({4, 4, 3, 3}, 0.31f);
  Tensor scale = Weight({4}, 0.7f), bias = Weight({4}, 0.3f);
  auto body = [&](const Tensor& x) {
    Dict same = Dict({{"pad_mode", Value("same")}});
    Dict train = Dict({{"is_training", Value(true)}});
    auto norm = [&](const Tensor& v) {
      Tensor mean = Filled({4}, std::vector<float>(4, 0.0f)), var = Filled({4}, std::vector<float>(4, 1.0f));
      return ops::Call("batch_norm", {v, scale, bias, mean, var}, train);
    };
    Tensor a = ops::Call1("relu", {norm(ops::Call1("conv2d", {x, w1}, same))[0]});
    std::vector<Tensor> n2 = norm(ops::Call1("conv2d", {a, w2}, same));
    Tensor y = ops::Call1("relu", {ops::Call1("add", {n2[0], x})});
    std::vector<Tensor> d = ops::Call("batch_norm_grad", {y, a, scale, n2[1], n2[2]});
    return std::vector<Tensor>{y, d[0], d[1]};
  };
  Shape shape = {3, 4, 5, 6};
  auto graph = CaptureOf(body, shape);
  ASSERT_TRUE(compiler::UseChannelsLast(*graph, DeviceTarget::kCPU));
  EXPECT_EQ(Count(*graph, "batch_norm"), std::make_pair(2, 2));
  EXPECT_EQ(Count(*graph, "batch_norm_grad"), std::make_pair(1, 1));
  EXPECT_EQ(Count(*graph, "transpose").first, 3);  // x in; y and dx out (dscale is 1-D)
  ExpectSameResults(body, shape, Filled(shape, Ramp(NumElements(shape), 0.13f)), 3);
}

}  // namespace
}  // namespace msrt
