// Graph-kernel fusion (see Note [Elementwise fusion] in fusion.cc).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace msrt::compiler {

/// Fuses chains of elementwise ops whose kernels on `device` are plain
/// vectorised loops. Appends one line per fused chain to `report` if given.
bool FuseElementwise(ir::Graph& graph, DeviceTarget device, std::string* report = nullptr);

/// Whether node `id` can run inside a fused elementwise loop on `device`: a
/// live, unfused, non-random elementwise op of one output without side
/// effects, whose operands have its shape or one element, and whose kernel
/// there is a plain vectorised loop.
bool RunsInFusedLoop(const ir::Graph& graph, int32_t id, DeviceTarget device);

/// Moves unary elementwise ops that follow an op with props.accepts_epilogue
/// (conv2d, matmul, dense) into that op's kernel (kernels::kEpilogueAttr,
/// oneDNN post-ops on CPU) when the result is not used otherwise and the
/// kernel chosen for it supports them. With `in_place_tails`, an op the
/// kernel cannot apply (and every op after it) runs with its own kernel on
/// that output in place, right after it, after any op that writes its output
/// 0 fresh (kernels::kInPlaceTailAttr, Note [In-place tails] in fusion.cc).
bool FuseEpilogues(ir::Graph& graph, DeviceTarget device, std::string* report = nullptr, bool in_place_tails = false);

/// Replaces a producer and its single consumer by the op that declares it is
/// the two (props.fuses: conv2d then bias_add is conv2d_bias), Note [Fused
/// pairs] in fusion.cc. Appends one line per pair to `report` if given.
bool FusePairs(ir::Graph& graph, DeviceTarget device, std::string* report = nullptr);

/// The positions of the ops of `graph` that write each value in place, for
/// passes that move an op across others: Between(v, after, before) says
/// whether an op strictly between positions `after` and `before` writes v.
/// Made from the graph as it is; a pass that moves nodes makes a new one.
class InPlaceWrites {
 public:
  explicit InPlaceWrites(const ir::Graph& graph);
  bool Between(ir::ValueRef v, int32_t after, int32_t before) const;

 private:
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> positions_;
};

}  // namespace msrt::compiler
