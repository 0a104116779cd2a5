// Shape arithmetic shared by the shape ops' inference, gradients and CPU
// kernels (so the kernel reads the same resolved slice the op inferred).
#pragma once

#include <vector>

#include "ops/op_def.h"

namespace msrt::ops {

/// reshape's target: one -1 is inferred; ValueError when sizes do not match.
Shape ReshapeTarget(std::string_view op, const Shape& from, const std::vector<int64_t>& to);

/// Normalised permutation of range(rank); ValueError otherwise.
std::vector<int64_t> CheckPermutation(std::string_view op, const std::vector<int64_t>& perm, int64_t rank);

/// concat's output shape; ValueError/TypeError for mismatched inputs.
Shape CheckConcat(std::string_view op, const std::vector<TensorMeta>& inputs, int64_t axis);

/// strided_slice resolved with Python's slice.indices() per axis.
struct SliceSpec {
  std::vector<int64_t> start;  // per axis of x (full axes: 0)
  std::vector<int64_t> step;   // per axis (full axes: 1)
  Shape out_shape;
};
SliceSpec ResolveSlice(const Shape& shape, const Dict& attrs);

/// broadcast_to's target (-1 keeps x's size); ValueError when x does not broadcast.
Shape BroadcastTarget(std::string_view op, const Shape& from, const std::vector<int64_t>& to);

/// `shape` with leading 1s up to multiples.size(); ValueError when multiples is shorter.
Shape PadShape(std::string_view op, const Shape& shape, const std::vector<int64_t>& multiples);

/// arange's arguments resolved (end None: from 0 to start) and checked: step
/// not 0, a finite length. Integral when no argument is a float; then the
/// values are start + i * step exactly, else NumPy's: start, start + step,
/// then start + i * ((start + step) - start), in double.
struct ArangeSpec {
  bool integral = true;
  int64_t start = 0, step = 1;   // integral
  double fstart = 0, fstep = 1;  // otherwise
  int64_t length = 0;
  DType dtype = DType::kInt64;
};
ArangeSpec ResolveArange(const Dict& attrs);

}  // namespace msrt::ops
