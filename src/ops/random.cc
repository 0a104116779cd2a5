// Random ops: dropout, and draws of the normal, uniform and integer
// distributions. They draw from the global generator (src/core/random.h); see
// Note [Random streams] for how a draw is tied to the seed at dispatch time.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

MSRT_REGISTER_OP({.name = "dropout",
                  .inputs = {"x"},
                  .attrs = {{"keep_prob",
                             0.5,
                             "probability of keeping an element, in (0, 1]",
                             AttrType::kFloat,
                             {},
                             false,
                             [](std::string_view op, const Value& v) {
                               double keep = v.as_float();
                               if (!(keep > 0.0 && keep <= 1.0)) {
                                 OpError(ErrorKind::kValue, op,
                                         StrCat("attribute 'keep_prob' must be in (0, 1]; expected 0 < keep_prob <= 1, "
                                                "but got ",
                                                v.repr()));
                               }
                             }}},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckDType("dropout", "x", in[0], DTypeClass::kFloat);
                        return Metas{in[0], in[0]};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
                    return {fn::Mul(a.dys[0], a.outputs[1])};
                  },
                  .props = {.random = true},
                  .doc = "(x * mask, mask): mask holds 0 or 1/keep_prob, kept with probability keep_prob",
                  // MindSpore's seeds: msrt draws from the global generator (Note [Random streams]).
                  .api = {Primitive("nn_ops.Dropout(keep_prob=0.5, Seed0->~=0, Seed1->~=0)(x)")}});

// ---- draws of a shape: normal, uniform, integers ----

const AttrSpec kDrawShapeAttr{"shape", Value(), "the output shape (sizes >= 0)", AttrType::kInts};

Shape DrawShape(std::string_view op, const Dict& attrs) {
  auto shape = ShapeAttr(op, attrs, "shape", 0);
  return Shape(shape.begin(), shape.end());
}

// The dtype attribute (None: `otherwise`), which must be in `cls`.
DType DrawDType(std::string_view op, const Dict& attrs, DType otherwise, DTypeClass cls) {
  DType dtype = Attr(attrs, "dtype").is_none() ? otherwise : DTypeAttr(op, attrs, "dtype");
  if (!InDTypeClass(dtype, cls)) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute 'dtype' must be ", DescribeDTypeClass(cls), ", but got ", DTypeName(dtype)));
  }
  return dtype;
}

InferFn FloatDrawInfer(std::string_view op) {
  return [op](const Metas&, const Dict& attrs) {
    return Metas{{DrawShape(op, attrs), DrawDType(op, attrs, DType::kFloat32, DTypeClass::kFloat)}};
  };
}

const AttrSpec kFloatDrawDType{"dtype", Value(), "a float dtype (None: float32)", AttrType::kDType, {}, true};

// MindSpore's per-op seeds are accepted and not used: every draw comes from
// the global generator (ms.set_seed; Note [Random streams]).
MSRT_REGISTER_OP({.name = "random_normal",
                  .inputs = {},
                  .attrs = {kDrawShapeAttr, kFloatDrawDType},
                  .infer = FloatDrawInfer("random_normal"),
                  .props = {.random = true},
                  .doc = "samples of the standard normal distribution (from the global generator)",
                  .api = {Function("randn(*size->shape, dtype=None, seed->~=None)"),
                          Function("standard_normal(shape, seed->~=None)"),
                          Primitive("random_ops.StandardNormal(seed->~=0, seed2->~=0)(shape)")}});

MSRT_REGISTER_OP({.name = "random_uniform",
                  .inputs = {},
                  .attrs = {kDrawShapeAttr, kFloatDrawDType},
                  .infer = FloatDrawInfer("random_uniform"),
                  .props = {.random = true},
                  .doc = "samples of the uniform distribution on [0, 1) (from the global generator)",
                  .api = {Function("rand(*size->shape, dtype=None, seed->~=None)"),
                          Primitive("random_ops.UniformReal(seed->~=0, seed2->~=0)(shape)")}});

// The values an integer dtype holds.
std::pair<int64_t, int64_t> IntegerRange(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return {INT8_MIN, INT8_MAX};
    case DType::kUInt8: return {0, UINT8_MAX};
    case DType::kInt16: return {INT16_MIN, INT16_MAX};
    case DType::kInt32: return {INT32_MIN, INT32_MAX};
    case DType::kUInt16: return {0, UINT16_MAX};
    case DType::kUInt32: return {0, UINT32_MAX};
    case DType::kUInt64: return {0, INT64_MAX};  // the bounds are int64 attributes
    default: return {INT64_MIN, INT64_MAX};
  }
}

MSRT_REGISTER_OP(
    {.name = "random_int",
     .inputs = {},
     .attrs = {{"low", Value(), "the smallest value", AttrType::kInt},
               {"high", Value(), "one past the largest value (high - low in [1, 2**32])", AttrType::kInt},
               kDrawShapeAttr,
               {"dtype", Value(), "an integer dtype (None: int64)", AttrType::kDType, {}, true}},
     .infer =
         [](const Metas&, const Dict& attrs) {
           constexpr std::string_view op = "random_int";
           const int64_t low = IntAttr(op, attrs, "low"), high = IntAttr(op, attrs, "high");
           // high - low computed without overflow: both are int64.
           const bool empty = high <= low;
           const bool too_wide = !empty &&
                                 static_cast<uint64_t>(high) - static_cast<uint64_t>(low) > (uint64_t{1} << 32);
           if (empty || too_wide) {
             OpError(ErrorKind::kValue, op,
                     StrCat("'high' must exceed 'low' by 1 to 2**32; expected low < high <= low + 2**32, but got low=",
                            low, " and high=", high));
           }
           DType dtype = DrawDType(op, attrs, DType::kInt64, DTypeClass::kNumber);
           if (IsFloating(dtype)) {
             OpError(ErrorKind::kType, op,
                     StrCat("attribute 'dtype' must be an integer dtype, but got ", DTypeName(dtype)));
           }
           const auto [min, max] = IntegerRange(dtype);
           if (low < min || high - 1 > max) {
             OpError(ErrorKind::kValue, op,
                     StrCat("[low, high) = [", low, ", ", high, ") does not fit dtype ", DTypeName(dtype),
                            "; expected values in [", min, ", ", max, "]"));
           }
           return Metas{{DrawShape(op, attrs), dtype}};
         },
     .props = {.random = true},
     .doc = "integers drawn uniformly from [low, high) (from the global generator)",
     .api = {Function("randint(low, high, size->shape, seed->~=None, *, dtype=None)")}});

// rand_like / randn_like / randint_like: a draw of x's shape, in x's dtype
// unless one is given.
Dict LikeAttrs(const Tensor& x, const Dict& attrs) {
  List dims;
  for (int64_t d : x.shape()) dims.emplace_back(d);
  const Value& dtype = Attr(attrs, "dtype");
  return Dict{{"shape", Value(std::move(dims))},
              {"dtype", dtype.is_none() ? Value(std::string(DTypeAttrName(x.dtype()))) : dtype}};
}

OpDef DrawLike(std::string_view name, std::string_view draw, std::string_view doc, std::string form) {
  return {.name = name,
          .inputs = {"x"},
          .attrs = {{"dtype", Value(), "the dtype (None: x's)", AttrType::kDType, {}, true}},
          .composite = [draw](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
            return {Call1(draw, {}, LikeAttrs(in[0], attrs))};
          },
          .doc = doc,
          .api = {Function(std::move(form))}};
}

const bool kDrawsLikeRegistered = [] {
  RegisterOp(DrawLike("rand_like", "random_uniform", "uniform samples on [0, 1) of x's shape (composite)",
                      "rand_like(input->x, seed->~=None, *, dtype=None)"));
  RegisterOp(DrawLike("randn_like", "random_normal", "standard normal samples of x's shape (composite)",
                      "randn_like(input->x, seed->~=None, *, dtype=None)"));
  return true;
}();

MSRT_REGISTER_OP({.name = "randint_like",
                  .inputs = {"x"},
                  .attrs = {{"low", Value(), "the smallest value", AttrType::kInt},
                            {"high", Value(), "one past the largest value", AttrType::kInt},
                            {"dtype", Value(), "an integer dtype (None: x's)", AttrType::kDType, {}, true}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    Dict draw = LikeAttrs(in[0], attrs);
                    draw.Set("low", Attr(attrs, "low"));
                    draw.Set("high", Attr(attrs, "high"));
                    return {Call1("random_int", {}, draw)};
                  },
                  .doc = "integers drawn uniformly from [low, high), of x's shape (composite)",
                  .api = {Function("randint_like(input->x, low, high, seed->~=None, *, dtype=None)")}});

// normal / uniform: a standard draw of the broadcast shape, scaled and shifted.
Shape DrawBroadcast(std::string_view op, const Dict& attrs, const Tensor& a, const Tensor& b) {
  Shape shape = DrawShape(op, attrs);
  return BroadcastShapes(op, BroadcastShapes(op, shape, a.shape()), b.shape());
}

Dict DrawAttrs(const Shape& shape, DType dtype) {
  List dims;
  for (int64_t d : shape) dims.emplace_back(d);
  return Dict{{"shape", Value(std::move(dims))}, {"dtype", Value(std::string(DTypeAttrName(dtype)))}};
}

Tensor AsFloat(std::string_view op, std::string_view name, const Tensor& t, DType dtype) {
  if (t.dtype() == DType::kBool) {
    OpError(ErrorKind::kType, op, StrCat("input '", name, "' must be a number tensor, but got bool"));
  }
  return t.dtype() == dtype ? t : fn::Cast(t, dtype);
}

MSRT_REGISTER_OP({.name = "normal",
                  .inputs = {"mean", "stddev"},
                  .attrs = {kDrawShapeAttr},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "normal";
                    const DType dtype = IsFloating(in[0].dtype()) ? in[0].dtype() : DType::kFloat32;
                    Tensor mean = AsFloat(op, "mean", in[0], dtype);
                    Tensor stddev = AsFloat(op, "stddev", in[1], dtype);
                    Tensor z = Call1("random_normal", {}, DrawAttrs(DrawBroadcast(op, attrs, mean, stddev), dtype));
                    return {fn::Add(fn::Mul(z, stddev), mean)};
                  },
                  .doc = "samples of N(mean, stddev**2), of shape broadcast with mean's and stddev's (float32 unless "
                         "mean is another float) (composite)",
                  .api = {Function("normal(shape, mean, stddev, seed->~=None)")}});

MSRT_REGISTER_OP(
    {.name = "uniform",
     .inputs = {"minval", "maxval"},
     .attrs = {kDrawShapeAttr,
               {"dtype", "float32", "float32/float64, or int32/int64 (integers in [minval, maxval))",
                AttrType::kDType}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "uniform";
       const DType dtype = DTypeAttr(op, attrs, "dtype");
       if (!InDTypeClass(dtype, DTypeClass::kFloat) && !InDTypeClass(dtype, DTypeClass::kIndex)) {
         OpError(ErrorKind::kType, op,
                 StrCat("attribute 'dtype' must be a float dtype, int32 or int64, but got ", DTypeName(dtype)));
       }
       // Integers: floor of a float64 draw on [minval, maxval).
       const DType compute = IsFloating(dtype) ? dtype : DType::kFloat64;
       Tensor low = AsFloat(op, "minval", in[0], compute);
       Tensor high = AsFloat(op, "maxval", in[1], compute);
       Tensor u = Call1("random_uniform", {}, DrawAttrs(DrawBroadcast(op, attrs, low, high), compute));
       Tensor out = fn::Add(low, fn::Mul(u, fn::Sub(high, low)));
       if (IsFloating(dtype)) return {out};
       return {fn::Cast(Call1("floor", {out}), dtype)};
     },
     .doc = "samples of the uniform distribution on [minval, maxval), of shape broadcast with theirs (composite)",
     .api = {Function("uniform(shape, minval, maxval, seed->~=None, dtype='float32')")}});

}  // namespace
}  // namespace msrt::ops
