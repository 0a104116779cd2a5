#include "ops/grad_utils.h"

#include <algorithm>

namespace msrt::ops {
namespace {}  // namespace

Tensor SumToShape(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const Shape& g = grad.shape();
  MSRT_INTERNAL_ASSERT(g.size() >= shape.size(), "SumToShape: gradient ", ShapeRepr(g), " has fewer dims than ",
                       ShapeRepr(shape));
  const size_t lead = g.size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < g.size(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && g[i] != 1)) {
      axes.push_back(static_cast<int64_t>(i));
    } else {
      MSRT_INTERNAL_ASSERT(shape[i - lead] == g[i], "SumToShape: ", ShapeRepr(g), " does not broadcast from ",
                           ShapeRepr(shape));
    }
  }
  Tensor summed = axes.empty() ? grad : fn::ReduceSum(grad, axes, false);
  return summed.shape() == shape ? summed : fn::Reshape(summed, shape);
}

Tensor GradFor(const Tensor& grad, const Tensor& input) {
  Tensor g = SumToShape(grad, input.shape());
  // A real input of a complex result gets the real part, as in PyTorch.
  if (g.dtype() != input.dtype() && Differentiable(input.dtype())) g = fn::Cast(g, input.dtype());
  return g;
}

bool Differentiable(DType dtype) { return IsFloating(dtype) || IsComplex(dtype); }

Shape KeepDimsShape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape out = shape;
  for (int64_t a : axes) out[static_cast<size_t>(a)] = 1;
  return out;
}

std::vector<int64_t> ReductionAxes(std::string_view op, const std::vector<int64_t>& axis, int64_t ndim) {
  std::vector<int64_t> out;
  if (axis.empty()) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : axis) {
    int64_t n = NormalizeAxis(op, a, ndim);
    if (ndim == 0) continue;  // a 0-d tensor reduces to itself
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      OpError(ErrorKind::kValue, op,
              StrCat("axis ", a, " is repeated in 'axis'; expected distinct axes, but got ", IntList(axis).repr()));
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace fn {

Tensor Scalar(double value, const Tensor& like) { return Tensor::Scalar(value, like.dtype()); }
Tensor Add(const Tensor& a, const Tensor& b) { return Call1("add", {a, b}); }
Tensor Sub(const Tensor& a, const Tensor& b) { return Call1("sub", {a, b}); }
Tensor Mul(const Tensor& a, const Tensor& b) { return Call1("mul", {a, b}); }
Tensor Div(const Tensor& a, const Tensor& b) { return Call1("div", {a, b}); }
Tensor Neg(const Tensor& a) { return Call1("neg", {a}); }
Tensor Square(const Tensor& a) { return Call1("square", {a}); }
Tensor Exp(const Tensor& a) { return Call1("exp", {a}); }
Tensor Log(const Tensor& a) { return Call1("log", {a}); }
Tensor Conj(const Tensor& a) { return IsComplex(a.dtype()) ? Call1("conj", {a}) : a; }
Tensor Cast(const Tensor& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  return Call1("cast", {a}, Dict{{"dtype", Value(std::string(DTypeAttrName(dtype)))}});
}
Tensor Select(const Tensor& condition, const Tensor& a, const Tensor& b) { return Call1("select", {condition, a, b}); }
Tensor Greater(const Tensor& a, const Tensor& b) { return Call1("greater", {a, b}); }
Tensor Equal(const Tensor& a, const Tensor& b) { return Call1("equal", {a, b}); }
Tensor Reshape(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  return Call1("reshape", {a}, Dict{{"shape", IntList(shape)}});
}
Tensor BroadcastTo(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  return Call1("broadcast_to", {a}, Dict{{"shape", IntList(shape)}});
}
Tensor ReduceSum(const Tensor& a, const std::vector<int64_t>& axes, bool keep_dims) {
  return Call1("reduce_sum", {a}, Dict{{"axis", IntList(axes)}, {"keep_dims", Value(keep_dims)}});
}
Tensor ZerosLike(const Tensor& a) { return Call1("zeros_like", {a}); }
Tensor OnesLike(const Tensor& a) { return Call1("ones_like", {a}); }
Tensor Transpose(const Tensor& a, const std::vector<int64_t>& perm) {
  return Call1("transpose", {a}, Dict{{"perm", IntList(perm)}});
}
Tensor Softmax(const Tensor& a, int64_t axis) { return Call1("softmax", {a}, Dict{{"axis", Value(axis)}}); }
Tensor OneHot(const Tensor& indices, int64_t depth, DType dtype) {
  return Call1("one_hot", {indices},
               Dict{{"depth", Value(depth)}, {"dtype", Value(std::string(DTypeAttrName(dtype)))}});
}
Tensor ExpandDims(const Tensor& a, int64_t axis) { return Call1("expand_dims", {a}, Dict{{"axis", Value(axis)}}); }
Tensor Concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.size() == 1) return xs[0];
  return Call1("concat", xs, Dict{{"axis", Value(axis)}});
}
Tensor Gather(const Tensor& params, const Tensor& indices, int64_t axis) {
  return Call1("gather", {params, indices}, Dict{{"axis", Value(axis)}});
}
Tensor Fill(const Shape& shape, double value, DType dtype) {
  return Call1("fill", {},
               Dict{{"shape", IntList(shape)},
                    {"value", Value(value)},
                    {"dtype", Value(std::string(DTypeAttrName(dtype)))}});
}
Tensor Int64Tensor(const std::vector<int64_t>& values) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(int64_t), {static_cast<int64_t>(values.size())},
                          DType::kInt64);
}

}  // namespace fn
}  // namespace msrt::ops
