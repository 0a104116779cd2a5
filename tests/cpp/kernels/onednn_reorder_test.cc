// Small reorders by offset table (Note [Small reorders]): the same bytes as
// oneDNN's reorder primitive, padding zeroed, and the primitive kept for
// what the table does not take.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/onednn_common.h"
#include "msrt/tensor/tensor.h"

namespace msrt {
namespace {

namespace dn = kernels::onednn;
using dnnl::memory;

std::vector<float> Counting(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>(i) - 7.0f;
  return v;
}

// What oneDNN's reorder primitive writes for `from` -> `to`; `to` starts as NaNs.
std::vector<float> PrimitiveReorder(const memory::desc& from, const memory::desc& to, std::vector<float> source) {
  std::vector<float> out(to.get_size() / sizeof(float), std::numeric_limits<float>::quiet_NaN());
  memory src(from, dn::Engine(), source.data());
  memory dst(to, dn::Engine(), out.data());
  dnnl::reorder(src, dst).execute(dn::Stream(), src, dst);
  dn::Stream().wait();
  return out;
}

std::vector<float> TableReorder(const dn::OffsetReorder& table, const memory::desc& to, const std::vector<float>& src) {
  std::vector<float> out(to.get_size() / sizeof(float), std::numeric_limits<float>::quiet_NaN());
  table.Run(src.data(), out.data());
  return out;
}

void ExpectSameBytes(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(OffsetReorder, BlockedWeightsMatchThePrimitiveBothWaysWithPaddingZeroed) {
  // 6 x 3 filters in 16-wide blocks: most of the blocked buffer is padding.
  memory::dims dims{6, 3, 5, 5};
  memory::desc plain = dn::PlainDesc(dims, DType::kFloat32);
  memory::desc blocked(dims, memory::data_type::f32, memory::format_tag::ABcd16b16a);
  ASSERT_GT(blocked.get_size(), plain.get_size());
  std::vector<float> weights = Counting(plain.get_size() / sizeof(float));

  dn::OffsetReorder in = dn::OffsetReorder::Build(plain, blocked);
  ASSERT_FALSE(in.empty());
  std::vector<float> placed = TableReorder(in, blocked, weights);
  ExpectSameBytes(placed, PrimitiveReorder(plain, blocked, weights));
  size_t zeros = 0;
  for (float v : placed) zeros += v == 0.0f;
  EXPECT_GE(zeros, placed.size() - weights.size());  // every padding element written, as 0

  dn::OffsetReorder out = dn::OffsetReorder::Build(blocked, plain);
  ASSERT_FALSE(out.empty());
  ExpectSameBytes(TableReorder(out, plain, placed), weights);
}

TEST(OffsetReorder, ChannelsLastAndTransposedLayoutsMatchThePrimitive) {
  memory::dims dims{2, 5, 4, 3};
  memory::desc nchw = dn::PlainDesc(dims, DType::kFloat32);
  memory::desc nhwc = dn::ActivationDesc(dims, DType::kFloat32, /*channels_last=*/true);
  std::vector<float> x = Counting(nchw.get_size() / sizeof(float));
  ExpectSameBytes(TableReorder(dn::OffsetReorder::Build(nchw, nhwc), nhwc, x), PrimitiveReorder(nchw, nhwc, x));
  ExpectSameBytes(TableReorder(dn::OffsetReorder::Build(nhwc, nchw), nchw, x), PrimitiveReorder(nhwc, nchw, x));
}

TEST(OffsetReorder, LargeBfloat16AndGappedDestinationsKeepThePrimitive) {
  memory::dims large{64, 64, 3, 3};  // 36864 elements
  EXPECT_TRUE(dn::OffsetReorder::Build(dn::PlainDesc(large, DType::kFloat32),
                                       memory::desc(large, memory::data_type::f32, memory::format_tag::ABcd16b16a))
                  .empty());
  memory::dims small{4, 4};
  memory::desc bf16(small, memory::data_type::bf16, memory::format_tag::ab);
  memory::desc bf16_t(small, memory::data_type::bf16, memory::format_tag::ba);
  EXPECT_TRUE(dn::OffsetReorder::Build(bf16, bf16_t).empty());
  // A 4 x 4 view with rows 8 apart: its gaps belong to someone else.
  memory::desc gapped = dn::StridedDesc(small, {8, 1}, DType::kFloat32);
  EXPECT_TRUE(dn::OffsetReorder::Build(dn::StridedDesc(small, {1, 4}, DType::kFloat32), gapped).empty());
  EXPECT_FALSE(dn::OffsetReorder::Build(gapped, dn::PlainDesc(small, DType::kFloat32)).empty());
}

TEST(OffsetReorder, LayoutInAndFinishRoundTripThroughTheChosenLayout) {
  memory::dims dims{6, 3, 5, 5};
  memory::desc plain = dn::PlainDesc(dims, DType::kFloat32);
  memory::desc blocked(dims, memory::data_type::f32, memory::format_tag::ABcd16b16a);
  std::vector<float> values = Counting(plain.get_size() / sizeof(float));
  Tensor t = Tensor::FromHost(values.data(), values.size() * sizeof(float), {6, 3, 5, 5}, DType::kFloat32);
  dn::Scratch scratch;
  memory in = dn::Layout::Input(plain, blocked).In(t, scratch);
  std::vector<float> placed(blocked.get_size() / sizeof(float));
  std::memcpy(placed.data(), in.get_data_handle(), blocked.get_size());
  ExpectSameBytes(placed, PrimitiveReorder(plain, blocked, values));

  Tensor back = Tensor::Empty({6, 3, 5, 5}, DType::kFloat32);
  dn::Layout output = dn::Layout::Output(plain, blocked);
  memory written = output.Out(back, scratch);
  std::memcpy(written.get_data_handle(), placed.data(), blocked.get_size());
  output.Finish(written, back);
  EXPECT_EQ(std::memcmp(back.raw(), values.data(), values.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace msrt
