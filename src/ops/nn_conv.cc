// 2-D convolution and its two backward ops. Each is linear in each input, so
// the gradients of all three are members of the same family (Note [Same
// padding] in nn_geometry.h gives the shape rules). conv2d_ext is MindSpore's
// functional conv2d over them.
#include <algorithm>
#include <optional>

#include "ops/call.h"
#include "ops/nn_geometry.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

std::vector<AttrSpec> ConvAttrSpecs(std::vector<AttrSpec> extra = {}) {
  std::vector<AttrSpec> specs = std::move(extra);
  specs.push_back({"stride", Value(List{Value(1), Value(1)}), "(h, w) stride, or an int for both", AttrType::kPair});
  specs.push_back({"pad_mode", Value("same"), "'same', 'valid' or 'pad'", AttrType::kPadMode});
  specs.push_back({"pad", Value(List{Value(0), Value(0), Value(0), Value(0)}),
                   "(top, bottom, left, right) padding for pad_mode 'pad'", AttrType::kPadding});
  specs.push_back(
      {"dilation", Value(List{Value(1), Value(1)}), "(h, w) dilation, or an int for both", AttrType::kPair});
  specs.push_back({"group",
                   Value(1),
                   "number of channel groups",
                   AttrType::kInt,
                   {},
                   false,
                   [](std::string_view op, const Value& v) {
                     if (v.as_int() < 1) {
                       OpError(ErrorKind::kValue, op, StrCat("'group' must be at least 1; but got ", v.as_int()));
                     }
                   }});
  specs.push_back({kDataFormatAttr, Value(kChannelsFirst), "layout of x and dy: 'NCHW' or 'NHWC' (channels-last)",
                   AttrType::kDataFormat});
  return specs;
}

// Explicit padding needs pad_mode 'pad' (checked where both are given, so a
// Conv2D primitive rejects it when it is built).
void CheckPadWithMode(std::string_view op, const Dict& attrs) {
  const Value* mode = attrs.Find("pad_mode");
  const Value* pad = attrs.Find("pad");
  if (mode == nullptr || pad == nullptr || mode->as_string() == "pad") return;
  for (const Value& p : pad->as_list()) {
    if (p.as_int() != 0) {
      OpError(ErrorKind::kValue, op,
              StrCat("'pad' must be zero when 'pad_mode' is not 'pad'; but got pad ", pad->repr(), " with pad_mode '",
                     mode->as_string(), "'"));
    }
  }
}

// A 4-D shape attribute of positive ints.
Shape Shape4Attr(std::string_view op, const Dict& attrs, std::string_view name) {
  std::vector<int64_t> shape = ShapeAttr(op, attrs, name, 1);
  if (shape.size() != 4) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", name, "' must list 4 positive sizes; but got ", Attr(attrs, name).repr()));
  }
  return shape;
}

void CheckDy(std::string_view op, const TensorMeta& dy, const Conv2dGeometry& g) {
  if (dy.shape != g.output_shape()) {
    OpError(ErrorKind::kValue, op,
            StrCat("input 'dy' must have conv2d's output shape; expected ", ShapeRepr(g.output_shape()), ", but got ",
                   ShapeRepr(dy.shape)));
  }
}

Dict WithShape(const Dict& attrs, std::string_view name, const Shape& shape) {
  Dict out = ConvAttrs(attrs);
  out.Set(std::string(name), IntList(shape));
  return out;
}

Tensor BackpropInput(const Tensor& dy, const Tensor& w, const Shape& input_shape, const Dict& attrs) {
  return Call1("conv2d_backprop_input", {dy, w}, WithShape(attrs, "input_shape", input_shape));
}
Tensor BackpropFilter(const Tensor& dy, const Tensor& x, const Shape& filter_shape, const Dict& attrs) {
  return Call1("conv2d_backprop_filter", {dy, x}, WithShape(attrs, "filter_shape", filter_shape));
}
Tensor Conv(const Tensor& x, const Tensor& w, const Dict& attrs) { return Call1("conv2d", {x, w}, ConvAttrs(attrs)); }

MSRT_REGISTER_OP({
    .name = "conv2d",
    .inputs = {"x", "weight"},
    .attrs = ConvAttrSpecs(),
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      CheckDType("conv2d", "x", in[0], DTypeClass::kFloat);
      CheckSameDType("conv2d", "x", in[0], "weight", in[1]);
      return {{ConvGeometry("conv2d", in[0].shape, in[1].shape, attrs).output_shape(), in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      const Tensor& x = g.inputs[0];
      const Tensor& w = g.inputs[1];
      Tensor dx, dw;
      if (g.needs[0]) dx = BackpropInput(g.dys[0], w, x.shape(), g.attrs);
      if (g.needs[1]) dw = BackpropFilter(g.dys[0], x, w.shape(), g.attrs);
      return {dx, dw};
    },
    .props = {.accepts_epilogue = true,
              .layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}, .prefers_channels_last = true}},
    .doc = "2-D convolution (cross-correlation) of NCHW (or NHWC) x with weight (out, in / group, kh, kw).",
    // MindSpore's Conv2D: out_channel, kernel_size and mode describe the weight the call is given.
    .api = {Primitive("nn_ops.Conv2D(out_channel->~, kernel_size->~, mode->~=1, pad_mode='valid', pad=0, stride=1, "
                      "dilation=1, group=1, data_format='NCHW')(x, weight)")},
    .attrs_check = CheckPadWithMode,
});

MSRT_REGISTER_OP({
    .name = "conv2d_backprop_input",
    .inputs = {"dy", "weight"},
    .attrs = ConvAttrSpecs({{"input_shape", Value(), "shape of conv2d's x (N, C, H, W), or (N, H, W, C) for NHWC"}}),
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "conv2d_backprop_input";
      CheckDType(op, "dy", in[0], DTypeClass::kFloat);
      CheckSameDType(op, "dy", in[0], "weight", in[1]);
      Shape input_shape = Shape4Attr(op, attrs, "input_shape");
      CheckDy(op, in[0], ConvGeometry(op, input_shape, in[1].shape, attrs));
      return {{input_shape, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      const Tensor& dy = g.inputs[0];
      const Tensor& w = g.inputs[1];
      const Tensor& ddx = g.dys[0];
      Tensor d_dy, d_w;
      if (g.needs[0]) d_dy = Conv(ddx, w, g.attrs);
      if (g.needs[1]) d_w = BackpropFilter(dy, ddx, w.shape(), g.attrs);
      return {d_dy, d_w};
    },
    .props = {.layout = LayoutSpec{.activation_inputs = {0},
                                   .activation_outputs = {0},
                                   .shape_attrs = {"input_shape"},
                                   .prefers_channels_last = true}},
    .doc = "Gradient of conv2d with respect to x, given dy and weight.",
    .attrs_check = CheckPadWithMode,
});

MSRT_REGISTER_OP({
    .name = "conv2d_backprop_filter",
    .inputs = {"dy", "x"},
    .attrs = ConvAttrSpecs({{"filter_shape", Value(), "shape (out, in / group, kh, kw) of conv2d's weight"}}),
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "conv2d_backprop_filter";
      CheckDType(op, "dy", in[0], DTypeClass::kFloat);
      CheckSameDType(op, "dy", in[0], "x", in[1]);
      Shape filter_shape = Shape4Attr(op, attrs, "filter_shape");
      CheckDy(op, in[0], ConvGeometry(op, in[1].shape, filter_shape, attrs));
      return {{filter_shape, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      const Tensor& dy = g.inputs[0];
      const Tensor& x = g.inputs[1];
      const Tensor& ddw = g.dys[0];
      Tensor d_dy, d_x;
      if (g.needs[0]) d_dy = Conv(x, ddw, g.attrs);
      if (g.needs[1]) d_x = BackpropInput(dy, ddw, x.shape(), g.attrs);
      return {d_dy, d_x};
    },
    .props = {.layout =
                  LayoutSpec{.activation_inputs = {0, 1}, .activation_outputs = {}, .prefers_channels_last = true}},
    .doc = "Gradient of conv2d with respect to weight, given dy and x.",
    .attrs_check = CheckPadWithMode,
});

// MindSpore's functional conv2d spells padding its own way: `padding` may
// name the pad mode ('same', 'valid', 'pad'), or give an int, (h, w) or
// (top, bottom, left, right); explicit padding with pad_mode 'valid' means 'pad'.
struct ConvPadding {
  std::optional<std::string> mode;  // when `padding` named it
  Value pad;                        // 4 ints
};

ConvPadding ParseConvPadding(std::string_view op, const Value& padding) {
  static const AttrSpec kMode{"padding", Value(), "", AttrType::kPadMode};
  static const AttrSpec kPad{"padding", Value(), "", AttrType::kPadding};
  if (padding.is_string()) return {ParseAttr(op, kMode, padding).as_string(), IntList({0, 0, 0, 0})};
  if (padding.is_sequence() && padding.as_list().size() == 2) {  // (h, w): the same on both sides
    const List& hw = padding.as_list();
    return {std::nullopt, ParseAttr(op, kPad, Value(List{hw[0], hw[0], hw[1], hw[1]}))};
  }
  return {std::nullopt, ParseAttr(op, kPad, padding)};
}

MSRT_REGISTER_OP({
    .name = "conv2d_ext",
    .inputs = {"x", "weight", "bias?"},
    .attrs = {{"stride", IntList({1, 1}), "(h, w) stride, or an int for both", AttrType::kPair},
              {"pad_mode", Value("valid"), "'same', 'valid' or 'pad' (any case)", AttrType::kPadMode},
              {"padding",
               Value(0),
               "a pad mode's name, or an int, (h, w) or (top, bottom, left, right)",
               AttrType::kAny,
               {},
               false,
               [](std::string_view op, const Value& v) { ParseConvPadding(op, v); }},
              {"dilation", IntList({1, 1}), "(h, w) dilation, or an int for both", AttrType::kPair},
              {"group", Value(1), "number of channel groups", AttrType::kInt}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      ConvPadding padding = ParseConvPadding("conv2d_ext", Attr(attrs, "padding"));
      std::string mode = padding.mode ? *padding.mode : AttrString(attrs, "pad_mode");
      const List& pad = padding.pad.as_list();
      bool padded = std::any_of(pad.begin(), pad.end(), [](const Value& p) { return p.as_int() != 0; });
      if (mode == "valid" && padded) mode = "pad";
      Dict conv{{"stride", Attr(attrs, "stride")},
                {"pad_mode", Value(mode)},
                {"pad", padding.pad},
                {"dilation", Attr(attrs, "dilation")},
                {"group", Attr(attrs, "group")}};
      Tensor y = Call1("conv2d", {in[0], in[1]}, conv);
      if (in[2].defined()) y = Call1("bias_add", {y, in[2]});
      return {y};
    },
    .doc = "MindSpore's functional conv2d: conv2d of x with weight, then bias_add when a bias is given; `padding` "
           "may name the pad mode, and explicit padding means pad_mode 'pad' (composite)",
    .api = {Function("conv2d(input->x, weight, bias=None, stride=1, pad_mode='valid', padding=0, dilation=1, "
                     "groups->group=1)")},
});

}  // namespace
}  // namespace msrt::ops
