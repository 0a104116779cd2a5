// Reductions (sum, mean, max, min, prod, argmax, argmin) and softmax /
// log_softmax, which reduce along one axis.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;
using fn::Scalar;

const AttrSpec kAxisAttr{"axis", Value(List{}), "an int or a list of ints; [] reduces every axis", AttrType::kAxes};
const AttrSpec kKeepDimsAttr{"keep_dims", false, "keep reduced axes with size 1", AttrType::kBool};
const OpProperties kReduction{.reduction = true};

Shape ReducedShape(const Shape& shape, const std::vector<int64_t>& axes, bool keep_dims) {
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!reduced) {
      out.push_back(shape[i]);
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  return out;
}

// `needs_elements`: max and min have no value for an empty reduction (and,
// comparing, take no complex values; sum, mean and prod do).
InferFn ReduceInfer(std::string_view op, bool needs_elements, bool integer_gives_float) {
  return [=](const Metas& in, const Dict& attrs) {
    CheckDType(op, "x", in[0], needs_elements ? DTypeClass::kNumber : DTypeClass::kNumberOrComplex);
    bool keep = BoolAttr(op, attrs, "keep_dims");
    auto axes = ReductionAxes(op, IntsAttr(op, attrs, "axis"), static_cast<int64_t>(in[0].shape.size()));
    if (needs_elements) {
      for (int64_t a : axes) {
        if (in[0].shape[a] == 0) {
          OpError(ErrorKind::kValue, op,
                  StrCat("can not reduce axis ", a,
                         " of size 0 (there is no identity); expected a non-empty axis, "
                         "but got shape ",
                         ShapeRepr(in[0].shape)));
        }
      }
    }
    DType dtype = in[0].dtype;
    if (integer_gives_float && !IsFloating(dtype) && !IsComplex(dtype)) dtype = DType::kFloat32;
    return Metas{{ReducedShape(in[0].shape, axes, keep), dtype}};
  };
}

struct ReduceInfo {
  std::vector<int64_t> axes;
};

ReduceInfo Info(std::string_view op, const Tensor& x, const Dict& attrs) {
  ReduceInfo info;
  info.axes = ReductionAxes(op, IntsAttr(op, attrs, "axis"), x.ndim());
  return info;
}

// A reduction's output `t` with its reduced axes kept (as size 1). The
// gradients below give no op a size as an attribute (expand_dims, and a
// multiply by ones to spread), so that a graph with dynamic dimensions keeps
// one form at every size (Note [Dynamic shapes] in compiler/dynamic_shape.h).
Tensor Kept(const Tensor& t, const ReduceInfo& info, const Dict& attrs) {
  if (AttrBool(attrs, "keep_dims")) return t;
  Tensor kept = t;
  for (int64_t axis : info.axes) kept = fn::ExpandDims(kept, axis);  // ascending: each lands where it was
  return kept;
}

// dy (the gradient of the reduction's output) spread over x's shape;
// `scale_by_count`: divided by the number of elements reduced (reduce_mean).
Tensor Spread(const Tensor& dy, const ReduceInfo& info, const Tensor& x, const Dict& attrs, bool scale_by_count) {
  Tensor kept = Kept(dy, info, attrs);
  Tensor ones = fn::OnesLike(x);
  if (scale_by_count) ones = fn::Div(ones, fn::ReduceSum(ones, info.axes, true));
  return fn::Mul(kept, ones);
}

MSRT_REGISTER_OP({.name = "reduce_sum",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .infer = ReduceInfer("reduce_sum", false, false),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& x = a.inputs[0];
                    if (!a.dys[0].defined() || !Differentiable(x.dtype())) return {Tensor()};
                    return {Spread(a.dys[0], Info("reduce_sum", x, a.attrs), x, a.attrs, false)};
                  },
                  .props = {.half_compute = HalfCompute::kRoundedFloat32, .reduction = true, .complex_grad = true},
                  .doc = "sum over axes"});

// all / any: whether every (some) element along the axes is nonzero, as
// the min (max of the absolute value) of the float32 values compared with 0.
CompositeFn Truth(std::string_view reduce, bool absolute) {
  return [reduce, absolute](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
    Tensor x = fn::Cast(in[0], DType::kFloat32);
    if (absolute) x = Call1("abs", {x});
    Tensor extreme = Call1(reduce, {x}, attrs);
    return {Call1("not_equal", {extreme, fn::Scalar(0, extreme)})};
  };
}

MSRT_REGISTER_OP({.name = "reduce_all",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .composite = Truth("reduce_min", false),
                  .doc = "whether every element along the axes is nonzero (bool)",
                  .api = {Function("all(input->x, axis=None, keep_dims=False)"),
                          Method("all(self->x, axis=None, keep_dims=False)"),
                          Primitive("math_ops.ReduceAll(keep_dims=False)(x, axis=())")}});

MSRT_REGISTER_OP({.name = "reduce_any",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .composite = Truth("reduce_max", true),
                  .doc = "whether some element along the axes is nonzero (bool)",
                  .api = {Function("any(input->x, axis=None, keep_dims=False)"),
                          Method("any(self->x, axis=None, keep_dims=False)"),
                          Primitive("math_ops.ReduceAny(keep_dims=False)(x, axis=())")}});

MSRT_REGISTER_OP({.name = "reduce_mean",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .infer = ReduceInfer("reduce_mean", false, true),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& x = a.inputs[0];
                    if (!a.dys[0].defined() || !IsFloating(x.dtype())) return {Tensor()};
                    return {Spread(a.dys[0], Info("reduce_mean", x, a.attrs), x, a.attrs, true)};
                  },
                  .props = {.half_compute = HalfCompute::kRoundedFloat32, .reduction = true},
                  .doc = "mean over axes (integers give float32)",
                  .api = {Function("mean(input->x, axis=None, keep_dims=False)"),
                          Method("mean(self->x, axis=None, keep_dims=False)"),
                          Primitive("math_ops.ReduceMean(keep_dims=False)(x, axis=())")}});

GradFn MaxMinGrad(std::string_view op) {
  return [op](const GradArgs& a) -> std::vector<Tensor> {
    const Tensor& x = a.inputs[0];
    if (!a.dys[0].defined() || !IsFloating(x.dtype())) return {Tensor()};
    ReduceInfo info = Info(op, x, a.attrs);
    // Ties share the gradient equally.
    Tensor mask = fn::Cast(fn::Equal(x, Kept(a.outputs[0], info, a.attrs)), x.dtype());
    Tensor ties = fn::ReduceSum(mask, info.axes, true);
    return {fn::Mul(fn::Div(mask, ties), Kept(a.dys[0], info, a.attrs))};
  };
}

MSRT_REGISTER_OP({.name = "reduce_max",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .infer = ReduceInfer("reduce_max", true, false),
                  .grad = MaxMinGrad("reduce_max"),
                  .props = {.half_compute = HalfCompute::kExact, .reduction = true},
                  .doc = "max over axes (NaN propagates)",
                  .api = {Primitive("math_ops.ReduceMax(keep_dims=False)(x, axis=())")}});

MSRT_REGISTER_OP({.name = "reduce_min",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .infer = ReduceInfer("reduce_min", true, false),
                  .grad = MaxMinGrad("reduce_min"),
                  .props = {.half_compute = HalfCompute::kExact, .reduction = true},
                  .doc = "min over axes (NaN propagates)",
                  .api = {Primitive("math_ops.ReduceMin(keep_dims=False)(x, axis=())")}});

MSRT_REGISTER_OP({.name = "reduce_prod",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr, kKeepDimsAttr},
                  .infer = ReduceInfer("reduce_prod", false, false),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& x = a.inputs[0];
                    if (!a.dys[0].defined() || !IsFloating(x.dtype())) return {Tensor()};
                    ReduceInfo info = Info("reduce_prod", x, a.attrs);
                    // d prod / d x_i = product of the others, exact with zeros: with no
                    // zero it is prod / x_i; with one zero, only that element gets the
                    // product of the non-zeros; with more, everything gets 0.
                    Tensor zero = Scalar(0, x);
                    Tensor is_zero = fn::Equal(x, zero);
                    Tensor nonzero_x = fn::Select(is_zero, Scalar(1, x), x);
                    Tensor prod_nonzero = Call1("reduce_prod", {nonzero_x},
                                                Dict{{"axis", Attr(a.attrs, "axis")}, {"keep_dims", true}});
                    Tensor zeros = fn::ReduceSum(fn::Cast(is_zero, x.dtype()), info.axes, true);
                    Tensor no_zero = fn::Equal(zeros, zero);
                    Tensor one_zero = fn::Equal(zeros, Scalar(1, x));
                    Tensor at_zero = fn::Select(one_zero, prod_nonzero, zero);
                    Tensor elsewhere = fn::Select(no_zero, fn::Div(prod_nonzero, nonzero_x), zero);
                    Tensor d = fn::Select(is_zero, at_zero, elsewhere);
                    return {fn::Mul(d, Kept(a.dys[0], info, a.attrs))};
                  },
                  .props = {.half_compute = HalfCompute::kRoundedFloat32, .reduction = true},
                  .doc = "product over axes",
                  .api = {Function("prod(input->x, axis=None, keep_dims=False)"),
                          Method("prod(self->x, axis=None, keep_dims=False)"),
                          Primitive("math_ops.ReduceProd(keep_dims=False)(x, axis=())")}});

InferFn ArgInfer(std::string_view op) {
  return [op](const Metas& in, const Dict& attrs) {
    CheckDType(op, "x", in[0], DTypeClass::kNumber);
    const Shape& shape = in[0].shape;
    int64_t ndim = static_cast<int64_t>(shape.size());
    bool keep = BoolAttr(op, attrs, "keep_dims");
    DType index = DTypeAttr(op, attrs, "output_type");
    if (ndim == 0) return Metas{{{}, index}};
    const bool flat = Attr(attrs, "axis").is_none();  // the index into the flattened tensor
    const int64_t axis = flat ? 0 : NormalizeAxis(op, IntAttr(op, attrs, "axis"), ndim);
    const int64_t count = flat ? NumElements(shape) : shape[axis];
    if (count == 0) {
      OpError(ErrorKind::kValue, op,
              StrCat("can not take the index ", flat ? "of an empty tensor" : StrCat("over axis ", axis, " of size 0"),
                     "; expected at least one element, but got shape ", ShapeRepr(shape)));
    }
    if (index == DType::kInt32 && count > INT32_MAX) {
      OpError(ErrorKind::kValue, op,
              StrCat("indices up to ", count - 1, " do not fit output_type int32; expected output_type=int64"));
    }
    return Metas{{flat ? (keep ? Shape(shape.size(), 1) : Shape{}) : ReducedShape(shape, {axis}, keep), index}};
  };
}

const AttrSpec kArgAxisAttr{.name = "axis",
                            .default_value = -1,
                            .doc = "the axis; None: the index into the flattened tensor",
                            .type = AttrType::kInt,
                            .optional = true};
const AttrSpec kIndexTypeAttr{.name = "output_type",
                              .default_value = "int32",
                              .doc = "the dtype of the indices: int32 or int64",
                              .type = AttrType::kDType,
                              .check = [](std::string_view op, const Value& v) {
                                if (v.as_string() != "int32" && v.as_string() != "int64") {
                                  OpError(ErrorKind::kValue, op,
                                          StrCat("attribute 'output_type' must be int32 or int64, but got ",
                                                 v.as_string()));
                                }
                              }};

MSRT_REGISTER_OP({.name = "argmax",
                  .inputs = {"x"},
                  .attrs = {kArgAxisAttr, kKeepDimsAttr, kIndexTypeAttr},
                  .infer = ArgInfer("argmax"),
                  .props = kReduction,
                  .doc = "index of the max along axis (first on ties)",
                  .api = {Function("argmax(input->x, dim->axis=None, keepdim->keep_dims=False)"),
                          Method("argmax(self->x, axis=None, keepdims->keep_dims=False)"),
                          Primitive("array_ops.Argmax(axis=-1, output_type='int32')(x)")}});

MSRT_REGISTER_OP({.name = "argmin",
                  .inputs = {"x"},
                  .attrs = {kArgAxisAttr, kKeepDimsAttr, kIndexTypeAttr},
                  .infer = ArgInfer("argmin"),
                  .props = kReduction,
                  .doc = "index of the min along axis (first on ties)",
                  .api = {Function("argmin(input->x, axis=None, keepdims->keep_dims=False)"),
                          Method("argmin(self->x, axis=None, keepdims->keep_dims=False)"),
                          Primitive("array_ops.Argmin(axis=-1, output_type='int32')(x)")}});

MSRT_REGISTER_OP({.name = "all_finite",
                  .inputs = {"xs..."},
                  .infer = [](const std::vector<TensorMeta>&, const Dict&) -> std::vector<TensorMeta> {
                    return {{Shape{}, DType::kBool}};
                  },
                  .props = {.half_compute = HalfCompute::kExact, .reduction = true},
                  .doc = "whether no element of any input is inf or NaN (0-d bool): one read of each input, for a "
                         "loss scale's overflow check (internal: Note [Loss-scaled training step])"});

// MindSpore's functional reductions, over the kernels above.

const AttrSpec kInitialAttr{.name = "initial",
                            .default_value = Value(),
                            .doc = "a bound the result is taken against (max/min) or a start added (sum)",
                            .type = AttrType::kScalar,
                            .optional = true};

// `bound` (maximum or minimum) of `out` and the attribute `initial`, when given.
Tensor WithInitial(const Tensor& out, const Dict& attrs, std::string_view bound) {
  const Value& initial = Attr(attrs, "initial");
  return initial.is_none() ? out : Call1(bound, {out, Scalar(initial.as_float(), out)});
}

MSRT_REGISTER_OP({.name = "sum",
                  .inputs = {"x"},
                  .attrs = {kAxisAttr,
                            kKeepDimsAttr,
                            {.name = "dtype",
                             .default_value = Value(),
                             .doc = "the dtype to sum in (None: the input's; bool sums as int64)",
                             .type = AttrType::kDType,
                             .optional = true},
                            kInitialAttr},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    static const OpDef& reduce_sum = GetOp("reduce_sum");
                    const Value& axis = Attr(attrs, "axis");
                    const Value& keep_dims = Attr(attrs, "keep_dims");
                    const Value& initial = Attr(attrs, "initial");
                    // x.sum(): reduce_sum at its own defaults (every axis, none kept), without a copy of the
                    // inputs or attributes to parse (Note [Default attributes] in op_registry.cc).
                    if (Attr(attrs, "dtype").is_none() && in[0].dtype() != DType::kBool && initial.is_none() &&
                        axis.is_list() && axis.as_list().empty() && !keep_dims.as_bool()) {
                      return Call(reduce_sum, in);
                    }
                    Tensor x = in[0];
                    if (!Attr(attrs, "dtype").is_none()) x = fn::Cast(x, DTypeAttr("sum", attrs, "dtype"));
                    if (x.dtype() == DType::kBool) x = fn::Cast(x, DType::kInt64);  // bools are counted
                    Tensor out = Call1("reduce_sum", {x}, Dict{{"axis", axis}, {"keep_dims", keep_dims}});
                    return {initial.is_none() ? out : fn::Add(out, Scalar(initial.as_float(), out))};
                  },
                  .doc = "sum over axes, optionally in another dtype and from an initial value",
                  .api = {Function("sum(input->x, dim->axis=None, keepdim->keep_dims=False, *, dtype=None)"),
                          Method("sum(self->x, axis=None, dtype=None, keepdims->keep_dims=False, initial=None)"),
                          Primitive("math_ops.ReduceSum(keep_dims=False)(x, axis=())")}});

// amax / amin: reduce_max / reduce_min against `initial`.
OpDef Extreme(std::string_view name, std::string_view reduce, std::string_view bound, std::vector<ApiForm> api) {
  return {.name = name,
          .inputs = {"x"},
          .attrs = {kAxisAttr, kKeepDimsAttr, kInitialAttr},
          .composite = [reduce, bound](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
            Tensor out = Call1(reduce, {in[0]},
                               Dict{{"axis", Attr(attrs, "axis")}, {"keep_dims", Attr(attrs, "keep_dims")}});
            return {WithInitial(out, attrs, bound)};
          },
          .doc = "the extreme over axes (all when None), taken against `initial` when given",
          .api = std::move(api)};
}

// max / min: the extreme along one axis (all when None) and, with
// return_indices, its index (into the flattened tensor when axis is None).
OpDef ExtremeWithIndex(std::string_view name, std::string_view extreme, std::string_view arg,
                       std::vector<ApiForm> api) {
  return {.name = name,
          .inputs = {"x"},
          .attrs = {{.name = "axis",
                     .default_value = Value(),
                     .doc = "the axis (None: every axis)",
                     .type = AttrType::kAxis,
                     .optional = true},
                    kKeepDimsAttr,
                    kInitialAttr,
                    {"return_indices", true, "also return the indices", AttrType::kBool}},
          .composite = [extreme, arg](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
            const Value& axis = Attr(attrs, "axis");
            const Value& keep = Attr(attrs, "keep_dims");
            Tensor values = Call1(extreme, {in[0]},
                                  Dict{{"axis", axis.is_none() ? Value(List{}) : axis},
                                       {"keep_dims", keep},
                                       {"initial", Attr(attrs, "initial")}});
            if (!Attr(attrs, "return_indices").as_bool()) return {values};
            return {values, Call1(arg, {in[0]}, Dict{{"axis", axis}, {"keep_dims", keep}})};
          },
          .doc = "the extreme along an axis (every axis when None) and, with return_indices, its index",
          .api = std::move(api)};
}

// ArgMaxWithValue / ArgMinWithValue: (index, value) along one axis.
OpDef IndexWithValue(std::string_view name, std::string_view extreme, std::string_view primitive) {
  return {.name = name,
          .inputs = {"x"},
          .attrs = {{"axis", 0, "the axis", AttrType::kInt}, kKeepDimsAttr},
          .composite = [extreme](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
            std::vector<Tensor> out = Call(extreme, {in[0]}, attrs);
            return {out[1], out[0]};
          },
          .doc = "(index, value) of the extreme along an axis",
          .api = {Primitive(StrCat("array_ops.", primitive, "(axis=0, keep_dims=False)(x)"))}};
}

const bool kExtremesRegistered = [] {
  constexpr std::string_view kAmaxForm =
      "(input->x, axis=None, keepdims->keep_dims=False, *, initial=None, where->!=None)";
  constexpr std::string_view kMethodForm =
      "(self->x, axis=None, keepdims->keep_dims=False, *, initial=None, where->!=None, return_indices=False)";
  RegisterOp(Extreme("amax", "reduce_max", "maximum",
                     {Function(StrCat("amax", kAmaxForm)),
                      Method("amax(self->x, axis=None, keepdims->keep_dims=False, *, initial=None, where->!=None)")}));
  RegisterOp(Extreme("amin", "reduce_min", "minimum",
                     {Function(StrCat("amin", kAmaxForm)),
                      Method("amin(self->x, axis=None, keepdims->keep_dims=False, *, initial=None, where->!=None)")}));
  RegisterOp(ExtremeWithIndex("max", "amax", "argmax",
                              {Function(StrCat("max", kAmaxForm)), Method(StrCat("max", kMethodForm))}));
  RegisterOp(ExtremeWithIndex("min", "amin", "argmin",
                              {Function(StrCat("min", kAmaxForm)), Method(StrCat("min", kMethodForm))}));
  RegisterOp(IndexWithValue("argmax_with_value", "max", "ArgMaxWithValue"));
  RegisterOp(IndexWithValue("argmin_with_value", "min", "ArgMinWithValue"));
  return true;
}();

InferFn SoftmaxInfer(std::string_view op) {
  return [op](const Metas& in, const Dict& attrs) {
    CheckDType(op, "x", in[0], DTypeClass::kFloat);
    NormalizeAxis(op, IntAttr(op, attrs, "axis"), static_cast<int64_t>(in[0].shape.size()));
    return Metas{in[0]};
  };
}

int64_t SoftmaxAxis(const GradArgs& a) {
  return NormalizeAxis("softmax", AttrInt(a.attrs, "axis"), a.inputs[0].ndim());
}

MSRT_REGISTER_OP({.name = "softmax",
                  .inputs = {"x"},
                  .attrs = {{"axis", -1, "the axis (or a sequence of one)", AttrType::kAxis}},
                  .infer = SoftmaxInfer("softmax"),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor()};
                    const Tensor& y = a.outputs[0];
                    const Tensor& dy = a.dys[0];
                    Tensor dot = fn::ReduceSum(fn::Mul(dy, y), {SoftmaxAxis(a)}, true);
                    return {fn::Mul(y, fn::Sub(dy, dot))};
                  },
                  .props = {.half_compute = HalfCompute::kRoundedFloat32},
                  .doc = "exp(x) / sum(exp(x)) along axis",
                  .api = {Method("softmax(self->x, axis=-1)"), Primitive("nn_ops.Softmax(axis=-1)(logits->x)")}});

MSRT_REGISTER_OP({.name = "log_softmax",
                  .inputs = {"x"},
                  .attrs = {{"axis", -1, "the axis (or a sequence of one)", AttrType::kAxis}},
                  .infer = SoftmaxInfer("log_softmax"),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor()};
                    const Tensor& y = a.outputs[0];
                    const Tensor& dy = a.dys[0];
                    Tensor total = fn::ReduceSum(dy, {SoftmaxAxis(a)}, true);
                    return {fn::Sub(dy, fn::Mul(fn::Exp(y), total))};
                  },
                  .props = {.half_compute = HalfCompute::kRoundedFloat32},
                  .doc = "x - log(sum(exp(x))) along axis",
                  .api = {Function("log_softmax(logits->x, axis=-1)"), Method("log_softmax(self->x, axis=-1)"),
                          Primitive("nn_ops.LogSoftmax(axis=-1)(logits->x)")}});

}  // namespace
}  // namespace msrt::ops
