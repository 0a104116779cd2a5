// Element-wise indexing along an axis: gather_elements (GatherD) and
// tensor_scatter_elements (scatter), with each other as gradients; and the
// masking composites masked_fill, tril and triu.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

// `index` against `x` along `axis`: index dtype int32/int64, the same rank
// (at least 1), and no larger than x along the other axes. Returns the axis.
int64_t CheckElementIndex(std::string_view op, const TensorMeta& x, std::string_view index_name,
                          const TensorMeta& index, int64_t axis) {
  CheckDType(op, index_name, index, DTypeClass::kIndex);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) {
    OpError(ErrorKind::kValue, op, "input 'x' must have rank at least 1; expected rank >= 1, but got shape ()");
  }
  if (static_cast<int64_t>(index.shape.size()) != rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", index_name, "' must have the rank of 'x'; expected rank ", rank, ", but got shape ",
                   ShapeRepr(index.shape), " for 'x' of shape ", ShapeRepr(x.shape)));
  }
  const int64_t a = NormalizeAxis(op, axis, rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a && index.shape[d] > x.shape[d]) {
      OpError(ErrorKind::kValue, op,
              StrCat("'", index_name, "' must be no larger than 'x' along every axis but ", a,
                     "; expected size <= ", x.shape[d], " on axis ", d, ", but got shape ", ShapeRepr(index.shape),
                     " for 'x' of shape ", ShapeRepr(x.shape)));
    }
  }
  return a;
}

MSRT_REGISTER_OP(
    {.name = "gather_elements",
     .inputs = {"x", "index"},
     .attrs = {{"dim", Value(), "the axis indexed", AttrType::kInt}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           CheckElementIndex("gather_elements", in[0], "index", in[1], IntAttr("gather_elements", attrs, "dim"));
           return Metas{{in[1].shape, in[0].dtype}};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       const Tensor& x = a.inputs[0];
       if (!a.dys[0].defined() || !a.needs[0] || !IsFloating(x.dtype())) return {Tensor(), Tensor()};
       return {Call1("tensor_scatter_elements", {fn::ZerosLike(x), a.inputs[1], a.dys[0]},
                     Dict{{"axis", Attr(a.attrs, "dim")}, {"reduction", Value("add")}}),
               Tensor()};
     },
     .doc = "out[i][j] = x[index[i][j]][j] along dim (an index may be negative, from the end; out of range raises "
            "IndexError)",
     .api = {Function("gather_elements(input->x, dim, index)"), Method("gather_elements(self->x, dim, index)"),
             Primitive("array_ops.GatherD()(x, dim, index)")}});

MSRT_REGISTER_OP(
    {.name = "tensor_scatter_elements",
     .inputs = {"x", "indices", "updates"},
     .attrs = {{"axis", 0, "the axis indexed", AttrType::kInt},
               {"reduction", "none", "'none' (replace) or 'add'", AttrType::kString, {"none", "add"}}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           constexpr std::string_view op = "tensor_scatter_elements";
           CheckElementIndex(op, in[0], "indices", in[1], IntAttr(op, attrs, "axis"));
           if (in[2].shape != in[1].shape) {
             OpError(ErrorKind::kValue, op,
                     StrCat("'updates' must have the shape of 'indices'; expected ", ShapeRepr(in[1].shape),
                            ", but got ", ShapeRepr(in[2].shape)));
           }
           CheckSameDType(op, "x", in[0], "updates", in[2]);
           if (AttrString(attrs, "reduction") == "add") CheckDType(op, "x", in[0], DTypeClass::kNumber);
           return Metas{in[0]};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       const Tensor& dy = a.dys[0];
       if (!dy.defined() || !IsFloating(a.inputs[0].dtype())) return {Tensor(), Tensor(), Tensor()};
       const Value& axis = Attr(a.attrs, "axis");
       Tensor dx, dupdates;
       if (a.needs[0]) {
         // Replaced elements do not reach the output; added-to ones do.
         dx = AttrString(a.attrs, "reduction") == "add"
                  ? dy
                  : Call1("tensor_scatter_elements", {dy, a.inputs[1], fn::ZerosLike(a.inputs[2])},
                          Dict{{"axis", axis}, {"reduction", Value("none")}});
       }
       if (a.needs[2]) dupdates = Call1("gather_elements", {dy, a.inputs[1]}, Dict{{"dim", axis}});
       return {dx, Tensor(), dupdates};
     },
     .doc = "x with updates written (or added) at indices along axis; repeated indices: the last update wins "
            "(none) or all add up",
     .api = {Function("tensor_scatter_elements(input_x->x, indices, updates, axis=0, reduction='none')"),
             Function("scatter(input->x, axis, index->indices, src->updates)"),
             Method("scatter(self->x, axis, index->indices, src->updates)"),
             Primitive("array_ops.TensorScatterElements(axis=0, reduction='none')(data->x, indices, updates)")}});

MSRT_REGISTER_OP({.name = "masked_fill",
                  .inputs = {"x", "mask", "value"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    constexpr std::string_view op = "masked_fill";
                    CheckDType(op, "mask", {in[1].shape(), in[1].dtype()}, DTypeClass::kBool);
                    if (in[2].numel() != 1 || in[2].ndim() > 1) {
                      OpError(ErrorKind::kValue, op,
                              StrCat("'value' must be a number or a 0-d tensor; expected shape (), but got ",
                                     ShapeRepr(in[2].shape())));
                    }
                    Tensor value = fn::Reshape(in[2], {});
                    if (value.dtype() != in[0].dtype()) value = fn::Cast(value, in[0].dtype());
                    return {fn::Select(in[1], value, in[0])};
                  },
                  .props = {.promotes_scalars = true},
                  .doc = "x with value where mask is True (mask broadcasts against x; composite of select)",
                  .api = {Function("masked_fill(input_x->x, mask, value)"), Method("masked_fill(self->x, mask, value)"),
                          Primitive("array_ops.MaskedFill()(input->x, mask, value)")}});

// tril / triu: x where the column minus the row is <= (>=) diagonal, else 0,
// for the last two axes; the mask is built from arange.
CompositeFn Triangle(std::string_view op, bool lower) {
  return [op, lower](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
    const Tensor& x = in[0];
    if (x.ndim() < 2) {
      OpError(ErrorKind::kValue, op,
              StrCat("input 'x' must have rank at least 2; expected rank >= 2, but got shape ", ShapeRepr(x.shape())));
    }
    const int64_t rows = x.shape()[x.ndim() - 2], cols = x.shape()[x.ndim() - 1];
    auto range = [](int64_t n) {
      return Call1("arange", {},
                   Dict{{"start", Value(0)}, {"end", Value(n)}, {"step", Value(1)}, {"dtype", Value("int64")}});
    };
    Tensor offset = fn::Sub(fn::Reshape(range(cols), {1, cols}), fn::Reshape(range(rows), {rows, 1}));
    Tensor diagonal = fn::Scalar(static_cast<double>(AttrInt(attrs, "diagonal")), offset);
    Tensor keep = Call1(lower ? "less_equal" : "greater_equal", {offset, diagonal});
    return {fn::Select(keep, x, fn::ZerosLike(x))};
  };
}

MSRT_REGISTER_OP({.name = "tril",
                  .inputs = {"x"},
                  .attrs = {{"diagonal", 0, "the diagonal kept last (0: the main one, > 0 above it)", AttrType::kInt}},
                  .composite = Triangle("tril", true),
                  .doc = "the lower triangle of the last two axes of x, the rest 0 (composite)",
                  .api = {Function("tril(input->x, diagonal=0)"), Method("tril(self->x, diagonal=0)"),
                          Primitive("array_ops.Tril(diagonal=0)(x)")}});

MSRT_REGISTER_OP({.name = "triu",
                  .inputs = {"x"},
                  .attrs = {{"diagonal", 0, "the diagonal kept first (0: the main one, > 0 above it)", AttrType::kInt}},
                  .composite = Triangle("triu", false),
                  .doc = "the upper triangle of the last two axes of x, the rest 0 (composite)",
                  .api = {Function("triu(input->x, diagonal=0)"), Method("triu(self->x, diagonal=0)"),
                          Primitive("array_ops.Triu(diagonal=0)(x)")}});

}  // namespace
}  // namespace msrt::ops
