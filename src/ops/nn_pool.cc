// 2-D and 3-D max and average pooling and their gradient ops (shape rules: Note
// [Same padding] in nn_geometry.h). Average pooling divides by the number of
// input elements under the window, padding excluded, as MindSpore does.
// (3-D: unless count_include_pad). max_pool2d_ext, avg_pool2d_ext,
// max_pool3d_ext and avg_pool3d_ext are MindSpore's functional forms.
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

// The attributes of `specs` in `attrs` (what a pooling passes to its gradient op).
Dict PoolAttrs(const Dict& attrs, const std::vector<AttrSpec>& specs) {
  Dict out;
  for (const AttrSpec& spec : specs) {
    if (const Value* v = attrs.Find(spec.name)) out.Set(std::string(spec.name), *v);
  }
  return out;
}

void CheckOutputShaped(std::string_view op, std::string_view input, const TensorMeta& meta, const PoolDims& g) {
  if (meta.shape != g.output_shape()) {
    OpError(ErrorKind::kValue, op,
            StrCat("input '", input, "' must have the pooling's output shape; expected ", ShapeRepr(g.output_shape()),
                   ", but got ", ShapeRepr(meta.shape)));
  }
}

// The pieces of the 2-D and 3-D pooling ops: `specs` names the attributes a
// pooling passes on to its gradient op (and a gradient back to its pooling).

// max_pool* and avg_pool*: a floating x pooled to the geometry's output shape.
InferFn PoolInfer(std::string_view op) {
  return [op](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
    CheckDType(op, "x", in[0], DTypeClass::kFloat);
    return {{PoolGeometry(op, in[0].shape, attrs).output_shape(), in[0].dtype}};
  };
}

// max_pool*_grad(x, y, dy): y and dy have the pooling's output shape; dx is x's.
InferFn MaxPoolGradInfer(std::string_view op) {
  return [op](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
    CheckDType(op, "x", in[0], DTypeClass::kFloat);
    CheckSameDType(op, "x", in[0], "y", in[1]);
    CheckSameDType(op, "x", in[0], "dy", in[2]);
    PoolDims g = PoolGeometry(op, in[0].shape, attrs);
    CheckOutputShaped(op, "y", in[1], g);
    CheckOutputShaped(op, "dy", in[2], g);
    return {{in[0].shape, in[0].dtype}};
  };
}

// avg_pool*_grad(x, dy): dy has the pooling's output shape; dx is x's.
InferFn AvgPoolGradInfer(std::string_view op) {
  return [op](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
    CheckDType(op, "x", in[0], DTypeClass::kFloat);
    CheckSameDType(op, "x", in[0], "dy", in[1]);
    CheckOutputShaped(op, "dy", in[1], PoolGeometry(op, in[0].shape, attrs));
    return {{in[0].shape, in[0].dtype}};
  };
}

// The gradient of max_pool*: its gradient op `grad_op` on (x, y, dy).
GradFn MaxPoolGrad(std::string_view grad_op, const std::vector<AttrSpec>& specs) {
  return [grad_op, &specs](const GradArgs& g) -> std::vector<Tensor> {
    return {Call1(grad_op, {g.inputs[0], g.outputs[0], g.dys[0]}, PoolAttrs(g.attrs, specs))};
  };
}

// The gradient of avg_pool*: its gradient op `grad_op` on (x, dy).
GradFn AvgPoolGrad(std::string_view grad_op, const std::vector<AttrSpec>& specs) {
  return [grad_op, &specs](const GradArgs& g) -> std::vector<Tensor> {
    return {Call1(grad_op, {g.inputs[0], g.dys[0]}, PoolAttrs(g.attrs, specs))};
  };
}

// The gradient of avg_pool*_grad: linear in dy, so the pooling `pool` of the
// incoming gradient; x only gives the shape.
GradFn AvgPoolGradGrad(std::string_view pool, const std::vector<AttrSpec>& specs) {
  return [pool, &specs](const GradArgs& g) -> std::vector<Tensor> {
    Tensor d_dy;
    if (g.needs[1]) d_dy = Call1(pool, {g.dys[0]}, PoolAttrs(g.attrs, specs));
    return {Tensor(), d_dy};
  };
}

MSRT_REGISTER_OP({
    .name = "max_pool2d",
    .inputs = {"x"},
    .attrs = kPoolAttrs,
    .infer = PoolInfer("max_pool2d"),
    .grad = MaxPoolGrad("max_pool2d_grad", kPoolAttrs),
    .props = {.half_compute = HalfCompute::kExact,
              .layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}}},
    .doc = "Maximum over each window of NCHW (or NHWC) x (padding never wins).",
    .api = {Primitive("nn_ops.MaxPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)")},
});

MSRT_REGISTER_OP({
    .name = "max_pool2d_grad",
    .inputs = {"x", "y", "dy"},
    .attrs = kPoolAttrs,
    .infer = MaxPoolGradInfer("max_pool2d_grad"),
    .props = {.layout = LayoutSpec{.activation_inputs = {0, 1, 2}, .activation_outputs = {0}}},
    .doc = "Gradient of max_pool2d: dy routed to the first maximum of each window.",
});

MSRT_REGISTER_OP({
    .name = "avg_pool2d",
    .inputs = {"x"},
    .attrs = kPoolAttrs,
    .infer = PoolInfer("avg_pool2d"),
    .grad = AvgPoolGrad("avg_pool2d_grad", kPoolAttrs),
    .props = {.layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}}},
    .doc = "Mean over each window of NCHW (or NHWC) x (padding excluded from the count).",
    .api = {Primitive("nn_ops.AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)")},
});

MSRT_REGISTER_OP({
    .name = "avg_pool2d_grad",
    .inputs = {"x", "dy"},
    .attrs = kPoolAttrs,
    .infer = AvgPoolGradInfer("avg_pool2d_grad"),
    .grad = AvgPoolGradGrad("avg_pool2d", kPoolAttrs),
    .props = {.layout = LayoutSpec{.activation_inputs = {0, 1}, .activation_outputs = {0}}},
    .doc = "Gradient of avg_pool2d: dy spread evenly over each window's input elements.",
});

// 3-D pooling of NCDHW x: explicit padding (pad_mode 'pad'), ceil_mode and,
// for the average, count_include_pad (Note [Ceil mode] in nn_geometry.h).
std::vector<AttrSpec> Pool3dAttrs(bool average) {
  std::vector<AttrSpec> specs = {
      {"kernel_size", IntList({1, 1, 1}), "(d, h, w) window, or an int for all", AttrType::kTriple},
      {"strides", IntList({1, 1, 1}), "(d, h, w) stride, or an int for all", AttrType::kTriple},
      {"pad_mode", Value("valid"), "'same', 'valid' or 'pad', any case", AttrType::kPadMode},
      {"pad", IntList({0, 0, 0, 0, 0, 0}), "(front, back, top, bottom, left, right) padding for pad_mode 'pad'",
       AttrType::kPadding6},
      {"ceil_mode", Value(false), "round the output size up (pad_mode 'pad'); None: False", AttrType::kBool, {}, true},
      {kDataFormatAttr, Value("NCDHW"), "layout of x, y and dy: 'NCDHW'", AttrType::kString, {"NCDHW"}},
  };
  if (average) {
    specs.push_back(
        {"count_include_pad", Value(true), "whether the padding counts in each window's mean", AttrType::kBool});
  }
  return specs;
}
const std::vector<AttrSpec> kMaxPool3dAttrs = Pool3dAttrs(false);
const std::vector<AttrSpec> kAvgPool3dAttrs = Pool3dAttrs(true);

// Explicit padding needs pad_mode 'pad', and each side's padding must be
// smaller than the window, so that every window meets the input.
void CheckPool3dPadding(std::string_view op, const Dict& attrs) {
  CheckPadWithMode(op, attrs);
  const Value* kernel = attrs.Find("kernel_size");
  const Value* pad = attrs.Find("pad");
  if (kernel == nullptr || pad == nullptr) return;
  const List& k = kernel->as_list();
  const List& p = pad->as_list();
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].as_int() >= k[i / 2].as_int()) {
      OpError(ErrorKind::kValue, op,
              StrCat("each 'pad' must be smaller than the window along its axis; but got pad ", pad->repr(),
                     " with kernel_size ", kernel->repr()));
    }
  }
}

MSRT_REGISTER_OP({
    .name = "max_pool3d",
    .inputs = {"x"},
    .attrs = kMaxPool3dAttrs,
    .infer = PoolInfer("max_pool3d"),
    .grad = MaxPoolGrad("max_pool3d_grad", kMaxPool3dAttrs),
    .doc = "Maximum over each window of NCDHW x (padding never wins).",
    .api = {Primitive("nn_ops.MaxPool3D(kernel_size=1, strides=1, pad_mode='VALID', pad_list->pad=0, "
                      "ceil_mode=None, data_format='NCDHW')(x)")},
    .attrs_check = CheckPool3dPadding,
});

MSRT_REGISTER_OP({
    .name = "max_pool3d_grad",
    .inputs = {"x", "y", "dy"},
    .attrs = kMaxPool3dAttrs,
    .infer = MaxPoolGradInfer("max_pool3d_grad"),
    .doc = "Gradient of max_pool3d: dy routed to the first maximum of each window.",
    .attrs_check = CheckPool3dPadding,
});

MSRT_REGISTER_OP({
    .name = "avg_pool3d",
    .inputs = {"x"},
    .attrs = kAvgPool3dAttrs,
    .infer = PoolInfer("avg_pool3d"),
    .grad = AvgPoolGrad("avg_pool3d_grad", kAvgPool3dAttrs),
    .doc = "Mean over each window of NCDHW x; with count_include_pad the padding counts (a ceil_mode window's "
           "part past the padding never does), else only the input elements.",
    .api = {Primitive("nn_ops.AvgPool3D(kernel_size=1, strides=1, pad_mode='valid', pad=0, ceil_mode=False, "
                      "count_include_pad=True, divisor_override->!=0, data_format='NCDHW')(x)")},
    .attrs_check = CheckPool3dPadding,
});

MSRT_REGISTER_OP({
    .name = "avg_pool3d_grad",
    .inputs = {"x", "dy"},
    .attrs = kAvgPool3dAttrs,
    .infer = AvgPoolGradInfer("avg_pool3d_grad"),
    .grad = AvgPoolGradGrad("avg_pool3d", kAvgPool3dAttrs),
    .doc = "Gradient of avg_pool3d: dy spread over each window's input elements, divided as the mean was.",
    .attrs_check = CheckPool3dPadding,
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

// MindSpore's functional 3-D pooling: explicit padding (an int, one per axis
// or one per side) always means pad_mode 'pad'; max_pool3d's stride
// defaults to the window.
OpDef Pool3dExt(std::string_view name, std::string_view pool, bool average, Value kernel_default, std::string_view doc,
                ApiForm api) {
  std::vector<AttrSpec> attrs = {
      {"kernel_size", std::move(kernel_default), "(d, h, w) window, or an int for all", AttrType::kTriple},
      {"strides", Value(), "(d, h, w) stride, or an int for all; None: the window", AttrType::kTriple, {}, true},
      {"padding",
       Value(0),
       "an int, (d, h, w) or (front, back, top, bottom, left, right)",
       AttrType::kAny,
       {},
       false,
       [](std::string_view op, const Value& v) { ParseAxisPadding(op, v, 3); }},
      {"ceil_mode", Value(false), "round the output size up", AttrType::kBool},
  };
  if (average) {
    attrs.push_back(
        {"count_include_pad", Value(true), "whether the padding counts in each window's mean", AttrType::kBool});
  }
  return OpDef{
      .name = name,
      .inputs = {"x"},
      .attrs = std::move(attrs),
      .composite = [name, pool, average](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
        const Value& strides = Attr(attrs, "strides");
        Dict call{{"kernel_size", Attr(attrs, "kernel_size")},
                  {"strides", strides.is_none() ? Attr(attrs, "kernel_size") : strides},
                  {"pad_mode", Value("pad")},
                  {"pad", ParseAxisPadding(name, Attr(attrs, "padding"), 3)},
                  {"ceil_mode", Attr(attrs, "ceil_mode")}};
        if (average) call.Set("count_include_pad", Attr(attrs, "count_include_pad"));
        return {Call1(pool, {in[0]}, call)};
      },
      .doc = doc,
      .api = {std::move(api)},
  };
}

const bool kPool3dExtsRegistered = [] {
  RegisterOp(Pool3dExt("max_pool3d_ext", "max_pool3d", false, Value(),
                       "max_pool3d with explicit padding, the stride defaulting to the window (composite)",
                       Function("max_pool3d(x, kernel_size, stride->strides=None, padding=0, dilation->!=1, "
                                "ceil_mode=False, return_indices->!=False)")));
  RegisterOp(Pool3dExt("avg_pool3d_ext", "avg_pool3d", true, IntList({1, 1, 1}),
                       "avg_pool3d with explicit padding (composite)",
                       Function("avg_pool3d(input_x->x, kernel_size=1, stride->strides=1, padding=0, "
                                "ceil_mode=False, count_include_pad=True, divisor_override->!=0)")));
  return true;
}();

}  // namespace
}  // namespace msrt::ops
