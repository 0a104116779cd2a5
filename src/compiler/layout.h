// Channels-last activations in compiled graphs.
//
// Note [Channels-last graphs]
// oneDNN computes convolutions fastest on channels-last (NHWC) activations;
// on plain NCHW it either reorders every input and output around the
// primitive or falls back to slower implementations (at batch 256, LeNet's
// second convolution's backward data takes 1.8 ms on NCHW and 0.5 ms on
// NHWC). An eager op must hand back NCHW tensors, so it pays this on every
// call. A graph's intermediates are its own: this pass gives them the layout
// the kernels want.
//
// Ops declare how they are laid out (OpProperties::layout: a `data_format`
// attribute, which inputs and outputs are 4-D activations, which attributes
// hold an activation's shape). The pass groups into regions the layout ops
// whose NHWC form has a kernel on the device and the pure elementwise ops
// (any layout will do for them when every operand has the output's shape or
// one element) that are connected through activations. A region that holds
// an op preferring channels-last (props.layout->prefers_channels_last: the
// convolutions) runs in NHWC: its layout ops get data_format "NHWC", its
// activations are stored transposed, and a `transpose` (or, when only
// size-1 axes move, a `reshape`) converts a value where it crosses the
// region's edge, once per value, right before its first use across the
// edge. Graph outputs stay NCHW, so results do not change; values written in
// place are left alone, and an op that updates some of its inputs in place
// (batch_norm's running statistics) joins a region only when none of those
// is an activation. `graph_kernel_flags="--disable_pass=channels_last"`
// turns the pass off.
#pragma once

#include <string>

#include "ir/graph.h"

namespace msrt::compiler {

inline constexpr std::string_view kChannelsLastPass = "channels_last";

struct LayoutStats {
  size_t channels_last_ops = 0;   // ops that run on NHWC activations
  size_t layout_conversions = 0;  // transposes (or reshapes) added at regions' edges
};

/// Runs the regions of `graph` that hold convolutions channels-last (Note
/// [Channels-last graphs]). Appends a line saying what changed to `report`,
/// and adds to `stats`, if given. Returns whether the graph changed.
bool UseChannelsLast(ir::Graph& graph, DeviceTarget device, std::string* report = nullptr,
                     LayoutStats* stats = nullptr);

}  // namespace msrt::compiler
