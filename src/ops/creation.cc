// Tensors made from arguments alone: arange (an op with a kernel), and the
// composites over fill, zeros_like, ones_like, arange and one_hot that give
// MindSpore's creation functions (zeros, ones, full, full_like, eye, and
// zeros_like/ones_like with a dtype).
#include <cmath>

#include "core/strings.h"
#include "ops/grad_utils.h"
#include "ops/op_checks.h"
#include "ops/shape_utils.h"

namespace msrt::ops {

namespace {
constexpr std::string_view kArange = "arange";

}  // namespace

ArangeSpec ResolveArange(const Dict& attrs) {
  Value start = Attr(attrs, "start");
  Value end = Attr(attrs, "end");
  Value step = Attr(attrs, "step");
  if (end.is_none()) {  // arange(n): 0 to n
    end = start;
    start = Value(int64_t{0});
  }
  ArangeSpec spec;
  spec.integral = !start.is_float() && !end.is_float() && !step.is_float();
  if (spec.integral) {
    spec.start = start.as_int();
    spec.step = step.as_int();
    if (spec.step == 0) OpError(ErrorKind::kValue, kArange, "the 'step' can not be 0, but got 0");
    // ceil((end - start) / step), exactly.
    __int128 span = static_cast<__int128>(end.as_int()) - spec.start;
    __int128 d = spec.step;
    __int128 n = (span == 0 || (span > 0) != (d > 0)) ? 0 : (span + d + (d > 0 ? -1 : 1)) / d;
    spec.length = static_cast<int64_t>(n);
    spec.fstart = static_cast<double>(spec.start);
    spec.fstep = static_cast<double>(spec.step);
  } else {
    spec.fstart = start.as_float();
    spec.fstep = step.as_float();
    if (spec.fstep == 0) OpError(ErrorKind::kValue, kArange, StrCat("the 'step' can not be 0, but got ", step.repr()));
    double n = std::ceil((end.as_float() - spec.fstart) / spec.fstep);
    if (!std::isfinite(n)) {
      OpError(ErrorKind::kValue, kArange,
              StrCat("can not compute the length from start ", start.repr(), ", end ", end.repr(), " and step ",
                     step.repr(), "; expected finite values"));
    }
    if (n >= 9.2e18) {
      OpError(ErrorKind::kValue, kArange, StrCat("too many elements; expected fewer than 2**63, but got ", n));
    }
    spec.length = n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const Value& dtype = Attr(attrs, "dtype");
  spec.dtype = !dtype.is_none() ? DTypeAttr(kArange, attrs, "dtype") : spec.integral ? DType::kInt64 : DType::kFloat32;
  return spec;
}

namespace {

Value DTypeValue(DType dtype) { return Value(std::string(DTypeAttrName(dtype))); }

// `attrs`'s dtype, or `otherwise` where it is None.
DType DTypeOr(std::string_view op, const Dict& attrs, DType otherwise) {
  return Attr(attrs, "dtype").is_none() ? otherwise : DTypeAttr(op, attrs, "dtype");
}

Tensor Fill(const Value& shape, double value, DType dtype) {
  return Call1("fill", {}, Dict{{"shape", shape}, {"value", Value(value)}, {"dtype", DTypeValue(dtype)}});
}

const AttrSpec kOptionalDType{"dtype", Value(), "output dtype (None: see the op)", AttrType::kDType, {}, true};

MSRT_REGISTER_OP(
    {.name = "arange",
     .inputs = {},
     .attrs =
         {{"start", 0, "the first value (the end when end is None)", AttrType::kScalar},
          {"end", Value(), "the end (exclusive); None: start is the end and 0 the start", AttrType::kScalar, {}, true},
          {"step", 1, "the step (not 0)", AttrType::kScalar},
          kOptionalDType},
     .infer =
         [](const std::vector<TensorMeta>&, const Dict& attrs) {
           ArangeSpec spec = ResolveArange(attrs);
           return std::vector<TensorMeta>{{{spec.length}, spec.dtype}};
         },
     .doc = "start, start + step, ... up to end (exclusive), as NumPy's arange; dtype None: float32 if an argument "
            "is a float, else int64",
     .api = {Function("arange(start=0, end=None, step=1, *, dtype=None)")}});

// Sizes of a creation function: an int or ints (fill checks they are >= 0).
const AttrSpec kSizeAttr{"shape", Value(), "the output shape", AttrType::kInts};

CompositeFn FillWith(double value) {
  return [value](const std::vector<Tensor>&, const Dict& attrs) -> std::vector<Tensor> {
    return {Fill(Attr(attrs, "shape"), value, DTypeOr("fill", attrs, DType::kFloat32))};
  };
}

MSRT_REGISTER_OP({.name = "zeros",
                  .inputs = {},
                  .attrs = {kSizeAttr, kOptionalDType},
                  .composite = FillWith(0.0),
                  .doc = "zeros of shape; dtype None: float32 (composite)",
                  .api = {Function("zeros(size->shape, dtype=None)"),
                          Primitive("array_ops.Zeros()(size->shape, type->dtype=None)")}});

MSRT_REGISTER_OP({.name = "ones",
                  .inputs = {},
                  .attrs = {kSizeAttr, kOptionalDType},
                  .composite = FillWith(1.0),
                  .doc = "ones of shape; dtype None: float32 (composite)",
                  .api = {Function("ones(shape, dtype=None)"),
                          Primitive("array_ops.Ones()(size->shape, type->dtype=None)")}});

MSRT_REGISTER_OP({.name = "full_like",
                  .inputs = {"x"},
                  .attrs = {{"fill_value", Value(), "the value", AttrType::kScalar}, kOptionalDType},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    const Shape& shape = in[0].shape();
                    return {Fill(IntList(std::vector<int64_t>(shape.begin(), shape.end())),
                                 Attr(attrs, "fill_value").as_float(), DTypeOr("full_like", attrs, in[0].dtype()))};
                  },
                  .doc = "fill_value in x's shape; dtype None: x's (composite)",
                  .api = {Function("full_like(input->x, fill_value, *, dtype=None)"),
                          Method("fill(self->x, value->fill_value)"),
                          Primitive("array_ops.Fills()(x, value->fill_value)")}});

// zeros_like or ones_like, cast when a dtype is given.
CompositeFn LikeCast(std::string_view like) {
  return [like](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
    Tensor out = Call1(like, {in[0]});
    if (Attr(attrs, "dtype").is_none()) return {out};
    return {Call1("cast", {out}, Dict{{"dtype", Attr(attrs, "dtype")}})};
  };
}

MSRT_REGISTER_OP({.name = "zeros_like_dtype",
                  .inputs = {"x"},
                  .attrs = {kOptionalDType},
                  .composite = LikeCast("zeros_like"),
                  .doc = "zeros of x's shape, of dtype (None: x's) (composite)",
                  .api = {Function("zeros_like(input->x, *, dtype=None)")}});

MSRT_REGISTER_OP({.name = "ones_like_dtype",
                  .inputs = {"x"},
                  .attrs = {kOptionalDType},
                  .composite = LikeCast("ones_like"),
                  .doc = "ones of x's shape, of dtype (None: x's) (composite)",
                  .api = {Function("ones_like(input->x, *, dtype=None)")}});

MSRT_REGISTER_OP(
    {.name = "eye",
     .inputs = {},
     .attrs = {{"n", Value(), "rows", AttrType::kInt},
               {"m", Value(), "columns (None: n)", AttrType::kInt, {}, true},
               kOptionalDType},
     .composite = [](const std::vector<Tensor>&, const Dict& attrs) -> std::vector<Tensor> {
       int64_t n = AttrInt(attrs, "n");
       int64_t m = Attr(attrs, "m").is_none() ? n : AttrInt(attrs, "m");
       if (n < 0 || m < 0) {
         OpError(ErrorKind::kValue, "eye",
                 StrCat("negative dimensions are not allowed; expected n >= 0 and m >= 0, but got n=", n,
                        " and m=", m));
       }
       Tensor rows = Call1("arange", {},
                           Dict{{"start", Value(int64_t{0})},
                                {"end", Value(n)},
                                {"step", Value(int64_t{1})},
                                {"dtype", DTypeValue(DType::kInt64)}});
       return {Call1("one_hot", {rows},
                     Dict{{"depth", Value(m)},
                          {"on_value", Value(1.0)},
                          {"off_value", Value(0.0)},
                          {"axis", Value(int64_t{-1})},
                          {"dtype", DTypeValue(DTypeOr("eye", attrs, DType::kFloat32))}})};
     },
     .doc = "the n x m identity (ones on the diagonal); dtype None: float32 (composite: one_hot of arange(n))",
     .api = {Function("eye(n, m=None, dtype=None)")}});

}  // namespace
}  // namespace msrt::ops
