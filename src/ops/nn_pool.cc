// 2-D max and average pooling and their gradient ops (shape rules: Note
// [Same padding] in nn_geometry.h). Average pooling divides by the number of
// input elements under the window, padding excluded, as MindSpore does.
// max_pool2d_ext and avg_pool2d_ext are MindSpore's functional forms.
#include "ops/call.h"
#include "ops/nn_geometry.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

const std::vector<AttrSpec> kPoolAttrs = {
    {"kernel_size", Value(List{Value(1), Value(1)}), "(h, w) window, or an int for both", AttrType::kPair},
    {"strides", Value(List{Value(1), Value(1)}), "(h, w) stride, or an int for both", AttrType::kPair},
    {"pad_mode",
     Value("valid"),
     "'valid' or 'same', any case",
     AttrType::kPadMode,
     {},
     false,
     [](std::string_view op, const Value& v) {
       if (v.as_string() == "pad") {
         OpError(ErrorKind::kValue, op, "'pad_mode' must be one of 'same' or 'valid'; but got 'pad'");
       }
     }},
    {kDataFormatAttr, Value(kChannelsFirst), "layout of x, y and dy: 'NCHW' or 'NHWC' (channels-last)",
     AttrType::kDataFormat},
};

Dict PoolAttrs(const Dict& attrs) {
  Dict out;
  using Names = std::initializer_list<std::string_view>;
  for (std::string_view name : Names{"kernel_size", "strides", "pad_mode", kDataFormatAttr}) {
    out.Set(std::string(name), Attr(attrs, name));
  }
  return out;
}

void CheckOutputShaped(std::string_view op, std::string_view input, const TensorMeta& meta, const Pool2dGeometry& g) {
  if (meta.shape != g.output_shape()) {
    OpError(ErrorKind::kValue, op,
            StrCat("input '", input, "' must have the pooling's output shape; expected ", ShapeRepr(g.output_shape()),
                   ", but got ", ShapeRepr(meta.shape)));
  }
}

std::vector<TensorMeta> InferPool(std::string_view op, const std::vector<TensorMeta>& in, const Dict& attrs) {
  CheckDType(op, "x", in[0], DTypeClass::kFloat);
  return {{PoolGeometry(op, in[0].shape, attrs).output_shape(), in[0].dtype}};
}

MSRT_REGISTER_OP({
    .name = "max_pool2d",
    .inputs = {"x"},
    .attrs = kPoolAttrs,
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) { return InferPool("max_pool2d", in, attrs); },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      return {Call1("max_pool2d_grad", {g.inputs[0], g.outputs[0], g.dys[0]}, PoolAttrs(g.attrs))};
    },
    .props = {.layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}}},
    .doc = "Maximum over each window of NCHW (or NHWC) x (padding never wins).",
    .api = {Primitive("nn_ops.MaxPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)")},
});

MSRT_REGISTER_OP({
    .name = "max_pool2d_grad",
    .inputs = {"x", "y", "dy"},
    .attrs = kPoolAttrs,
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "max_pool2d_grad";
      CheckDType(op, "x", in[0], DTypeClass::kFloat);
      CheckSameDType(op, "x", in[0], "y", in[1]);
      CheckSameDType(op, "x", in[0], "dy", in[2]);
      Pool2dGeometry g = PoolGeometry(op, in[0].shape, attrs);
      CheckOutputShaped(op, "y", in[1], g);
      CheckOutputShaped(op, "dy", in[2], g);
      return {{in[0].shape, in[0].dtype}};
    },
    .props = {.layout = LayoutSpec{.activation_inputs = {0, 1, 2}, .activation_outputs = {0}}},
    .doc = "Gradient of max_pool2d: dy routed to the first maximum of each window.",
});

MSRT_REGISTER_OP({
    .name = "avg_pool2d",
    .inputs = {"x"},
    .attrs = kPoolAttrs,
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) { return InferPool("avg_pool2d", in, attrs); },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      return {Call1("avg_pool2d_grad", {g.inputs[0], g.dys[0]}, PoolAttrs(g.attrs))};
    },
    .props = {.layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}}},
    .doc = "Mean over each window of NCHW (or NHWC) x (padding excluded from the count).",
    .api = {Primitive("nn_ops.AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)")},
});

MSRT_REGISTER_OP({
    .name = "avg_pool2d_grad",
    .inputs = {"x", "dy"},
    .attrs = kPoolAttrs,
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "avg_pool2d_grad";
      CheckDType(op, "x", in[0], DTypeClass::kFloat);
      CheckSameDType(op, "x", in[0], "dy", in[1]);
      CheckOutputShaped(op, "dy", in[1], PoolGeometry(op, in[0].shape, attrs));
      return {{in[0].shape, in[0].dtype}};
    },
    // Linear in dy; x only gives the shape.
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      Tensor d_dy;
      if (g.needs[1]) d_dy = Call1("avg_pool2d", {g.dys[0]}, PoolAttrs(g.attrs));
      return {Tensor(), d_dy};
    },
    .props = {.layout = LayoutSpec{.activation_inputs = {0, 1}, .activation_outputs = {0}}},
    .doc = "Gradient of avg_pool2d: dy spread evenly over each window's input elements.",
});

// MindSpore's functional pooling: the stride defaults to the window; msrt has
// no explicit padding, dilation or ceil mode (their forms refuse them).
OpDef PoolExt(std::string_view name, std::string_view pool, Value kernel_default, std::string_view doc,
              std::vector<ApiForm> api) {
  return OpDef{
      .name = name,
      .inputs = {"x"},
      .attrs = {{"kernel_size", std::move(kernel_default), "(h, w) window, or an int for both", AttrType::kPair},
                {"strides", Value(), "(h, w) stride, or an int for both; None: the window", AttrType::kPair, {}, true}},
      .composite = [pool](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
        const Value& strides = Attr(attrs, "strides");
        Dict call{{"kernel_size", Attr(attrs, "kernel_size")},
                  {"strides", strides.is_none() ? Attr(attrs, "kernel_size") : strides},
                  {"pad_mode", Value("valid")}};
        return {Call1(pool, {in[0]}, call)};
      },
      .doc = doc,
      .api = std::move(api),
  };
}

const bool kPoolExtsRegistered = [] {
  RegisterOp(PoolExt("max_pool2d_ext", "max_pool2d", Value(),
                     "max_pool2d over 'valid' windows, the stride defaulting to the window (composite)",
                     {Function("max_pool2d(x, kernel_size, stride->strides=None, padding->!=0, dilation->!=1, "
                               "return_indices->!=False, ceil_mode->!=False)")}));
  RegisterOp(PoolExt("avg_pool2d_ext", "avg_pool2d", Value(List{Value(1), Value(1)}),
                     "avg_pool2d over 'valid' windows, the stride defaulting to the window (composite)",
                     {Function("avg_pool2d(input_x->x, kernel_size=1, stride->strides=1, padding->!=0, "
                               "ceil_mode->!=False, count_include_pad->~=True, divisor_override->!=None)")}));
  return true;
}();

}  // namespace
}  // namespace msrt::ops
