// interpolate: resizing the spatial axes of (N, C, spatial...) by nearest
// or (bi/tri)linear sampling, with PyTorch's and MindSpore's coordinate
// rules. A composite: one axis at a time, gathers of precomputed source
// indices (and, for linear modes, a blend of two gathers), so gradients
// and graph mode come from gather.
#include <cmath>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

constexpr std::string_view kOp = "interpolate";

// An int or float, or a sequence of them, as one value per spatial axis.
std::vector<double> PerAxis(std::string_view name, const Value& v, int64_t spatial) {
  std::vector<double> out;
  if (v.is_sequence()) {
    for (const Value& item : v.as_list()) out.push_back(item.as_float());
    if (static_cast<int64_t>(out.size()) != spatial) {
      OpError(ErrorKind::kValue, kOp,
              StrCat("'", name, "' must have one entry per spatial axis; expected ", spatial, ", but got ", v.repr()));
    }
  } else {
    out.assign(static_cast<size_t>(spatial), v.as_float());
  }
  return out;
}

void CheckSizeLike(std::string_view op, const Value& v, bool integral, std::string_view name) {
  auto ok = [&](const Value& item) { return integral ? item.is_int() : (item.is_int() || item.is_float()); };
  bool good = v.is_none() || ok(v);
  if (v.is_sequence()) {
    good = !v.as_list().empty();
    for (const Value& item : v.as_list()) good = good && ok(item);
  }
  if (!good) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute '", name, "' must be None, ",
                   integral ? "an int or a tuple of ints" : "a number or a tuple of numbers", ", but got ",
                   v.type_name(), " ", v.repr()));
  }
}

Tensor Floats(const std::vector<double>& values, const Shape& shape, DType dtype) {
  Tensor t = Tensor::FromHost(values.data(), values.size() * sizeof(double), shape, DType::kFloat64);
  return dtype == DType::kFloat64 ? t : fn::Cast(t, dtype);
}

MSRT_REGISTER_OP(
    {.name = "interpolate",
     .inputs = {"x"},
     .attrs = {{.name = "size",
                .default_value = Value(),
                .doc = "the output's spatial size (an int or one per axis)",
                .type = AttrType::kAny,
                .optional = true,
                .check = [](std::string_view op, const Value& v) { CheckSizeLike(op, v, true, "size"); }},
               {.name = "scale_factor",
                .default_value = Value(),
                .doc = "the output's size over the input's (a number or one per axis)",
                .type = AttrType::kAny,
                .optional = true,
                .check = [](std::string_view op, const Value& v) { CheckSizeLike(op, v, false, "scale_factor"); }},
               {"mode",
                "nearest",
                "'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' (4-D) or 'trilinear' (5-D)",
                AttrType::kString,
                {"nearest", "nearest-exact", "linear", "bilinear", "trilinear", "bicubic", "area"}},
               {.name = "align_corners",
                .default_value = Value(),
                .doc = "linear modes: corner pixels' centres map onto each other (None: False)",
                .type = AttrType::kBool,
                .optional = true},
               {.name = "recompute_scale_factor",
                .default_value = Value(),
                .doc = "map coordinates by the sizes' ratio rather than by scale_factor",
                .type = AttrType::kBool,
                .optional = true}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       Tensor x = in[0];
       const std::string mode = AttrString(attrs, "mode");
       const int64_t nd = x.ndim();
       if (nd < 3 || nd > 5) {
         OpError(ErrorKind::kValue, kOp,
                 StrCat("input 'x' must be (N, C, spatial...) with 1 to 3 spatial axes; expected rank 3, 4 or 5, but "
                        "got shape ",
                        ShapeRepr(x.shape())));
       }
       const int64_t spatial = nd - 2;
       if (mode == "bicubic" || mode == "area") {
         OpError(ErrorKind::kNotImplemented, kOp,
                 StrCat("mode '", mode,
                        "' is not supported by msrt; expected 'nearest', 'nearest-exact', 'linear', 'bilinear' or "
                        "'trilinear'"));
       }
       const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
       const int64_t wanted_rank = mode == "linear" ? 3 : mode == "bilinear" ? 4 : 5;
       if (linear && nd != wanted_rank) {
         OpError(ErrorKind::kValue, kOp,
                 StrCat("mode '", mode, "' needs a ", wanted_rank, "-D input; expected rank ", wanted_rank,
                        ", but got shape ", ShapeRepr(x.shape())));
       }
       const Value& align_value = Attr(attrs, "align_corners");
       if (!linear && !align_value.is_none()) {
         OpError(ErrorKind::kValue, kOp,
                 StrCat("align_corners is only for the linear modes; expected None for mode '", mode, "', but got ",
                        align_value.repr()));
       }
       const bool align = !align_value.is_none() && align_value.as_bool();
       if (linear) CheckDType(kOp, "x", {x.shape(), x.dtype()}, DTypeClass::kFloat);
       const Value& size = Attr(attrs, "size");
       const Value& scale_factor = Attr(attrs, "scale_factor");
       if (size.is_none() == scale_factor.is_none()) {
         OpError(ErrorKind::kValue, kOp,
                 StrCat("exactly one of 'size' and 'scale_factor' must be given, but got ",
                        size.is_none() ? "neither" : "both"));
       }
       const Value& recompute = Attr(attrs, "recompute_scale_factor");
       const bool use_factor = !scale_factor.is_none() && !(!recompute.is_none() && recompute.as_bool());
       std::vector<double> factors;
       std::vector<int64_t> out_size;
       if (!scale_factor.is_none()) {
         factors = PerAxis("scale_factor", scale_factor, spatial);
         for (int64_t d = 0; d < spatial; ++d) {
           if (!(factors[d] > 0) || !std::isfinite(factors[d])) {
             OpError(ErrorKind::kValue, kOp, StrCat("'scale_factor' must be positive, but got ", scale_factor.repr()));
           }
           const double scaled = std::floor(static_cast<double>(x.shape()[2 + d]) * factors[d]);
           if (!(scaled < 9.2e18)) {  // a double beyond int64 has no defined conversion
             OpError(ErrorKind::kValue, kOp,
                     StrCat("the output size ", scaled, " of spatial axis ", d, " (input size ", x.shape()[2 + d],
                            " times scale_factor ", factors[d], ") is beyond int64"));
           }
           out_size.push_back(static_cast<int64_t>(scaled));
         }
       } else {
         for (double s : PerAxis("size", size, spatial)) out_size.push_back(static_cast<int64_t>(s));
       }
       for (int64_t d = 0; d < spatial; ++d) {
         if (out_size[d] <= 0) {
           OpError(ErrorKind::kValue, kOp,
                   StrCat("the output size must be positive on every spatial axis; but got ", IntsRepr(out_size),
                          " for input shape ", ShapeRepr(x.shape())));
         }
       }
       Shape checked = x.shape();
       for (int64_t d = 0; d < spatial; ++d) checked[2 + d] = out_size[d];
       CheckShape(checked, x.dtype(), kOp);
       for (int64_t d = 0; d < spatial; ++d) {
         const int64_t axis = 2 + d;
         const int64_t n = x.shape()[axis], m = out_size[d];
         // Output position j reads source coordinate j * scale (PyTorch's rules).
         const double scale = use_factor ? 1.0 / factors[d] : static_cast<double>(n) / static_cast<double>(m);
         if (!linear) {
           std::vector<int64_t> index(static_cast<size_t>(m));
           const float s = static_cast<float>(scale);  // in float, as PyTorch computes it
           for (int64_t j = 0; j < m; ++j) {
             const float offset = mode == "nearest-exact" ? 0.5f : 0.0f;
             const auto src = static_cast<int64_t>(std::floor((static_cast<float>(j) + offset) * s));
             index[j] = std::min(src, n - 1);
           }
           bool identity = m == n;
           for (int64_t j = 0; j < m && identity; ++j) identity = index[j] == j;
           if (!identity) x = fn::Gather(x, fn::Int64Tensor(index), axis);
           continue;
         }
         std::vector<int64_t> low(static_cast<size_t>(m)), high(static_cast<size_t>(m));
         std::vector<double> weight(static_cast<size_t>(m));
         for (int64_t j = 0; j < m; ++j) {
           double src;
           if (align) {
             src = m > 1 ? static_cast<double>(j) * static_cast<double>(n - 1) / static_cast<double>(m - 1) : 0.0;
           } else {
             src = std::max((static_cast<double>(j) + 0.5) * scale - 0.5, 0.0);
           }
           low[j] = std::min(static_cast<int64_t>(std::floor(src)), n - 1);
           high[j] = std::min(low[j] + 1, n - 1);
           weight[j] = std::min(src - static_cast<double>(low[j]), 1.0);
         }
         Shape weight_shape(static_cast<size_t>(nd), 1);
         weight_shape[axis] = m;
         Tensor a = fn::Gather(x, fn::Int64Tensor(low), axis);
         Tensor b = fn::Gather(x, fn::Int64Tensor(high), axis);
         x = fn::Add(a, fn::Mul(fn::Sub(b, a), Floats(weight, weight_shape, x.dtype())));
       }
       return {x.same(in[0]) ? Call1("identity", {x}) : x};
     },
     .doc = "x resized on its spatial axes (N, C, spatial...) to `size` or by `scale_factor`: nearest, nearest-exact "
            "or (bi/tri)linear sampling (composite of gathers)",
     .api = {Function("interpolate(input->x, size=None, scale_factor=None, mode='nearest', align_corners=None, "
                      "recompute_scale_factor=None)")}});

}  // namespace
}  // namespace msrt::ops
