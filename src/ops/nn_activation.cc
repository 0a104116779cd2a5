// The MindSpore functional forms of gelu, softmax and dropout (composites: no kernel, no
// gradient of their own).
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

// MindSpore names gelu's approximation ('none' or 'tanh'); the op takes a bool.
MSRT_REGISTER_OP({
    .name = "gelu_ext",
    .inputs = {"x"},
    .attrs = {{"approximate", Value("none"), "'none' (erf form) or 'tanh'", AttrType::kString, {"none", "tanh"}}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      return {Call1("gelu", {in[0]}, Dict{{"approximate", Value(AttrString(attrs, "approximate") == "tanh")}})};
    },
    .doc = "gelu with the approximation named: 'none' (erf) or 'tanh' (composite)",
    .api = {Function("gelu(input_x->x, approximate='none')")},
});

MSRT_REGISTER_OP({
    .name = "softmax_ext",
    .inputs = {"x"},
    .attrs = {{"axis", Value(-1), "the axis (or a sequence of one)", AttrType::kAxis},
              {"dtype", Value(), "cast x to it first (None: keep x's)", AttrType::kDType, {}, true}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      Tensor x = in[0];
      const Value& dtype = Attr(attrs, "dtype");
      if (!dtype.is_none()) x = Call1("cast", {x}, Dict{{"dtype", dtype}});
      return {Call1("softmax", {x}, Dict{{"axis", Attr(attrs, "axis")}})};
    },
    .doc = "softmax along axis, after casting x to dtype when one is given (composite)",
    .api = {Function("softmax(input->x, axis=-1, *, dtype=None)")},
});

// MindSpore's functional dropout, by its drop probability p. Its Python
// function returns the input object itself when nothing is dropped, which
// no op call can (ops.dropout in functional.py).
MSRT_REGISTER_OP({
    .name = "dropout_ext",
    .inputs = {"x"},
    .attrs = {{"p",
               Value(0.5),
               "probability of zeroing an element, in [0, 1]",
               AttrType::kFloat,
               {},
               false,
               [](std::string_view op, const Value& v) {
                 double p = v.as_float();
                 if (!(p >= 0.0 && p <= 1.0)) {
                   OpError(ErrorKind::kValue, op, StrCat("'p' must be in [0, 1]; but got ", v.repr()));
                 }
               }},
              {"training", Value(true), "drop only when True (otherwise x as it is)", AttrType::kBool}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      const Tensor& x = in[0];
      double p = AttrFloat(attrs, "p");
      if (!AttrBool(attrs, "training") || p == 0.0) return {x};
      if (p == 1.0) return {fn::ZerosLike(x)};
      return {Call("dropout", {x}, Dict{{"keep_prob", Value(1.0 - p)}})[0]};
    },
    .doc = "x with each element zeroed with probability p and the rest scaled by 1 / (1 - p), when training "
           "(composite)",
});

}  // namespace
}  // namespace msrt::ops
