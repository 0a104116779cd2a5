// Cumulative ops: cumsum and cumprod along an axis (inclusive or exclusive,
// forward or reversed), and cumprod's gradient, which is exact with zeros.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

const AttrSpec kScanAxisAttr{.name = "axis",
                             .default_value = Value(),
                             .doc = "the axis; None: along the flattened tensor",
                             .type = AttrType::kInt,
                             .optional = true};
const AttrSpec kExclusiveAttr{"exclusive", false, "element i leaves out x[i] (the first is the identity)",
                              AttrType::kBool};
const AttrSpec kReverseAttr{"reverse", false, "accumulate from the end of the axis", AttrType::kBool};
const AttrSpec kScanDTypeAttr{.name = "dtype",
                              .default_value = Value(),
                              .doc = "the dtype x is cast to first (None: x's)",
                              .type = AttrType::kDType,
                              .optional = true};

InferFn ScanInfer(std::string_view op) {
  return [op](const Metas& in, const Dict& attrs) {
    CheckDType(op, "x", in[0], DTypeClass::kNumber);
    DType dtype = Attr(attrs, "dtype").is_none() ? in[0].dtype : DTypeAttr(op, attrs, "dtype");
    if (dtype == DType::kBool) {
      OpError(ErrorKind::kType, op,
              "attribute 'dtype' must be a number type; expected an int or float dtype, but got bool");
    }
    if (Attr(attrs, "axis").is_none()) return Metas{{{NumElements(in[0].shape)}, dtype}};
    // A 0-d tensor is scanned as one element (axis 0 or -1).
    NormalizeAxis(op, IntAttr(op, attrs, "axis"), std::max<int64_t>(static_cast<int64_t>(in[0].shape.size()), 1));
    return Metas{{in[0].shape, dtype}};
  };
}

// The gradient rule's view: x cast to the output's dtype, along one axis
// (flattened when the op's axis is None), and the attributes for that axis.
struct ScanView {
  Tensor x;
  Dict attrs;
};
ScanView ViewOf(std::string_view op, const GradArgs& a) {
  Tensor x = a.inputs[0];
  if (x.dtype() != a.outputs[0].dtype()) x = fn::Cast(x, a.outputs[0].dtype());
  int64_t axis = 0;
  if (Attr(a.attrs, "axis").is_none() || x.ndim() == 0) {
    x = fn::Reshape(x, {x.numel()});
  } else {
    axis = NormalizeAxis(op, AttrInt(a.attrs, "axis"), x.ndim());
  }
  return {x, Dict{{"axis", Value(axis)},
                  {"exclusive", Attr(a.attrs, "exclusive")},
                  {"reverse", Attr(a.attrs, "reverse")},
                  {"dtype", Value()}}};
}

// The scan's gradient (in the view's shape) back to x's shape and dtype.
Tensor BackToInput(const Tensor& g, const Tensor& x) {
  Tensor out = fn::Reshape(g, x.shape());
  return out.dtype() == x.dtype() ? out : fn::Cast(out, x.dtype());
}

MSRT_REGISTER_OP({.name = "cumsum",
                  .inputs = {"x"},
                  .attrs = {kScanAxisAttr, kExclusiveAttr, kReverseAttr, kScanDTypeAttr},
                  .infer = ScanInfer("cumsum"),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& x = a.inputs[0];
                    if (!a.dys[0].defined() || !IsFloating(x.dtype()) || !IsFloating(a.outputs[0].dtype())) {
                      return {Tensor()};
                    }
                    // d/dx_j of sum_i dy_i y_i: the sum of dy over the outputs x_j enters,
                    // a cumsum of dy in the other direction.
                    ScanView v = ViewOf("cumsum", a);
                    v.attrs.Set("reverse", Value(!AttrBool(a.attrs, "reverse")));
                    Tensor dy = fn::Reshape(a.dys[0], v.x.shape());
                    return {BackToInput(Call1("cumsum", {dy}, v.attrs), x)};
                  },
                  .doc = "cumulative sum along axis (exclusive: without the element itself; reverse: from the end)",
                  .api = {Function("cumsum(x, axis, dtype=None)"), Method("cumsum(self->x, axis=None, dtype=None)"),
                          Primitive("math_ops.CumSum(exclusive=False, reverse=False)(input->x, axis)")}});

MSRT_REGISTER_OP({.name = "cumprod",
                  .inputs = {"x"},
                  .attrs = {kScanAxisAttr, kExclusiveAttr, kReverseAttr, kScanDTypeAttr},
                  .infer = ScanInfer("cumprod"),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& x = a.inputs[0];
                    if (!a.dys[0].defined() || !IsFloating(x.dtype()) || !IsFloating(a.outputs[0].dtype())) {
                      return {Tensor()};
                    }
                    ScanView v = ViewOf("cumprod", a);
                    v.attrs.Erase("dtype");
                    Tensor dy = fn::Reshape(a.dys[0], v.x.shape());
                    return {BackToInput(Call1("cumprod_grad", {v.x, dy}, v.attrs), x)};
                  },
                  .doc = "cumulative product along axis (exclusive: without the element itself; reverse: from the end)",
                  .api = {Function("cumprod(input->x, dim->axis, dtype=None)"),
                          Method("cumprod(self->x, dim->axis, dtype=None)"),
                          Primitive("math_ops.CumProd(exclusive=False, reverse=False)(x, axis)")}});

// Not in the catalogue: d/dx_k of sum_i dy_i * cumprod(x)_i, computed with
// prefix products and a suffix recurrence rather than by dividing by x, so
// zeros in x give the exact gradient.
MSRT_REGISTER_OP({.name = "cumprod_grad",
                  .inputs = {"x", "dy"},
                  .attrs = {{"axis", 0, "the axis", AttrType::kInt}, kExclusiveAttr, kReverseAttr},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        constexpr std::string_view op = "cumprod_grad";
                        CheckDType(op, "x", in[0], DTypeClass::kFloat);
                        CheckSameDType(op, "x", in[0], "dy", in[1]);
                        if (in[0].shape != in[1].shape) {
                          OpError(ErrorKind::kValue, op,
                                  StrCat("'dy' must have the shape of 'x'; expected ", ShapeRepr(in[0].shape),
                                         ", but got ", ShapeRepr(in[1].shape)));
                        }
                        NormalizeAxis(op, IntAttr(op, attrs, "axis"),
                                      std::max<int64_t>(static_cast<int64_t>(in[0].shape.size()), 1));
                        return Metas{in[0]};
                      },
                  .doc = "the gradient of cumprod w.r.t. x for output gradient dy (internal)"});

}  // namespace
}  // namespace msrt::ops
