// float16 held in float32 (compiler/half_in_float32.h): which nodes compute
// in float32, where roundings and conversions go, and that results keep
// their bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "compiler/capture_test_util.h"
#include "compiler/half_in_float32.h"
#include "runtime/graph_executor.h"

namespace msrt {
namespace {

using compiler::testing::CaptureOf;
using compiler::testing::Filled;
using compiler::testing::Read;

Tensor Cast(const Tensor& t, DType dtype) {
  return ops::Call1("cast", {t}, Dict({{"dtype", Value(std::string(DTypeAttrName(dtype)))}}));
}

int CountOps(const ir::Graph& graph, std::string_view op) {
  int count = 0;
  for (const ir::Node& n : graph.nodes()) count += n.kind == ir::NodeKind::kOp && n.op->name == op;
  return count;
}

// Op nodes other than casts that still compute on or produce float16.
int Float16Ops(const ir::Graph& graph) {
  int count = 0;
  for (const ir::Node& n : graph.nodes()) {
    if (n.kind != ir::NodeKind::kOp || n.op->name == "cast") continue;
    bool half = false;
    for (const auto& m : n.outputs) half |= m.dtype == DType::kFloat16;
    for (const ir::ValueRef& v : n.inputs) half |= graph.Meta(v).dtype == DType::kFloat16;
    count += half;
  }
  return count;
}

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<float> v = Read(t.dtype() == DType::kFloat32 ? t : Cast(t, DType::kFloat32));
  std::vector<uint32_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

// Values over float16's range, its subnormals and ties.
Tensor Input(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::sin(0.7f * static_cast<float>(i)) * 300.0f;
  v[0] = 1e-6f;
  v[1] = -3e-8f;
  v[2] = 1.0f + 1.0f / 2048.0f;
  return Filled({n}, v);
}

// The outputs' bits agree; with `zero_signs`, a zero may have the other sign
// (a relu after which the rounding moved: Note [float16 held in float32]).
void ExpectSameBits(const std::shared_ptr<ir::Graph>& plain, const std::shared_ptr<ir::Graph>& held, const Tensor& x,
                    bool zero_signs = false) {
  runtime::GraphExecutable a(plain, {}), b(held, {});
  std::vector<Tensor> want = a.Run({x}), got = b.Run({x});
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
    std::vector<uint32_t> w = Bits(want[i]), g = Bits(got[i]);
    ASSERT_EQ(w.size(), g.size());
    for (size_t k = 0; k < w.size(); ++k) {
      const bool zeros = (w[k] & 0x7fffffffu) == 0 && (g[k] & 0x7fffffffu) == 0;
      if (!(zero_signs && zeros)) {
        EXPECT_EQ(g[k], w[k]) << "output " << i << " element " << k;
      }
    }
  }
}

TEST(Float16InFloat32, ArithmeticRunsInFloat32WithARoundingAfterEachResult) {
  auto body = [](const Tensor& x) {
    Tensor h = Cast(x, DType::kFloat16);
    Tensor p = ops::Call1("mul", {h, h});  // overflows float16 past 65504
    Tensor e = ops::Call1("div", {ops::Call1("add", {p, h}), h});
    return std::vector<Tensor>{p, Cast(ops::Call1("reduce_sum", {e}), DType::kFloat32)};
  };
  auto plain = CaptureOf(body, {70});
  auto held = CaptureOf(body, {70});
  compiler::PassContext context;
  ASSERT_TRUE(compiler::HoldFloat16InFloat32(*held, context));
  ir::Verify(*held, "float16_in_float32");
  EXPECT_EQ(Float16Ops(*held), 0) << ir::PrintText(*held);
  // The cast to float16 and mul, add, div, reduce_sum each round; the cast back disappears; p leaves as float16.
  EXPECT_EQ(CountOps(*held, "round_to_float16"), 5) << ir::PrintText(*held);
  EXPECT_EQ(context.float16_roundings, 5u);
  EXPECT_EQ(context.float16_conversions, 1u);
  EXPECT_EQ(context.float16_in_float32_ops, 6u);
  EXPECT_EQ(context.float16_kept, "");
  EXPECT_NE(context.decisions.find("float16_in_float32: 6 ops"), std::string::npos) << context.decisions;
  ExpectSameBits(plain, held, Input(70));
}

TEST(Float16InFloat32, ARoundingMovesPastReluItsOnlyReader) {
  auto body = [](const Tensor& x) {
    Tensor h = Cast(ops::Call1("mul", {x, x}), DType::kFloat16);
    Tensor r = ops::Call1("relu", {ops::Call1("neg", {h})});
    return std::vector<Tensor>{Cast(r, DType::kFloat32)};
  };
  auto plain = CaptureOf(body, {33});
  auto held = CaptureOf(body, {33});
  compiler::PassContext context;
  ASSERT_TRUE(compiler::HoldFloat16InFloat32(*held, context));
  ir::Verify(*held, "float16_in_float32");
  // mul -> neg -> relu -> one rounding, of relu's result, in relu's loop (a fused node: relu, round).
  ASSERT_EQ(CountOps(*held, "round_to_float16"), 1) << ir::PrintText(*held);
  for (const ir::Node& n : held->nodes()) {
    if (n.kind == ir::NodeKind::kOp && n.op->name == "round_to_float16") {
      ASSERT_EQ(n.fused.size(), 2u) << ir::PrintText(*held);
      EXPECT_EQ(n.fused[0].op->name, "relu");
      EXPECT_EQ(held->node(n.inputs[0].node).op->name, "neg");
    }
    if (n.kind == ir::NodeKind::kOp && n.op->name == "neg") {
      EXPECT_EQ(held->node(n.inputs[0].node).op->name, "mul");
    }
  }
  EXPECT_NE(context.decisions.find("(1 inside their producer's loop)"), std::string::npos) << context.decisions;
  // Tiny products round to zero: -x*x is -0 in float16 before relu, a tiny negative here, and relu keeps -0.
  ExpectSameBits(plain, held, Input(33), /*zero_signs=*/true);
}

TEST(Float16InFloat32, ARoundingMovesPastAReshapeThatReadsOnlyItsShapeFromAnotherInput) {
  auto body = [](const Tensor& x) {
    Tensor h = Cast(x, DType::kFloat16);
    // `like` is read for its shape alone: its rounding is never made.
    Tensor like = ops::Call1("reshape", {ops::Call1("exp", {h})}, Dict{{"shape", Value(List{16})}});
    // The product's rounding waits past reshape_like (whose `like` is meta-only).
    Tensor r = ops::Call1("reshape_like", {ops::Call1("matmul", {h, h}), like});
    return std::vector<Tensor>{ops::Call1("div", {Cast(r, DType::kFloat32), Filled({}, {0.5f})})};
  };
  auto plain = CaptureOf(body, {4, 4});
  auto held = CaptureOf(body, {4, 4});
  compiler::PassContext context;
  ASSERT_TRUE(compiler::HoldFloat16InFloat32(*held, context));
  ir::Verify(*held, "float16_in_float32");
  // The cast's rounding and the product's, after reshape_like; none of exp's result.
  EXPECT_EQ(context.float16_roundings, 2u) << ir::PrintText(*held);
  bool seen = false;
  for (const ir::Node& n : held->nodes()) {
    if (n.kind != ir::NodeKind::kOp) continue;
    if (n.op->name == "reshape_like") {
      EXPECT_EQ(held->node(n.inputs[0].node).op->name, "matmul") << ir::PrintText(*held);
    }
    if (n.op->name == "div") {
      const ir::Node& rounding = held->node(n.inputs[0].node);
      ASSERT_EQ(rounding.op->name, "round_to_float16") << ir::PrintText(*held);
      EXPECT_EQ(held->node(rounding.inputs[0].node).op->name, "reshape_like") << ir::PrintText(*held);
      seen = true;
    }
  }
  EXPECT_TRUE(seen) << ir::PrintText(*held);
  std::vector<float> v = Read(Input(16));
  for (float& e : v) e /= 50.0f;
  ExpectSameBits(plain, held, Filled({4, 4}, v));
}

TEST(Float16InFloat32, OnlyOnTheCpuAndOnlyWithFloat16) {
  auto half = [](const Tensor& x) {
    return std::vector<Tensor>{Cast(ops::Call1("exp", {Cast(x, DType::kFloat16)}), DType::kFloat32)};
  };
  auto graph = CaptureOf(half, {4});
  compiler::PassContext gpu;
  gpu.device = DeviceTarget::kGPU;
  EXPECT_FALSE(compiler::HoldFloat16InFloat32(*graph, gpu));
  auto plain = [](const Tensor& x) { return std::vector<Tensor>{ops::Call1("exp", {x})}; };
  auto float32 = CaptureOf(plain, {4});
  compiler::PassContext cpu;
  EXPECT_FALSE(compiler::HoldFloat16InFloat32(*float32, cpu));
  EXPECT_EQ(cpu.float16_in_float32_ops, 0u);
}

TEST(Float16InFloat32, DeclarationsFollowKernels) {
  // Elementwise ops round by default; moves are exact; products and reductions are declared.
  EXPECT_EQ(compiler::HalfComputeOf(ops::GetOp("exp")), ops::HalfCompute::kRoundedFloat32);
  EXPECT_EQ(compiler::HalfComputeOf(ops::GetOp("relu")), ops::HalfCompute::kExact);
  EXPECT_EQ(compiler::HalfComputeOf(ops::GetOp("transpose")), ops::HalfCompute::kExact);
  EXPECT_EQ(compiler::HalfComputeOf(ops::GetOp("matmul")), ops::HalfCompute::kRoundedFloat32);
  EXPECT_EQ(compiler::HalfComputeOf(ops::GetOp("print")), ops::HalfCompute::kUndeclared);
}

}  // namespace
}  // namespace msrt
