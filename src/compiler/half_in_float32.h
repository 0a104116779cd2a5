// float16 values held in float32 in compiled CPU graphs.
//
// Note [float16 held in float32]
// CPUs without float16 arithmetic (msrt's CPU kernels never compute in
// float16) run every float16 kernel as: widen the inputs to float32, compute
// in float32, round each output to the nearest float16 (Note [Half blocks],
// Note [float16 products]). Inside a graph the widening and narrowing of
// every op, and amp's casts, are pure cost: the values a float16 graph
// computes are float16 values, and a float32 buffer holds any of them
// exactly. This pass keeps a graph's float16 intermediates in float32
// buffers that hold only float16 values:
//   - an op that declares how its float16 kernels compute
//     (OpProperties::half_compute; elementwise ops by default) runs its
//     float32 kernel on the held values; a `round_to_float16` after it rounds
//     each float16 result as its float16 kernel would (round to nearest
//     even, overflow to infinity, float16's subnormals), unless the op is
//     kExact (it moves, selects or compares elements);
//   - a cast to float16 becomes that rounding, a cast from float16 to
//     float32 disappears (dtype attributes saying float16 say float32);
//   - values the caller sees (graph inputs and outputs, weights, constants)
//     and values an op writes in place stay float16; a `cast` converts
//     between the two forms where they meet an op that keeps float16
//     (undeclared ops, random ops, side effects), once per value, right
//     before its first use there. The conversion is exact both ways.
// A rounding waits where it is first read: when its only reader is a
// kExact op reading the elements of that value alone (relu, max pooling, a
// reshape, reshape_like, whose `like` is meta-only), which commutes with
// rounding, that op reads the unrounded value and the rounding moves after
// it; relu then meets its producer (a BatchNorm or matmul epilogue, as in
// float32 graphs) and pooling rounds its smaller result. A meta-only input
// is never rounded for its reader.
// Each rounded result is what the float16 kernel would store, so values,
// infinities (a dynamic loss scale's overflow test) and NaNs stay those of
// the float16 graph. Two caveats: where an op's float32 and float16 kernels
// order a sum differently (the float16 products split their work into
// single-thread slices), the float32 sums may differ in their last bits
// before rounding, as two float32 runs with other thread counts may; and a
// relu that meets a result rounding to zero from below may give -0 where
// the float16 graph gave +0 or the reverse (as the float16 graph's own
// relu epilogues do), equal values that no later op tells apart but a sign.
// Only on CPU; `graph_kernel_flags="--disable_pass=float16_in_float32"`
// turns it off.
#pragma once

#include <string>

#include "compiler/pass_manager.h"
#include "ir/graph.h"

namespace msrt::compiler {

inline constexpr std::string_view kFloat16InFloat32Pass = "float16_in_float32";

/// How `op`'s float16 results follow from its float32 ones (its declared
/// half_compute; kRoundedFloat32 for an undeclared elementwise op).
ops::HalfCompute HalfComputeOf(const ops::OpDef& op);

/// Holds the float16 intermediates of `graph` in float32 (Note [float16 held
/// in float32]) when `context.device` is the CPU. Appends a line saying what
/// changed to `context.decisions` and fills its float16_* counts. Returns
/// whether the graph changed.
bool HoldFloat16InFloat32(ir::Graph& graph, PassContext& context);

}  // namespace msrt::compiler
