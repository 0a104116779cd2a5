// Helpers for gradient rules and composites, which are written in ops.
//
// Everything here goes through ops::Call, so it runs on the same dispatcher
// (or is captured into the same graph) as the ops it differentiates.
#pragma once

#include <vector>

#include "ops/call.h"

namespace msrt::ops {

/// Sums `grad` over the dimensions that broadcasting added or expanded to
/// get it back to `shape` (reduce_sum, then reshape). Returns `grad` itself
/// when it already has that shape.
Tensor SumToShape(const Tensor& grad, const Shape& shape);

/// SumToShape to `input`'s shape, then cast to `input`'s dtype when that is
/// a different floating type (a float32 input broadcast against float64
/// gets a float32 gradient).
Tensor GradFor(const Tensor& grad, const Tensor& input);

/// Whether gradients flow through values of `dtype`: floating and complex ones.
bool Differentiable(DType dtype);

/// The shape `x` has after reducing `axes` (normalised, sorted) with keep_dims.
Shape KeepDimsShape(const Shape& shape, const std::vector<int64_t>& axes);

/// Normalised, sorted, de-duplicated reduction axes from an `axis` attribute
/// (empty = all axes); ValueError for out-of-range or repeated axes.
std::vector<int64_t> ReductionAxes(std::string_view op, const std::vector<int64_t>& axis, int64_t ndim);

/// Short spellings of the ops gradient rules use most.
namespace fn {
Tensor Scalar(double value, const Tensor& like);  // 0-d tensor of like's dtype
Tensor Add(const Tensor& a, const Tensor& b);
Tensor Sub(const Tensor& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Tensor& b);
Tensor Div(const Tensor& a, const Tensor& b);
Tensor Neg(const Tensor& a);
Tensor Square(const Tensor& a);
Tensor Exp(const Tensor& a);
Tensor Log(const Tensor& a);
Tensor Cast(const Tensor& a, DType dtype);
Tensor Conj(const Tensor& a);  // the complex conjugate; `a` itself when real
Tensor Select(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor Greater(const Tensor& a, const Tensor& b);
Tensor Equal(const Tensor& a, const Tensor& b);
Tensor Reshape(const Tensor& a, const Shape& shape);
Tensor BroadcastTo(const Tensor& a, const Shape& shape);
Tensor ReduceSum(const Tensor& a, const std::vector<int64_t>& axes, bool keep_dims);
Tensor ZerosLike(const Tensor& a);
Tensor OnesLike(const Tensor& a);
Tensor Transpose(const Tensor& a, const std::vector<int64_t>& perm);
Tensor Softmax(const Tensor& a, int64_t axis);
Tensor OneHot(const Tensor& indices, int64_t depth, DType dtype);
Tensor ExpandDims(const Tensor& a, int64_t axis);
Tensor Concat(const std::vector<Tensor>& xs, int64_t axis);
Tensor Gather(const Tensor& params, const Tensor& indices, int64_t axis);
Tensor Fill(const Shape& shape, double value, DType dtype);
/// A tensor made from host data (for index tables built by gradient rules).
Tensor Int64Tensor(const std::vector<int64_t>& values);
}  // namespace fn

}  // namespace msrt::ops
