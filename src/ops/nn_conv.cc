// 2-D and 3-D convolution and their two backward ops. Each is linear in each
// input, so the gradients of all three are members of the same family (Note
// [Same padding] in nn_geometry.h gives the shape rules). conv2d_ext and
// conv3d_ext are MindSpore's functional conv2d and conv3d over them.
#include <algorithm>
#include <optional>

#include "ops/call.h"
#include "ops/nn_geometry.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

// The three ops of a convolution family (2-D or 3-D) by name, so each
// family's gradient rules call their own members.
struct ConvFamily {
  int spatial;
  std::string_view conv, backprop_input, backprop_filter, data_format, data_format_doc;
};
constexpr ConvFamily kConv2d{2,
                             "conv2d",
                             "conv2d_backprop_input",
                             "conv2d_backprop_filter",
                             kChannelsFirst,
                             "layout of x and dy: 'NCHW' or 'NHWC' (channels-last)"};
constexpr ConvFamily kConv3d{
    3, "conv3d", "conv3d_backprop_input", "conv3d_backprop_filter", "NCDHW", "layout of x and dy: 'NCDHW'"};

const ConvFamily& FamilyOf(std::string_view op) { return op.starts_with("conv3d") ? kConv3d : kConv2d; }

std::vector<AttrSpec> ConvAttrSpecs(const ConvFamily& f, std::vector<AttrSpec> extra = {}) {
  std::vector<AttrSpec> specs = std::move(extra);
  bool three = f.spatial == 3;
  AttrType window = three ? AttrType::kTriple : AttrType::kPair;
  Value ones = three ? IntList({1, 1, 1}) : IntList({1, 1});
  specs.push_back(
      {"stride", ones, three ? "(d, h, w) stride, or an int for all" : "(h, w) stride, or an int for both", window});
  specs.push_back({"pad_mode", Value("same"), "'same', 'valid' or 'pad'", AttrType::kPadMode});
  if (three) {
    specs.push_back({"pad", IntList({0, 0, 0, 0, 0, 0}),
                     "(front, back, top, bottom, left, right) padding for pad_mode 'pad'", AttrType::kPadding6});
  } else {
    specs.push_back(
        {"pad", IntList({0, 0, 0, 0}), "(top, bottom, left, right) padding for pad_mode 'pad'", AttrType::kPadding});
  }
  specs.push_back({"dilation", ones,
                   three ? "(d, h, w) dilation, or an int for all" : "(h, w) dilation, or an int for both", window});
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
  if (three) {
    specs.push_back({kDataFormatAttr, Value(f.data_format), f.data_format_doc, AttrType::kString, {"NCDHW"}});
  } else {
    specs.push_back({kDataFormatAttr, Value(f.data_format), f.data_format_doc, AttrType::kDataFormat});
  }
  return specs;
}

// A shape attribute of 2 + spatial positive ints.
Shape ShapeAttrOfRank(std::string_view op, const Dict& attrs, std::string_view name, size_t rank) {
  std::vector<int64_t> shape = ShapeAttr(op, attrs, name, 1);
  if (shape.size() != rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", name, "' must list ", rank, " positive sizes; but got ", Attr(attrs, name).repr()));
  }
  return shape;
}

void CheckDy(std::string_view op, const TensorMeta& dy, const ConvDims& g) {
  if (dy.shape != g.output_shape()) {
    OpError(ErrorKind::kValue, op,
            StrCat("input 'dy' must have ", FamilyOf(op).conv, "'s output shape; expected ",
                   ShapeRepr(g.output_shape()), ", but got ", ShapeRepr(dy.shape)));
  }
}

Dict WithShape(const Dict& attrs, std::string_view name, const Shape& shape) {
  Dict out = ConvAttrs(attrs);
  out.Set(std::string(name), IntList(shape));
  return out;
}

Tensor BackpropInput(const ConvFamily& f, const Tensor& dy, const Tensor& w, const Shape& input_shape,
                     const Dict& attrs) {
  return Call1(f.backprop_input, {dy, w}, WithShape(attrs, "input_shape", input_shape));
}
Tensor BackpropFilter(const ConvFamily& f, const Tensor& dy, const Tensor& x, const Shape& filter_shape,
                      const Dict& attrs) {
  return Call1(f.backprop_filter, {dy, x}, WithShape(attrs, "filter_shape", filter_shape));
}
Tensor Conv(const ConvFamily& f, const Tensor& x, const Tensor& w, const Dict& attrs) {
  return Call1(f.conv, {x, w}, ConvAttrs(attrs));
}

// A 2-D family's activations may run channels-last in a graph (Note
// [Channels-last graphs]); a 3-D family's are 5-D and keep their layout.
std::optional<LayoutSpec> Layout(const ConvFamily& f, LayoutSpec spec) {
  if (f.spatial != 2) return std::nullopt;
  spec.prefers_channels_last = true;
  return spec;
}

OpDef ConvOp(const ConvFamily& f, std::string_view doc, std::vector<ApiForm> api) {
  return OpDef{
      .name = f.conv,
      .inputs = {"x", "weight"},
      .attrs = ConvAttrSpecs(f),
      .infer = [&f](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
        CheckDType(f.conv, "x", in[0], DTypeClass::kFloat);
        CheckSameDType(f.conv, "x", in[0], "weight", in[1]);
        return {{ConvGeometry(f.conv, in[0].shape, in[1].shape, attrs).output_shape(), in[0].dtype}};
      },
      .grad = [&f](const GradArgs& g) -> std::vector<Tensor> {
        const Tensor& x = g.inputs[0];
        const Tensor& w = g.inputs[1];
        Tensor dx, dw;
        if (g.needs[0]) dx = BackpropInput(f, g.dys[0], w, x.shape(), g.attrs);
        if (g.needs[1]) dw = BackpropFilter(f, g.dys[0], x, w.shape(), g.attrs);
        return {dx, dw};
      },
      .props = {.half_compute = HalfCompute::kRoundedFloat32,
                .accepts_epilogue = true,
                .layout = Layout(f, {.activation_inputs = {0}, .activation_outputs = {0}})},
      .doc = doc,
      .api = std::move(api),
      .attrs_check = CheckPadWithMode,
  };
}

OpDef BackpropInputOp(const ConvFamily& f, std::string_view input_doc, std::string_view doc) {
  return OpDef{
      .name = f.backprop_input,
      .inputs = {"dy", "weight"},
      .attrs = ConvAttrSpecs(f, {{"input_shape", Value(), input_doc}}),
      .infer = [&f](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
        std::string_view op = f.backprop_input;
        CheckDType(op, "dy", in[0], DTypeClass::kFloat);
        CheckSameDType(op, "dy", in[0], "weight", in[1]);
        Shape input_shape = ShapeAttrOfRank(op, attrs, "input_shape", static_cast<size_t>(f.spatial) + 2);
        CheckDy(op, in[0], ConvGeometry(op, input_shape, in[1].shape, attrs));
        return {{input_shape, in[0].dtype}};
      },
      .grad = [&f](const GradArgs& g) -> std::vector<Tensor> {
        const Tensor& dy = g.inputs[0];
        const Tensor& w = g.inputs[1];
        const Tensor& ddx = g.dys[0];
        Tensor d_dy, d_w;
        if (g.needs[0]) d_dy = Conv(f, ddx, w, g.attrs);
        if (g.needs[1]) d_w = BackpropFilter(f, dy, ddx, w.shape(), g.attrs);
        return {d_dy, d_w};
      },
      .props = {.half_compute = HalfCompute::kRoundedFloat32,
                .layout =
                    Layout(f, {.activation_inputs = {0}, .activation_outputs = {0}, .shape_attrs = {"input_shape"}})},
      .doc = doc,
      .attrs_check = CheckPadWithMode,
  };
}

OpDef BackpropFilterOp(const ConvFamily& f, std::string_view filter_doc, std::string_view doc) {
  return OpDef{
      .name = f.backprop_filter,
      .inputs = {"dy", "x"},
      .attrs = ConvAttrSpecs(f, {{"filter_shape", Value(), filter_doc}}),
      .infer = [&f](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
        std::string_view op = f.backprop_filter;
        CheckDType(op, "dy", in[0], DTypeClass::kFloat);
        CheckSameDType(op, "dy", in[0], "x", in[1]);
        Shape filter_shape = ShapeAttrOfRank(op, attrs, "filter_shape", static_cast<size_t>(f.spatial) + 2);
        CheckDy(op, in[0], ConvGeometry(op, in[1].shape, filter_shape, attrs));
        return {{filter_shape, in[0].dtype}};
      },
      .grad = [&f](const GradArgs& g) -> std::vector<Tensor> {
        const Tensor& dy = g.inputs[0];
        const Tensor& x = g.inputs[1];
        const Tensor& ddw = g.dys[0];
        Tensor d_dy, d_x;
        if (g.needs[0]) d_dy = Conv(f, x, ddw, g.attrs);
        if (g.needs[1]) d_x = BackpropInput(f, dy, ddw, x.shape(), g.attrs);
        return {d_dy, d_x};
      },
      .props = {.half_compute = HalfCompute::kRoundedFloat32,
                .layout = Layout(f, {.activation_inputs = {0, 1}, .activation_outputs = {}})},
      .doc = doc,
      .attrs_check = CheckPadWithMode,
  };
}

// conv2d then bias_add as one op (one oneDNN primitive with a bias), which
// the fuse_pairs pass makes of the two in a graph (Note [Fused pairs] in
// src/compiler/fusion.cc).
OpDef BiasedConvOp(const ConvFamily& f) {
  return OpDef{
      .name = "conv2d_bias",
      .inputs = {"x", "weight", "bias"},
      .attrs = ConvAttrSpecs(f),
      .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
        constexpr std::string_view op = "conv2d_bias";
        CheckDType(op, "x", in[0], DTypeClass::kFloat);
        CheckSameDType(op, "x", in[0], "weight", in[1]);
        CheckSameDType(op, "x", in[0], "bias", in[2]);
        ConvDims g = ConvGeometry(op, in[0].shape, in[1].shape, attrs);
        if (in[2].shape != Shape{g.out_channels}) {
          OpError(ErrorKind::kValue, op,
                  StrCat("input 'bias' must have shape (out_channels,); expected (", g.out_channels, ",), but got ",
                         ShapeRepr(in[2].shape)));
        }
        return {{g.output_shape(), in[0].dtype}};
      },
      .grad = [&f](const GradArgs& g) -> std::vector<Tensor> {
        const Tensor& x = g.inputs[0];
        const Tensor& w = g.inputs[1];
        Tensor dx, dw, db;
        if (g.needs[0]) dx = BackpropInput(f, g.dys[0], w, x.shape(), g.attrs);
        if (g.needs[1]) dw = BackpropFilter(f, g.dys[0], x, w.shape(), g.attrs);
        if (g.needs[2]) {
          db = Call1("bias_add_grad", {g.dys[0]},
                     Dict{{std::string(kDataFormatAttr), Value(AttrString(g.attrs, kDataFormatAttr))}});
        }
        return {dx, dw, db};
      },
      .props = {.half_compute = HalfCompute::kRoundedFloat32,
                .accepts_epilogue = true,
                .fuses = {f.conv, "bias_add"},
                .layout = Layout(f, {.activation_inputs = {0}, .activation_outputs = {0}})},
      .doc =
          "conv2d of x with weight, then bias added along the channel axis (internal: what a graph runs for "
          "conv2d followed by bias_add, as one kernel).",
      .attrs_check = CheckPadWithMode,
  };
}

const bool kConvOpsRegistered = [] {
  RegisterOp(ConvOp(kConv2d,
                    "2-D convolution (cross-correlation) of NCHW (or NHWC) x with weight (out, in / group, kh, kw).",
                    // MindSpore's Conv2D: out_channel, kernel_size and mode describe the weight the call is given.
                    {Primitive("nn_ops.Conv2D(out_channel->~, kernel_size->~, mode->~=1, pad_mode='valid', pad=0, "
                               "stride=1, dilation=1, group=1, data_format='NCHW')(x, weight)")}));
  RegisterOp(BackpropInputOp(kConv2d, "shape of conv2d's x (N, C, H, W), or (N, H, W, C) for NHWC",
                             "Gradient of conv2d with respect to x, given dy and weight."));
  RegisterOp(BackpropFilterOp(kConv2d, "shape (out, in / group, kh, kw) of conv2d's weight",
                              "Gradient of conv2d with respect to weight, given dy and x."));
  RegisterOp(BiasedConvOp(kConv2d));
  RegisterOp(ConvOp(kConv3d,
                    "3-D convolution (cross-correlation) of NCDHW x with weight (out, in / group, kd, kh, kw).",
                    {Primitive("nn_ops.Conv3D(out_channel->~, kernel_size->~, mode->~=1, stride=1, pad_mode='valid', "
                               "pad=0, dilation=1, group=1, data_format='NCDHW')(x, weight)")}));
  RegisterOp(BackpropInputOp(kConv3d, "shape of conv3d's x (N, C, D, H, W)",
                             "Gradient of conv3d with respect to x, given dy and weight."));
  RegisterOp(BackpropFilterOp(kConv3d, "shape (out, in / group, kd, kh, kw) of conv3d's weight",
                              "Gradient of conv3d with respect to weight, given dy and x."));
  return true;
}();

// MindSpore's Conv3DTranspose: conv3d_backprop_input of dout with weight
// (in_channel, out_channel / group, kd, kh, kw), its output size along each
// axis (in - 1) * stride - before - after + dilation * (k - 1) + 1 +
// output_padding in pad mode; in * stride + output_padding ('same') and
// (in - 1) * stride + dilation * (k - 1) + 1 + output_padding ('valid').
std::vector<int64_t> OutputPadding(std::string_view op, const Value& v) {
  static const AttrSpec kSpec{"output_padding", Value(), "", AttrType::kInts};
  std::vector<int64_t> p = AttrInts(Dict{{"output_padding", ParseAttr(op, kSpec, v)}}, "output_padding");
  if (p.size() == 1) p.assign(3, p[0]);
  if (p.size() != 3 || std::any_of(p.begin(), p.end(), [](int64_t x) { return x < 0; })) {
    OpError(ErrorKind::kValue, op,
            StrCat("'output_padding' must be a non-negative int or 3 of them; but got ", v.repr()));
  }
  return p;
}

void CheckConv3dTranspose(std::string_view op, const Dict& attrs) {
  CheckPadWithMode(op, attrs);
  const Value* output_padding = attrs.Find("output_padding");
  const Value* stride = attrs.Find("stride");
  const Value* dilation = attrs.Find("dilation");
  if (output_padding == nullptr) return;
  std::vector<int64_t> p = OutputPadding(op, *output_padding);
  if (stride == nullptr || dilation == nullptr) return;
  for (size_t i = 0; i < 3; ++i) {
    int64_t s = stride->as_list()[i].as_int(), d = dilation->as_list()[i].as_int();
    if (p[i] >= std::max(s, d)) {
      OpError(ErrorKind::kValue, op,
              StrCat("'output_padding' must be smaller than 'stride' or 'dilation' along each axis; but got ",
                     output_padding->repr(), " with stride ", stride->repr(), " and dilation ", dilation->repr()));
    }
  }
}

MSRT_REGISTER_OP({
    .name = "conv3d_transpose",
    .inputs = {"dout", "weight"},
    .attrs =
        [] {
          std::vector<AttrSpec> specs = ConvAttrSpecs(kConv3d);
          specs[1].default_value = Value("valid");  // pad_mode
          specs.push_back({"output_padding",
                           Value(0),
                           "extra size at the end of each axis: an int or (d, h, w)",
                           AttrType::kAny,
                           {},
                           false,
                           [](std::string_view op, const Value& v) { OutputPadding(op, v); }});
          return specs;
        }(),
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      constexpr std::string_view op = "conv3d_transpose";
      const Shape& x = in[0].shape();
      const Shape& w = in[1].shape();
      if (x.size() != 5 || w.size() != 5) {
        OpError(ErrorKind::kValue, op,
                StrCat("dout and weight must be 5-D; but got shapes ", ShapeRepr(x), " and ", ShapeRepr(w)));
      }
      std::vector<int64_t> stride = AttrInts(attrs, "stride"), dilation = AttrInts(attrs, "dilation");
      std::vector<int64_t> pad = AttrInts(attrs, "pad");
      std::vector<int64_t> extra = OutputPadding(op, Attr(attrs, "output_padding"));
      std::string mode = AttrString(attrs, "pad_mode");
      Shape input_shape{x[0], CheckedMul(w[1], AttrInt(attrs, "group"), op)};
      for (size_t i = 0; i < 3; ++i) {
        int64_t size = x[i + 2], extent = CheckedMul(dilation[i], w[i + 2] - 1, op) + 1;
        int64_t out = mode == "same" ? CheckedMul(size, stride[i], op)
                                     : CheckedAdd(CheckedMul(size - 1, stride[i], op), extent, op) -
                                           (mode == "pad" ? pad[2 * i] + pad[2 * i + 1] : 0);
        input_shape.push_back(out + extra[i]);
      }
      if (std::any_of(input_shape.begin() + 2, input_shape.end(), [](int64_t v) { return v <= 0; })) {
        OpError(ErrorKind::kValue, op, StrCat("the output would be empty: shape ", ShapeRepr(input_shape)));
      }
      return {BackpropInput(kConv3d, in[0], in[1], input_shape, attrs)};
    },
    .doc = "MindSpore's Conv3DTranspose: conv3d_backprop_input of dout with weight (in, out / group, kd, kh, kw), "
           "the output's size from the attributes (composite)",
    .api = {Primitive("nn_ops.Conv3DTranspose(in_channel->~, out_channel->~, kernel_size->~, mode->~=1, stride=1, "
                      "pad_mode='valid', pad=0, dilation=1, group=1, output_padding=0, "
                      "data_format='NCDHW')(dout, weight)")},
    .attrs_check = CheckConv3dTranspose,
});

// MindSpore's functional conv2d and conv3d spell padding their own way:
// `padding` may name the pad mode ('same', 'valid', 'pad'), or give an int,
// one int per spatial axis (both sides) or one per side; explicit padding
// with pad_mode 'valid' means 'pad'.
struct ConvPadding {
  std::optional<std::string> mode;  // when `padding` named it
  Value pad;                        // 2 * spatial ints
};

ConvPadding ParseConvPadding(std::string_view op, const Value& padding, int spatial) {
  static const AttrSpec kMode{"padding", Value(), "", AttrType::kPadMode};
  if (padding.is_string()) {
    return {ParseAttr(op, kMode, padding).as_string(),
            IntList(std::vector<int64_t>(2 * static_cast<size_t>(spatial), 0))};
  }
  return {std::nullopt, ParseAxisPadding(op, padding, spatial)};
}

OpDef ConvExt(std::string_view name, int spatial, std::string_view conv, std::string_view doc, ApiForm api) {
  bool three = spatial == 3;
  return OpDef{
      .name = name,
      .inputs = {"x", "weight", "bias?"},
      .attrs = {{"stride", three ? IntList({1, 1, 1}) : IntList({1, 1}),
                 three ? "(d, h, w) stride, or an int for all" : "(h, w) stride, or an int for both",
                 three ? AttrType::kTriple : AttrType::kPair},
                {"pad_mode", Value("valid"), "'same', 'valid' or 'pad' (any case)", AttrType::kPadMode},
                {"padding",
                 Value(0),
                 three ? "a pad mode's name, or an int, (d, h, w) or (front, back, top, bottom, left, right)"
                       : "a pad mode's name, or an int, (h, w) or (top, bottom, left, right)",
                 AttrType::kAny,
                 {},
                 false,
                 [spatial](std::string_view op, const Value& v) { ParseConvPadding(op, v, spatial); }},
                {"dilation", three ? IntList({1, 1, 1}) : IntList({1, 1}),
                 three ? "(d, h, w) dilation, or an int for all" : "(h, w) dilation, or an int for both",
                 three ? AttrType::kTriple : AttrType::kPair},
                {"group", Value(1), "number of channel groups", AttrType::kInt}},
      .composite = [name, spatial, conv](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
        ConvPadding padding = ParseConvPadding(name, Attr(attrs, "padding"), spatial);
        std::string mode = padding.mode ? *padding.mode : AttrString(attrs, "pad_mode");
        const List& pad = padding.pad.as_list();
        bool padded = std::any_of(pad.begin(), pad.end(), [](const Value& p) { return p.as_int() != 0; });
        if (mode == "valid" && padded) mode = "pad";
        Dict call{{"stride", Attr(attrs, "stride")},
                  {"pad_mode", Value(mode)},
                  {"pad", padding.pad},
                  {"dilation", Attr(attrs, "dilation")},
                  {"group", Attr(attrs, "group")}};
        Tensor y = Call1(conv, {in[0], in[1]}, call);
        if (in[2].defined()) y = Call1("bias_add", {y, in[2]});
        return {y};
      },
      .doc = doc,
      .api = {std::move(api)},
  };
}

const bool kConvExtsRegistered = [] {
  RegisterOp(ConvExt("conv2d_ext", 2, "conv2d",
                     "MindSpore's functional conv2d: conv2d of x with weight, then bias_add when a bias is given; "
                     "`padding` may name the pad mode, and explicit padding means pad_mode 'pad' (composite)",
                     Function("conv2d(input->x, weight, bias=None, stride=1, pad_mode='valid', padding=0, "
                              "dilation=1, groups->group=1)")));
  RegisterOp(ConvExt("conv3d_ext", 3, "conv3d",
                     "MindSpore's functional conv3d: conv3d of x with weight, then bias_add when a bias is given; "
                     "`padding` may name the pad mode, and explicit padding means pad_mode 'pad' (composite)",
                     Function("conv3d(input->x, weight, bias=None, stride=1, pad_mode='valid', padding=0, "
                              "dilation=1, groups->group=1)")));
  return true;
}();

}  // namespace
}  // namespace msrt::ops
