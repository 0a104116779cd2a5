// Normalization: batch_norm over axis 1 (channels) of (N, C, ...) tensors, layer_norm and group_norm.
#include <algorithm>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

void CheckChannelVector(std::string_view op, std::string_view name, const TensorMeta& meta, int64_t channels) {
  if (meta.shape != Shape{channels}) {
    OpError(ErrorKind::kValue, op,
            StrCat("input '", name, "' must have shape (C,) with x's channels; expected (", channels, ",), but got ",
                   ShapeRepr(meta.shape)));
  }
}

void CheckActivation(std::string_view op, const TensorMeta& x) {
  CheckDType(op, "x", x, DTypeClass::kFloat);
  if (x.shape.size() < 2) {
    OpError(ErrorKind::kValue, op,
            StrCat("input 'x' must have rank 2 or more, (N, C, ...); but got shape ", ShapeRepr(x.shape)));
  }
}

void CheckEpsilon(std::string_view op, const Value& v) {
  if (!(v.as_float() > 0)) OpError(ErrorKind::kValue, op, StrCat("'epsilon' must be positive; but got ", v.as_float()));
}

// batch_norm's channel axis: 1, or the last one when data_format is "NHWC"
// (Note [Channels-last graphs]: the graph compiler keeps a batch_norm in its
// producer's layout).
size_t ChannelAxis(const Dict& attrs, size_t ndim) {
  return AttrString(attrs, kDataFormatAttr) == kChannelsLast ? ndim - 1 : 1;
}

// Every axis but the channel axis.
std::vector<int64_t> NonChannelAxes(int64_t ndim, size_t channel_axis) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < ndim; ++i) {
    if (static_cast<size_t>(i) != channel_axis) axes.push_back(i);
  }
  return axes;
}

// A (C,) tensor shaped (1, C, 1, ...) (or (1, ..., 1, C)) to broadcast against x.
Tensor AlongChannels(const Tensor& v, const Tensor& x, size_t channel_axis) {
  Shape shape(static_cast<size_t>(x.ndim()), 1);
  shape[channel_axis] = x.shape()[channel_axis];
  return fn::Reshape(v, shape);
}

// The data_format attribute of batch_norm and batch_norm_grad: which axis of x
// holds the channels.
AttrSpec ChannelFormatAttr() {
  return {kDataFormatAttr, Value(kChannelsFirst), "'NCHW': channels on axis 1; 'NHWC': on the last axis",
          AttrType::kDataFormat};
}

// x's channels, after checking its rank (2 or more; 4 for NHWC).
int64_t Channels(std::string_view op, const TensorMeta& x, const Dict& attrs) {
  if (AttrString(attrs, kDataFormatAttr) == kChannelsLast && x.shape.size() != 4) {
    OpError(ErrorKind::kValue, op,
            StrCat("input 'x' must have rank 4 with data_format 'NHWC'; but got shape ", ShapeRepr(x.shape)));
  }
  return x.shape[ChannelAxis(attrs, x.shape.size())];
}

// batch_norm's attributes, shared with its MindSpore forms.
std::vector<AttrSpec> BatchNormAttrs() {
  return {{"is_training", Value(false), "normalize with batch statistics and update the running ones", AttrType::kBool},
          {"epsilon", Value(1e-5), "added to the variance", AttrType::kFloat, {}, false, CheckEpsilon},
          {"momentum",
           Value(0.1),
           "running = (1 - momentum) * running + momentum * batch",
           AttrType::kFloat,
           {},
           false,
           [](std::string_view op, const Value& v) {
             double momentum = v.as_float();
             if (!(momentum >= 0 && momentum <= 1)) {
               OpError(ErrorKind::kValue, op, StrCat("'momentum' must be in [0, 1]; but got ", momentum));
             }
           }}};
}

std::vector<AttrSpec> BatchNormOpAttrs() {
  std::vector<AttrSpec> specs = BatchNormAttrs();
  specs.push_back(ChannelFormatAttr());
  return specs;
}

MSRT_REGISTER_OP({
    .name = "batch_norm",
    .inputs = {"x", "scale", "bias", "running_mean", "running_var"},
    .attrs = BatchNormOpAttrs(),
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "batch_norm";
      CheckActivation(op, in[0]);
      const char* names[] = {"x", "scale", "bias", "running_mean", "running_var"};
      int64_t channels = Channels(op, in[0], attrs);
      // Half-precision x may keep float32 running statistics (mixed precision
      // casts trainable parameters only), and may take a float32 scale and
      // bias (then computes in float32: the saved statistics are float32).
      bool half = in[0].dtype == DType::kFloat16 || in[0].dtype == DType::kBFloat16;
      for (size_t i = 1; i < 5; ++i) {
        if (!(half && in[i].dtype == DType::kFloat32 &&
              (i >= 3 || (in[1].dtype == DType::kFloat32 && in[2].dtype == DType::kFloat32)))) {
          CheckSameDType(op, "x", in[0], names[i], in[i]);
        }
        CheckChannelVector(op, names[i], in[i], channels);
      }
      TensorMeta vec{{channels}, in[1].dtype};
      return {{in[0].shape, in[0].dtype}, vec, vec};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      std::vector<Tensor> grads(5);
      const Tensor& dy = g.dys[0];
      if (!dy.defined()) return grads;
      const Tensor& x = g.inputs[0];
      const Tensor& scale = g.inputs[1];
      const Tensor& mean = g.outputs[1];
      const Tensor& inv_std = g.outputs[2];
      if (AttrBool(g.attrs, "is_training")) {
        std::vector<Tensor> d = Call("batch_norm_grad", {dy, x, scale, mean, inv_std},
                                     Dict{{"epsilon", Attr(g.attrs, "epsilon")},
                                          {std::string(kDataFormatAttr), Attr(g.attrs, kDataFormatAttr)}});
        for (size_t i = 0; i < 3; ++i) {
          if (g.needs[i]) grads[i] = d[i];
        }
        return grads;
      }
      // Inference: the statistics are constants, so y is affine in x.
      size_t axis = ChannelAxis(g.attrs, static_cast<size_t>(x.ndim()));
      std::vector<int64_t> axes = NonChannelAxes(x.ndim(), axis);
      if (g.needs[0]) grads[0] = fn::Mul(dy, AlongChannels(fn::Mul(scale, inv_std), x, axis));
      if (g.needs[1]) {
        Tensor x_hat = fn::Mul(fn::Sub(x, AlongChannels(mean, x, axis)), AlongChannels(inv_std, x, axis));
        grads[1] = fn::ReduceSum(fn::Mul(dy, x_hat), axes, false);
      }
      if (g.needs[2]) grads[2] = fn::ReduceSum(dy, axes, false);
      // A half x with float32 scale and bias: each gradient in its input's dtype.
      for (size_t i = 0; i < 3; ++i) {
        if (grads[i].defined() && grads[i].dtype() != g.inputs[i].dtype()) {
          grads[i] = fn::Cast(grads[i], g.inputs[i].dtype());
        }
      }
      return grads;
    },
    .props = {.writes_inputs = {3, 4},
              .accepts_epilogue = true,
              .layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}},
              .mixed_precision = MixedPrecisionSpec{.half_inputs = {0}, .half_outputs = {0}}},
    .doc = "Batch normalization over the channel axis (1, or the last with data_format 'NHWC'); returns (y, "
           "saved_mean, saved_inv_std). Training normalizes with the "
           "batch's mean and biased variance and updates running_mean/running_var in place (unbiased variance; they "
           "may be float32 for float16/bfloat16 x, and so may scale and bias together, which makes saved_mean and "
           "saved_inv_std float32); "
           "inference uses the running statistics, and saved_mean/saved_inv_std are then running_mean and "
           "1 / sqrt(running_var + epsilon).",
});

MSRT_REGISTER_OP({
    .name = "batch_norm_grad",
    .inputs = {"dy", "x", "scale", "saved_mean", "saved_inv_std"},
    .attrs = {{"epsilon", Value(1e-5), "the epsilon batch_norm used", AttrType::kFloat, {}, false, CheckEpsilon},
              ChannelFormatAttr()},
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "batch_norm_grad";
      CheckActivation(op, in[1]);
      const char* names[] = {"dy", "x", "scale", "saved_mean", "saved_inv_std"};
      CheckSameDType(op, "x", in[1], "dy", in[0]);
      if (in[0].shape != in[1].shape) {
        OpError(ErrorKind::kValue, op,
                StrCat("input 'dy' must have x's shape; expected ", ShapeRepr(in[1].shape), ", but got ",
                       ShapeRepr(in[0].shape)));
      }
      int64_t channels = Channels(op, in[1], attrs);
      // A half x may come with float32 scale and statistics (batch_norm's
      // float32 form for half x): dscale and dbias are then float32.
      bool half = in[1].dtype == DType::kFloat16 || in[1].dtype == DType::kBFloat16;
      for (size_t i = 2; i < 5; ++i) {
        if (!(half && in[i].dtype == DType::kFloat32 && in[2].dtype == DType::kFloat32)) {
          CheckSameDType(op, "x", in[1], names[i], in[i]);
        }
        CheckChannelVector(op, names[i], in[i], channels);
      }
      TensorMeta vec{{channels}, in[2].dtype};
      return {{in[1].shape, in[1].dtype}, vec, vec};
    },
    .props = {.layout = LayoutSpec{.activation_inputs = {0, 1}, .activation_outputs = {0}},
              .mixed_precision = MixedPrecisionSpec{.half_inputs = {0, 1}, .half_outputs = {0}}},
    .doc = "Gradient of training-mode batch_norm: (dx, dscale, dbias) from dy, x and the saved batch statistics "
           "(float32 scale and statistics with float16/bfloat16 dy and x give float32 dscale and dbias).",
});

Dict BatchNormCallAttrs(const Dict& attrs) {
  return Dict{{"is_training", Attr(attrs, "is_training")},
              {"epsilon", Attr(attrs, "epsilon")},
              {"momentum", Attr(attrs, "momentum")}};
}

MSRT_REGISTER_OP({
    .name = "batch_norm_ext",
    // MindSpore's order (a form's inputs are passed in the op's order).
    .inputs = {"x", "running_mean", "running_var", "scale", "bias"},
    .attrs = BatchNormAttrs(),
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      return {Call("batch_norm", {in[0], in[3], in[4], in[1], in[2]}, BatchNormCallAttrs(attrs))[0]};
    },
    .doc = "batch_norm's y alone (MindSpore's functional batch_norm; the running statistics are updated in place "
           "when training) (composite)",
    .api = {Function("batch_norm(input_x->x, running_mean, running_var, weight->scale, bias, "
                     "training->is_training=False, momentum=0.1, eps->epsilon=1e-05)")},
});

// BatchNorm's attributes: batch_norm's, and a data_format that must be 'NCHW'.
std::vector<AttrSpec> BatchNormStatsAttrs() {
  std::vector<AttrSpec> specs = BatchNormAttrs();
  specs.push_back({kDataFormatAttr,
                   Value(kChannelsFirst),
                   "'NCHW' (channels on axis 1) only",
                   AttrType::kDataFormat,
                   {},
                   false,
                   [](std::string_view op, const Value& v) {
                     if (v.as_string() != kChannelsFirst) {
                       OpError(ErrorKind::kValue, op,
                               StrCat("'data_format' must be 'NCHW' (msrt normalizes channels on axis 1); but got '",
                                      v.as_string(), "'"));
                     }
                   }});
  return specs;
}

// MindSpore's BatchNorm primitive returns (y, batch_mean, batch_variance,
// reserve_space_1, reserve_space_2): in training the batch's mean and biased
// variance, then mean and 1 / sqrt(variance + epsilon); in inference the
// running statistics, twice.
MSRT_REGISTER_OP({
    .name = "batch_norm_stats",
    .inputs = {"x", "scale", "bias", "running_mean", "running_var"},
    .attrs = BatchNormStatsAttrs(),
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      std::vector<Tensor> out = Call("batch_norm", in, BatchNormCallAttrs(attrs));
      if (!AttrBool(attrs, "is_training")) return {out[0], in[3], in[4], in[3], in[4]};
      const Tensor& inv_std = out[2];
      Tensor var = fn::Sub(Call1("reciprocal", {fn::Square(inv_std)}),
                           fn::Scalar(AttrFloat(attrs, "epsilon"), inv_std));
      return {out[0], out[1], var, out[1], inv_std};
    },
    .doc = "batch_norm with MindSpore's BatchNorm outputs (y, batch_mean, batch_variance, reserve_space_1, "
           "reserve_space_2) (composite)",
    .api = {Primitive("nn_ops.BatchNorm(is_training=False, epsilon=1e-05, momentum=0.1, data_format='NCHW')"
                      "(input_x->x, scale, bias, mean->running_mean, variance->running_var)")},
});

// --- Layer and group normalization ----------------------------------------------------------------------
// Note [layer_norm]
// layer_norm normalizes x over its axes from begin_norm_axis on, and scales
// and shifts by gamma and beta, which have the shape of x's axes from
// begin_params_axis on (repeated over the axes before). Its outputs are
// MindSpore's LayerNorm's: (y, mean, variance), the statistics keeping the
// normalized axes as 1s. It has a kernel, and so has its gradient
// (layer_norm_grad: dx, dgamma and dbeta in one pass). A gradient that will
// itself be differentiated (create_graph) is built from ops instead, since
// layer_norm_grad computes a first derivative only.

int64_t NormAxis(std::string_view op, std::string_view name, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", name, "' must be in [", -rank, ", ", rank, ") for an input of rank ", rank, "; but got ",
                   axis));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> AxesFrom(int64_t begin, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = begin; i < rank; ++i) axes.push_back(i);
  return axes;
}

Tensor MeanOver(const Tensor& x, const std::vector<int64_t>& axes) {
  List list;
  for (int64_t a : axes) list.emplace_back(a);
  return Call1("reduce_mean", {x}, Dict{{"axis", Value(std::move(list))}, {"keep_dims", Value(true)}});
}

// layer_norm's outputs (y, mean, variance) for x, after checking x's dtype
// and rank, the axes, and the parameters' (gamma, beta) dtypes and shapes.
std::vector<TensorMeta> LayerNormMetas(std::string_view op, const TensorMeta& x_meta,
                                       const std::vector<std::pair<std::string_view, const TensorMeta*>>& params_in,
                                       const Dict& attrs) {
  CheckDType(op, "x", x_meta, DTypeClass::kFloat);
  const Shape& x = x_meta.shape;
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) OpError(ErrorKind::kValue, op, "input 'x' must have rank 1 or more; but got shape ()");
  int64_t norm = NormAxis(op, "begin_norm_axis", AttrInt(attrs, "begin_norm_axis"), rank);
  int64_t params = NormAxis(op, "begin_params_axis", AttrInt(attrs, "begin_params_axis"), rank);
  Shape param_shape(x.begin() + params, x.end());
  for (const auto& [name, meta] : params_in) {
    CheckSameDType(op, "x", x_meta, name, *meta);
    if (meta->shape != param_shape) {
      OpError(ErrorKind::kValue, op,
              StrCat("'", name, "' must have the shape of x's axes from begin_params_axis (", params, "); expected ",
                     ShapeRepr(param_shape), ", but got ", ShapeRepr(meta->shape)));
    }
  }
  Shape stats(x.begin(), x.begin() + norm);
  stats.resize(x.size(), 1);
  return {x_meta, {stats, x_meta.dtype}, {stats, x_meta.dtype}};
}

MSRT_REGISTER_OP({
    .name = "layer_norm",
    .inputs = {"x", "gamma", "beta"},
    .attrs = {{"begin_norm_axis", Value(1), "the first axis normalized", AttrType::kInt},
              {"begin_params_axis", Value(1), "the first axis gamma and beta cover", AttrType::kInt},
              {"epsilon", Value(1e-7), "added to the variance", AttrType::kFloat, {}, false, CheckEpsilon}},
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      return LayerNormMetas("layer_norm", in[0], {{"gamma", &in[1]}, {"beta", &in[2]}}, attrs);
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      std::vector<Tensor> grads(3);
      const Tensor& x = g.inputs[0];
      const Tensor& gamma = g.inputs[1];
      const Tensor& mean = g.outputs[1];
      const Tensor& var = g.outputs[2];
      const int64_t rank = x.ndim();
      int64_t norm = AttrInt(g.attrs, "begin_norm_axis");
      if (norm < 0) norm += rank;
      std::vector<int64_t> axes = AxesFrom(norm, rank);
      int64_t count = 1;
      for (int64_t a : axes) count *= x.shape()[a];
      Tensor dy = g.dys[0];
      if (dy.defined() && dy.dtype() != x.dtype()) dy = fn::Cast(dy, x.dtype());
      if (dy.defined() && dy.shape() != x.shape()) dy = fn::BroadcastTo(dy, x.shape());
      Tensor dx;
      const bool create_graph = RecordingCalls();
      if (dy.defined() && !create_graph) {
        std::vector<Tensor> d = Call("layer_norm_grad", {dy, x, gamma, mean, var}, g.attrs);
        for (size_t i = 1; i < 3; ++i) {
          if (g.needs[i]) grads[i] = d[i];
        }
        if (g.needs[0]) dx = d[0];
      }
      const bool stats_grads = g.needs[0] && (g.dys[1].defined() || g.dys[2].defined());
      if (!(dy.defined() && create_graph) && !stats_grads) {
        grads[0] = dx;
        return grads;
      }
      Tensor inv_std = Call1("rsqrt", {fn::Add(var, fn::Scalar(AttrFloat(g.attrs, "epsilon"), var))});
      Tensor centered = fn::Sub(x, mean);
      if (dy.defined() && create_graph) {
        Tensor x_hat = fn::Mul(centered, inv_std);
        if (g.needs[1]) grads[1] = SumToShape(fn::Mul(dy, x_hat), gamma.shape());
        if (g.needs[2]) grads[2] = SumToShape(dy, g.inputs[2].shape());
        if (g.needs[0]) {
          // dx = inv_std * (dxh - mean(dxh) - x_hat * mean(dxh * x_hat)), dxh = dy * gamma
          Tensor dxh = fn::Mul(dy, gamma);
          Tensor inner = fn::Sub(fn::Sub(dxh, MeanOver(dxh, axes)),
                                 fn::Mul(x_hat, MeanOver(fn::Mul(dxh, x_hat), axes)));
          dx = fn::Mul(inner, inv_std);
        }
      }
      if (!g.needs[0]) return grads;
      auto accumulate = [&dx](const Tensor& t) { dx = dx.defined() ? fn::Add(dx, t) : t; };
      const double n = static_cast<double>(std::max<int64_t>(count, 1));
      // The statistics' own gradients: d mean / dx = 1/n, d var / dx = 2 (x - mean) / n.
      if (g.dys[1].defined()) accumulate(fn::BroadcastTo(fn::Div(g.dys[1], fn::Scalar(n, x)), x.shape()));
      if (g.dys[2].defined()) accumulate(fn::Mul(centered, fn::Mul(g.dys[2], fn::Scalar(2.0 / n, x))));
      grads[0] = dx;
      return grads;
    },
    .props = {.cheap_to_recompute = true},
    .doc = "Layer normalization over x's axes from begin_norm_axis, scaled by gamma and shifted by beta (x's axes "
           "from begin_params_axis); returns (y, mean, variance), the statistics keeping the normalized axes as 1s "
           "(Note [layer_norm]).",
    .api = {Primitive(
        "nn_ops.LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-07)(input_x->x, gamma, beta)")},
});

// Not in the catalogue: layer_norm's gradient (Note [layer_norm]).
MSRT_REGISTER_OP({
    .name = "layer_norm_grad",
    .inputs = {"dy", "x", "gamma", "mean", "variance"},
    .attrs = {{"begin_norm_axis", Value(1), "the first axis normalized", AttrType::kInt},
              {"begin_params_axis", Value(1), "the first axis gamma covers", AttrType::kInt},
              {"epsilon", Value(1e-7), "the epsilon layer_norm used", AttrType::kFloat, {}, false, CheckEpsilon}},
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "layer_norm_grad";
      std::vector<TensorMeta> metas = LayerNormMetas(op, in[1], {{"gamma", &in[2]}}, attrs);
      const std::pair<const char*, size_t> others[] = {{"dy", 0}, {"mean", 1}, {"variance", 2}};
      for (const auto& [name, out] : others) {
        const TensorMeta& meta = in[out == 0 ? 0 : out + 2];
        CheckSameDType(op, "x", in[1], name, meta);
        if (meta.shape != metas[out].shape) {
          OpError(ErrorKind::kValue, op,
                  StrCat("input '", name, "' must have shape ", ShapeRepr(metas[out].shape), " for x of shape ",
                         ShapeRepr(in[1].shape), "; but got ", ShapeRepr(meta.shape)));
        }
      }
      return {metas[0], in[2], in[2]};
    },
    .doc = "Gradient of layer_norm: (dx, dgamma, dbeta) from dy, x, gamma and layer_norm's mean and variance "
           "(internal; first derivative only)",
});

MSRT_REGISTER_OP({
    .name = "layer_norm_ext",
    .inputs = {"x", "weight?", "bias?"},
    .attrs = {{"normalized_shape", Value(), "the trailing shape of x normalized", AttrType::kShape},
              {"epsilon", Value(1e-5), "added to the variance", AttrType::kFloat, {}, false, CheckEpsilon}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      constexpr std::string_view op = "layer_norm";
      const Tensor& x = in[0];
      std::vector<int64_t> normalized = AttrInts(attrs, "normalized_shape");
      const Shape& shape = x.shape();
      if (normalized.empty() || normalized.size() > shape.size() ||
          !std::equal(normalized.begin(), normalized.end(), shape.end() - static_cast<int64_t>(normalized.size()))) {
        OpError(ErrorKind::kValue, op,
                StrCat("'normalized_shape' must be a non-empty trailing part of the input's shape ", ShapeRepr(shape),
                       "; but got ", IntsRepr(normalized)));
      }
      const auto begin = static_cast<int64_t>(shape.size() - normalized.size());
      Shape param_shape(normalized.begin(), normalized.end());
      Tensor weight = in[1].defined() ? in[1] : fn::Fill(param_shape, 1.0, x.dtype());
      Tensor bias = in[2].defined() ? in[2] : fn::Fill(param_shape, 0.0, x.dtype());
      Dict ln{{"begin_norm_axis", Value(begin)},
              {"begin_params_axis", Value(begin)},
              {"epsilon", Attr(attrs, "epsilon")}};
      return {Call("layer_norm", {x, weight, bias}, ln)[0]};
    },
    .doc = "MindSpore's functional layer_norm: layer_norm over the trailing `normalized_shape` axes, with optional "
           "weight and bias of that shape (composite)",
    .api = {Function("layer_norm(input->x, normalized_shape, weight=None, bias=None, eps->epsilon=1e-05)")},
});

MSRT_REGISTER_OP({
    .name = "group_norm",
    .inputs = {"x", "weight?", "bias?"},
    .attrs = {{"num_groups",
               Value(),
               "how many groups the channels are split into",
               AttrType::kInt,
               {},
               false,
               [](std::string_view op, const Value& v) {
                 if (v.as_int() < 1) {
                   OpError(ErrorKind::kValue, op, StrCat("'num_groups' must be positive; but got ", v.as_int()));
                 }
               }},
              {"epsilon", Value(1e-5), "added to the variance", AttrType::kFloat, {}, false, CheckEpsilon}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      constexpr std::string_view op = "group_norm";
      const Tensor& x = in[0];
      CheckActivation(op, {x.shape(), x.dtype()});
      const int64_t groups = AttrInt(attrs, "num_groups");
      const int64_t channels = x.shape()[1];
      if (channels % groups != 0) {
        OpError(ErrorKind::kValue, op,
                StrCat("the channels (", channels, ") must be divisible by 'num_groups'; but got num_groups ", groups));
      }
      for (size_t i = 1; i < 3; ++i) {
        if (in[i].defined())
          CheckChannelVector(op, i == 1 ? "weight" : "bias", {in[i].shape(), in[i].dtype()}, channels);
      }
      Tensor grouped = fn::Reshape(x, {x.shape()[0], groups, -1});
      Tensor mean = MeanOver(grouped, {2});
      Tensor centered = fn::Sub(grouped, mean);
      Tensor var = MeanOver(fn::Square(centered), {2});
      Tensor inv_std = Call1("rsqrt", {fn::Add(var, fn::Scalar(AttrFloat(attrs, "epsilon"), var))});
      Tensor y = fn::Reshape(fn::Mul(centered, inv_std), x.shape());
      if (in[1].defined()) y = fn::Mul(y, AlongChannels(in[1], x, 1));
      if (in[2].defined()) y = fn::Add(y, AlongChannels(in[2], x, 1));
      return {y};
    },
    .doc = "Group normalization of (N, C, ...) x: the channels split into num_groups groups, each normalized over "
           "its channels and the other axes, then scaled by weight and shifted by bias per channel (composite)",
    .api = {Function("group_norm(input->x, num_groups, weight=None, bias=None, eps->epsilon=1e-05)")},
});

}  // namespace
}  // namespace msrt::ops
