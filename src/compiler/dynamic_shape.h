// Graphs compiled once for inputs whose dimensions vary (Cell.set_inputs or
// jit(input_signature=...) with None in a shape).
//
// Note [Dynamic shapes]
// Capture runs Python, and Python may turn a dimension into a number the
// graph keeps (`reshape(x, (x.shape[0], -1))` bakes it into an attribute,
// `if x.shape[0] > 4:` into the program's structure). A graph is therefore
// only compiled for every size once it is shown not to depend on the sizes:
//  1. The front end (msrt/_jit.py) captures the body twice, with every
//     dynamic dimension at kProbeSizes[0] and then at kProbeSizes[1] (never 1,
//     which broadcasts). The second capture watches what Python reads of the
//     shapes: a dimension that differs from the first capture's read is handed
//     to Python as a value whose every use (arithmetic, comparison, hashing,
//     conversion) marks the capture as size-dependent.
//  2. GeneralizeGraphs compares the two graphs: the same nodes, ops, inputs,
//     attributes, constants (by value) and weights (by identity); output
//     shapes may differ only in their dimensions, which become kDynamicDim
//     (-1 in the IR text). Anything else is a reason, and the front end
//     compiles one graph per shape instead, with a warning naming it.
//  3. The generalized graph goes through the passes, layout and fusion once
//     (passes treat a dynamic dimension as unknown: no folding, no one-element
//     broadcast assumed).
//  4. At run time the executor re-runs shape inference for the call's input
//     shapes (Note [Graph execution]): every static dimension must come out as
//     compiled and values the graph gives one shape must get one shape (what
//     the passes may have relied on), else a RuntimeError names the node;
//     kernels and the memory plan are then made for those shapes and cached.
// Gradient rules keep sizes out of attributes where they can (reductions
// spread back with expand_dims and a multiply, reshapes go back through
// reshape_like), so training graphs generalize too. What remains size-bound
// -- an attribute computed from a shape, indexing with Python slices, which
// resolve to sizes -- compiles per shape. A data-dependent output shape
// (unique) is refused by graph capture altogether.
#pragma once

#include <array>
#include <memory>

#include "ir/graph.h"

namespace msrt::compiler {

/// The two sizes the front end captures dynamic dimensions with.
inline constexpr std::array<int64_t, 2> kProbeSizes = {13, 19};

/// The graph `a` with kDynamicDim where `a` and `b` (captures of one body at
/// two sizes) differ in an output dimension; ValueError with the reason when
/// they differ in anything else.
std::shared_ptr<ir::Graph> GeneralizeGraphs(const ir::Graph& a, const ir::Graph& b);

}  // namespace msrt::compiler
