// Casts folded into ops that take half-precision data beside float32.
//
// Note [Casts folded into mixed-precision ops]
// Mixed precision keeps some ops in float32 inside a float16 or bfloat16
// network (amp level O2's BatchNorm): their half input is cast to float32
// and their result cast back, and the gradient does the same around their
// backward op. Each cast is a pass over an activation, and the float32 op
// reads and writes twice the bytes. An op that declares
// OpProperties::mixed_precision computes, given half values for its
// half_inputs, as its float32 form on the widened values, and rounds each
// half_output once: so when every half_input is a cast to float32 of values
// of one half dtype, and every use of every half_output is a cast back to
// that dtype, the op may read the half values and write the half results
// itself. The result is the same bits; the casts from the half values that
// nothing else reads, and the casts of the results, go away. The fold
// happens only where a kernel of the device takes the half form, and not
// where the half value is written in place between its cast and the op.
// On a CPU float16 graph this pass runs after the float16 values are held
// in float32 (Note [float16 held in float32]), so it meets the casts that
// pass leaves (bfloat16 ones, chiefly).
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"
#include "msrt/core/device.h"

namespace msrt::compiler {

inline constexpr std::string_view kFoldPrecisionCastsPass = "fold_precision_casts";

/// Folds the casts around ops with OpProperties::mixed_precision (Note
/// [Casts folded into mixed-precision ops]); appends a line per folded op to
/// `report` when given. Returns whether the graph changed.
bool FoldPrecisionCasts(ir::Graph& graph, DeviceTarget device, std::string* report);

}  // namespace msrt::compiler
