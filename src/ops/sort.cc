// Sorting ops: sort (values and indices), argsort, topk. NaN sorts above
// every number, and equal values keep their order (the lower index first),
// so results are deterministic. Gradients scatter dy back to the positions
// the indices name.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

// The axis of x (a 0-d tensor is one element along axis 0 or -1).
int64_t LineAxis(std::string_view op, int64_t axis, int64_t ndim) {
  return NormalizeAxis(op, axis, std::max<int64_t>(ndim, 1));
}

void CheckIndexable(std::string_view op, const Shape& shape, int64_t axis) {
  const int64_t n = shape.empty() ? 1 : shape[axis];
  if (n > INT32_MAX) {
    OpError(ErrorKind::kValue, op,
            StrCat("indices up to ", n - 1, " along axis ", axis,
                   " do not fit the int32 indices it returns; expected at most ", INT32_MAX, " elements, but got ", n));
  }
}

// dy scattered into zeros of x's shape at `indices` along `axis`.
Tensor ScatterBack(const Tensor& x, const Tensor& indices, const Tensor& dy, int64_t axis) {
  if (x.ndim() == 0) return fn::Reshape(dy, {});
  return Call1("tensor_scatter_elements", {fn::ZerosLike(x), indices, dy},
               Dict{{"axis", Value(axis)}, {"reduction", Value("add")}});
}

MSRT_REGISTER_OP({.name = "sort",
                  .inputs = {"x"},
                  .attrs = {{"axis", -1, "the axis to sort along", AttrType::kInt},
                            {"descending", false, "largest first", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        CheckDType("sort", "x", in[0], DTypeClass::kNumber);
                        int64_t axis = LineAxis("sort", IntAttr("sort", attrs, "axis"),
                                                static_cast<int64_t>(in[0].shape.size()));
                        CheckIndexable("sort", in[0].shape, axis);
                        return Metas{in[0], {in[0].shape, DType::kInt32}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& x = a.inputs[0];
                    if (!a.dys[0].defined() || !a.needs[0] || !IsFloating(x.dtype())) return {Tensor()};
                    int64_t axis = LineAxis("sort", AttrInt(a.attrs, "axis"), x.ndim());
                    return {ScatterBack(x, a.outputs[1], a.dys[0], axis)};
                  },
                  .doc = "(values, int32 indices) of x sorted along axis; stable, NaN above every number",
                  .api = {Function("sort(input_x->x, axis=-1, descending=False)"),
                          Method("sort(self->x, axis=-1, descending=False)"),
                          Primitive("array_ops.Sort(axis=-1, descending=False)(x)")}});

MSRT_REGISTER_OP({.name = "unique",
                  .inputs = {"x"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        // The most values there can be: the kernel returns as many as it finds.
                        return Metas{{{NumElements(in[0].shape)}, in[0].dtype}, {in[0].shape, DType::kInt32}};
                      },
                  .props = {.data_dependent_shape = true},
                  .doc = "(the distinct values of x in ascending order, 1-D; int32 indices of x's elements among "
                         "them, x's shape); NaNs compare equal",
                  .api = {Function("unique(input->x)"), Primitive("array_ops.Unique()(x)")}});

MSRT_REGISTER_OP({.name = "argsort",
                  .inputs = {"x"},
                  .attrs = {{"axis", -1, "the axis to sort along", AttrType::kInt},
                            {"descending", false, "largest first", AttrType::kBool}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    return {Call("sort", {in[0]}, attrs)[1]};
                  },
                  .doc = "the int32 indices that sort x along axis (stable; composite of sort)",
                  .api = {Function("argsort(input->x, axis=-1, descending=False)"),
                          Method("argsort(self->x, axis=-1, descending=False)")}});

MSRT_REGISTER_OP(
    {.name = "topk",
     .inputs = {"x"},
     .attrs = {{"k", Value(), "how many to take (0 <= k <= the axis' size)", AttrType::kInt},
               {.name = "axis",
                .default_value = -1,
                .doc = "the axis (None: the last)",
                .type = AttrType::kInt,
                .optional = true},
               {"largest", true, "the largest (else the smallest)", AttrType::kBool},
               {"sorted", true, "in order (msrt always returns them in order)", AttrType::kBool}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           constexpr std::string_view op = "topk";
           CheckDType(op, "x", in[0], DTypeClass::kNumber);
           const Value& axis_value = Attr(attrs, "axis");
           const int64_t ndim = static_cast<int64_t>(in[0].shape.size());
           const int64_t axis = LineAxis(op, axis_value.is_none() ? -1 : axis_value.as_int(), ndim);
           const int64_t n = ndim == 0 ? 1 : in[0].shape[axis];
           const int64_t k = IntAttr(op, attrs, "k");
           if (k < 0 || k > n || (ndim == 0 && k == 0)) {  // a 0-d x gives a 0-d result: k is 1
             OpError(ErrorKind::kValue, op,
                     StrCat("'k' must be in [0, ", n, "] (the size of axis ", axis, " of shape ",
                            ShapeRepr(in[0].shape), "); expected 0 <= k <= ", n, ", but got ", k));
           }
           CheckIndexable(op, in[0].shape, axis);
           Shape out = in[0].shape;
           if (ndim > 0) out[axis] = k;
           return Metas{{out, in[0].dtype}, {out, DType::kInt32}};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       const Tensor& x = a.inputs[0];
       if (!a.dys[0].defined() || !a.needs[0] || !IsFloating(x.dtype())) return {Tensor()};
       const Value& axis = Attr(a.attrs, "axis");
       return {ScatterBack(x, a.outputs[1], a.dys[0], LineAxis("topk", axis.is_none() ? -1 : axis.as_int(), x.ndim()))};
     },
     .doc = "(values, int32 indices) of the k largest (or smallest) along axis, in order; ties: the lower index first",
     .api = {Function("topk(input->x, k, dim->axis=None, largest=True, sorted=True)"),
             Method("topk(self->x, k, dim->axis=None, largest=True, sorted=True)"),
             Primitive("nn_ops.TopK(sorted=True)(input_x->x, k)")}});

}  // namespace
}  // namespace msrt::ops
