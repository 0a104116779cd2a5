// Batch normalization over axis 1 (channels) of (N, C, ...) tensors.
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

// Every axis but the channel axis 1.
std::vector<int64_t> NonChannelAxes(int64_t ndim) {
  std::vector<int64_t> axes{0};
  for (int64_t i = 2; i < ndim; ++i) axes.push_back(i);
  return axes;
}

// A (C,) tensor shaped (1, C, 1, ...) to broadcast against x.
Tensor AlongChannels(const Tensor& v, const Tensor& x) {
  Shape shape(static_cast<size_t>(x.ndim()), 1);
  shape[1] = x.shape()[1];
  return fn::Reshape(v, shape);
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

MSRT_REGISTER_OP({
    .name = "batch_norm",
    .inputs = {"x", "scale", "bias", "running_mean", "running_var"},
    .attrs = BatchNormAttrs(),
    .infer = [](const std::vector<TensorMeta>& in, const Dict&) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "batch_norm";
      CheckActivation(op, in[0]);
      const char* names[] = {"x", "scale", "bias", "running_mean", "running_var"};
      int64_t channels = in[0].shape[1];
      // Half-precision x may keep float32 running statistics (mixed precision
      // casts trainable parameters only).
      bool half = in[0].dtype == DType::kFloat16 || in[0].dtype == DType::kBFloat16;
      for (size_t i = 1; i < 5; ++i) {
        if (!(i >= 3 && half && in[i].dtype == DType::kFloat32)) CheckSameDType(op, "x", in[0], names[i], in[i]);
        CheckChannelVector(op, names[i], in[i], channels);
      }
      TensorMeta vec{{channels}, in[0].dtype};
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
                                     Dict{{"epsilon", Attr(g.attrs, "epsilon")}});
        for (size_t i = 0; i < 3; ++i) {
          if (g.needs[i]) grads[i] = d[i];
        }
        return grads;
      }
      // Inference: the statistics are constants, so y is affine in x.
      std::vector<int64_t> axes = NonChannelAxes(x.ndim());
      if (g.needs[0]) grads[0] = fn::Mul(dy, AlongChannels(fn::Mul(scale, inv_std), x));
      if (g.needs[1]) {
        Tensor x_hat = fn::Mul(fn::Sub(x, AlongChannels(mean, x)), AlongChannels(inv_std, x));
        grads[1] = fn::ReduceSum(fn::Mul(dy, x_hat), axes, false);
      }
      if (g.needs[2]) grads[2] = fn::ReduceSum(dy, axes, false);
      return grads;
    },
    .props = {.writes_inputs = {3, 4}},
    .doc = "Batch normalization over axis 1; returns (y, saved_mean, saved_inv_std). Training normalizes with the "
           "batch's mean and biased variance and updates running_mean/running_var in place (unbiased variance; they "
           "may be float32 for float16/bfloat16 x); "
           "inference uses the running statistics, and saved_mean/saved_inv_std are then running_mean and "
           "1 / sqrt(running_var + epsilon).",
});

MSRT_REGISTER_OP({
    .name = "batch_norm_grad",
    .inputs = {"dy", "x", "scale", "saved_mean", "saved_inv_std"},
    .attrs = {{"epsilon", Value(1e-5), "the epsilon batch_norm used", AttrType::kFloat, {}, false, CheckEpsilon}},
    .infer = [](const std::vector<TensorMeta>& in, const Dict&) -> std::vector<TensorMeta> {
      constexpr std::string_view op = "batch_norm_grad";
      CheckActivation(op, in[1]);
      const char* names[] = {"dy", "x", "scale", "saved_mean", "saved_inv_std"};
      CheckSameDType(op, "x", in[1], "dy", in[0]);
      if (in[0].shape != in[1].shape) {
        OpError(ErrorKind::kValue, op,
                StrCat("input 'dy' must have x's shape; expected ", ShapeRepr(in[1].shape), ", but got ",
                       ShapeRepr(in[0].shape)));
      }
      int64_t channels = in[1].shape[1];
      for (size_t i = 2; i < 5; ++i) {
        CheckSameDType(op, "x", in[1], names[i], in[i]);
        CheckChannelVector(op, names[i], in[i], channels);
      }
      TensorMeta vec{{channels}, in[1].dtype};
      return {{in[1].shape, in[1].dtype}, vec, vec};
    },
    .doc = "Gradient of training-mode batch_norm: (dx, dscale, dbias) from dy, x and the saved batch statistics.",
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

}  // namespace
}  // namespace msrt::ops
