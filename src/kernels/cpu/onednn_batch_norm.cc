// batch_norm and batch_norm_grad on CPU: oneDNN batch normalization
// (training, inference, backward) for float32; reference loops for float64.
// x of shape (N, C, ...) is seen as (N, C, rest, 1).
#include <cmath>
#include <cstring>

#include "core/thread_pool.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"

namespace msrt::kernels {
namespace {

namespace dn = onednn;
using dnnl::memory;
using dnnl::normalization_flags;

using dn::kOneDnnPriority;
using dn::kReferencePriority;

// oneDNN keeps scale, shift and statistics in float32, so only float32 goes there.
bool OneDnnDType(const std::vector<ops::TensorMeta>& in, const Dict&) {
  return in[0].dtype == DType::kFloat32 && in[1].dtype == DType::kFloat32;
}
bool ReferenceDType(const std::vector<ops::TensorMeta>& in, const Dict&) {
  return in[0].dtype == DType::kFloat64 || in[0].dtype == DType::kFloat32;
}

struct Layout {
  int64_t batch, channels, inner;
  int64_t count() const { return batch * inner; }  // elements per channel
};

Layout LayoutOf(const Tensor& x) {
  const Shape& s = x.shape();
  return {s[0], s[1], NumElements(Shape(s.begin() + 2, s.end()))};
}

// Running statistics: running = (1 - momentum) * running + momentum * batch,
// with the unbiased batch variance.
template <typename T>
void UpdateRunning(T* running_mean, T* running_var, const double* mean, const double* var, const Layout& l,
                   double momentum) {
  double correction = static_cast<double>(l.count()) / static_cast<double>(std::max<int64_t>(l.count() - 1, 1));
  for (int64_t c = 0; c < l.channels; ++c) {
    running_mean[c] = static_cast<T>((1 - momentum) * static_cast<double>(running_mean[c]) + momentum * mean[c]);
    running_var[c] = static_cast<T>((1 - momentum) * static_cast<double>(running_var[c]) +
                                    momentum * var[c] * correction);
  }
}

// ---------------------------------------------------------------------------
// Reference

template <typename T>
void BatchNormReference(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Layout l = LayoutOf(x);
  bool training = ops::AttrBool(args.attrs, "is_training");
  double epsilon = ops::AttrFloat(args.attrs, "epsilon");
  const T* px = x.raw<T>();
  const T* scale = args.inputs[1].raw<T>();
  const T* bias = args.inputs[2].raw<T>();
  T* running_mean = args.inputs[3].raw<T>();
  T* running_var = args.inputs[4].raw<T>();
  T* y = args.outputs[0].raw<T>();
  T* saved_mean = args.outputs[1].raw<T>();
  T* saved_inv_std = args.outputs[2].raw<T>();
  std::vector<double> mean(static_cast<size_t>(l.channels)), var(static_cast<size_t>(l.channels));
  int64_t plane = l.channels * l.inner;
  ParallelFor(l.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double m = 0, v = 0;
      if (training) {
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t i = 0; i < l.inner; ++i) m += static_cast<double>(px[n * plane + c * l.inner + i]);
        }
        m = l.count() > 0 ? m / static_cast<double>(l.count()) : 0.0;
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t i = 0; i < l.inner; ++i) {
            double d = static_cast<double>(px[n * plane + c * l.inner + i]) - m;
            v += d * d;
          }
        }
        v = l.count() > 0 ? v / static_cast<double>(l.count()) : 0.0;
      } else {
        m = static_cast<double>(running_mean[c]);
        v = static_cast<double>(running_var[c]);
      }
      double inv = 1.0 / std::sqrt(v + epsilon);
      double a = static_cast<double>(scale[c]) * inv;
      double b = static_cast<double>(bias[c]) - m * a;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t at = n * plane + c * l.inner + i;
          y[at] = static_cast<T>(static_cast<double>(px[at]) * a + b);
        }
      }
      mean[c] = m;
      var[c] = v;
      saved_mean[c] = static_cast<T>(m);
      saved_inv_std[c] = static_cast<T>(inv);
    }
  });
  if (training && l.count() > 0) {
    UpdateRunning(running_mean, running_var, mean.data(), var.data(), l, ops::AttrFloat(args.attrs, "momentum"));
  }
}

template <typename T>
void BatchNormGradReference(KernelArgs& args) {
  const T* dy = args.inputs[0].raw<T>();
  const T* px = args.inputs[1].raw<T>();
  const T* scale = args.inputs[2].raw<T>();
  const T* mean = args.inputs[3].raw<T>();
  const T* inv_std = args.inputs[4].raw<T>();
  T* dx = args.outputs[0].raw<T>();
  T* dscale = args.outputs[1].raw<T>();
  T* dbias = args.outputs[2].raw<T>();
  Layout l = LayoutOf(args.inputs[1]);
  int64_t plane = l.channels * l.inner;
  double count = static_cast<double>(l.count());
  ParallelFor(l.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double m = static_cast<double>(mean[c]), inv = static_cast<double>(inv_std[c]);
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t at = n * plane + c * l.inner + i;
          double g = static_cast<double>(dy[at]);
          sum_dy += g;
          sum_dy_xhat += g * (static_cast<double>(px[at]) - m) * inv;
        }
      }
      double k = static_cast<double>(scale[c]) * inv / count;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t at = n * plane + c * l.inner + i;
          double x_hat = (static_cast<double>(px[at]) - m) * inv;
          dx[at] = static_cast<T>(k * (count * static_cast<double>(dy[at]) - sum_dy - x_hat * sum_dy_xhat));
        }
      }
      dscale[c] = static_cast<T>(sum_dy_xhat);
      dbias[c] = static_cast<T>(sum_dy);
    }
  });
}

void BatchNormReferenceKernel(KernelArgs& args) {
  dn::DispatchFloat(args.inputs[0].dtype(), "batch_norm", [&]<typename T>() { BatchNormReference<T>(args); });
}
void BatchNormGradReferenceKernel(KernelArgs& args) {
  dn::DispatchFloat(args.inputs[0].dtype(), "batch_norm_grad", [&]<typename T>() { BatchNormGradReference<T>(args); });
}

// ---------------------------------------------------------------------------
// oneDNN

const normalization_flags kScaleShift = normalization_flags::use_scale | normalization_flags::use_shift;

memory::desc DataDesc(const Layout& l) { return dn::PlainDesc({l.batch, l.channels, l.inner, 1}, DType::kFloat32); }

dnnl::batch_normalization_forward::primitive_desc ForwardDesc(const Layout& l, float epsilon, bool training) {
  if (training) {
    return {dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, DataDesc(l), epsilon,
                                                    kScaleShift),
            dn::Engine()};
  }
  return {dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, DataDesc(l), epsilon,
                                                  kScaleShift | normalization_flags::use_global_stats),
          dn::Engine()};
}

struct BatchNormForward {
  dnnl::batch_normalization_forward primitive;
  memory::desc data, channel;
};

struct BatchNormBackward {
  dnnl::batch_normalization_backward primitive;
  memory::desc data, channel;
};

dn::Key NormKey(std::string_view op, const Layout& l, float epsilon, bool training) {
  return std::move(dn::Key(op, dn::ThreadLimitForElements(l.batch * l.channels * l.inner))
                       .AddAll(l.batch, l.channels, l.inner, static_cast<double>(epsilon), training));
}

void BatchNormOneDnn(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Layout l = LayoutOf(x);
  if (l.count() == 0) return BatchNormReferenceKernel(args);  // empty batch: only the saved statistics
  bool training = ops::AttrBool(args.attrs, "is_training");
  auto epsilon = static_cast<float>(ops::AttrFloat(args.attrs, "epsilon"));
  auto prim = dn::Cached<BatchNormForward>(NormKey("batch_norm", l, epsilon, training), [&] {
    auto pd = ForwardDesc(l, epsilon, training);
    return BatchNormForward{dnnl::batch_normalization_forward(pd), DataDesc(l), pd.mean_desc()};
  });
  const Tensor& running_mean = args.inputs[3];
  const Tensor& running_var = args.inputs[4];
  Tensor& saved_mean = args.outputs[1];
  Tensor& saved_inv_std = args.outputs[2];
  dn::Scratch scratch;
  memory variance = training ? scratch.Allocate(prim->channel) : dn::Wrap(prim->channel, running_var);
  dn::Execute(prim->primitive, {{DNNL_ARG_SRC, dn::Wrap(prim->data, x)},
                                {DNNL_ARG_DST, dn::Wrap(prim->data, args.outputs[0])},
                                {DNNL_ARG_SCALE, dn::Wrap(prim->channel, args.inputs[1])},
                                {DNNL_ARG_SHIFT, dn::Wrap(prim->channel, args.inputs[2])},
                                {DNNL_ARG_MEAN, dn::Wrap(prim->channel, training ? saved_mean : running_mean)},
                                {DNNL_ARG_VARIANCE, variance}});
  const float* var = static_cast<const float*>(variance.get_data_handle());
  float* inv = saved_inv_std.raw<float>();
  for (int64_t c = 0; c < l.channels; ++c) inv[c] = 1.0f / std::sqrt(var[c] + epsilon);
  if (training) {
    std::vector<double> mean(saved_mean.raw<float>(), saved_mean.raw<float>() + l.channels);
    std::vector<double> var64(var, var + l.channels);
    UpdateRunning(running_mean.raw<float>(), running_var.raw<float>(), mean.data(), var64.data(), l,
                  ops::AttrFloat(args.attrs, "momentum"));
  } else {
    std::memcpy(saved_mean.raw(), running_mean.raw(), saved_mean.nbytes());
  }
}

void BatchNormGradOneDnn(KernelArgs& args) {
  const Tensor& x = args.inputs[1];
  Layout l = LayoutOf(x);
  if (l.count() == 0) return BatchNormGradReferenceKernel(args);
  auto epsilon = static_cast<float>(ops::AttrFloat(args.attrs, "epsilon"));
  auto prim = dn::Cached<BatchNormBackward>(NormKey("batch_norm_grad", l, epsilon, true), [&] {
    auto hint = ForwardDesc(l, epsilon, /*training=*/true);
    dnnl::batch_normalization_backward::primitive_desc pd(
        dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, DataDesc(l), DataDesc(l), epsilon,
                                                 kScaleShift),
        dn::Engine(), hint);
    return BatchNormBackward{dnnl::batch_normalization_backward(pd), DataDesc(l), pd.mean_desc()};
  });
  // oneDNN wants the variance back: 1 / inv_std^2 - epsilon (it adds epsilon again).
  dn::Scratch scratch;
  memory variance = scratch.Allocate(prim->channel);
  const float* inv = args.inputs[4].raw<float>();
  auto* var = static_cast<float*>(variance.get_data_handle());
  for (int64_t c = 0; c < l.channels; ++c) var[c] = 1.0f / (inv[c] * inv[c]) - epsilon;
  // oneDNN 2.6 reads a shift argument in backward too (its value does not matter).
  memory shift = scratch.Allocate(prim->channel);
  std::memset(shift.get_data_handle(), 0, prim->channel.get_size());
  dn::Execute(prim->primitive, {{DNNL_ARG_SRC, dn::Wrap(prim->data, x)},
                                {DNNL_ARG_DIFF_DST, dn::Wrap(prim->data, args.inputs[0])},
                                {DNNL_ARG_SCALE, dn::Wrap(prim->channel, args.inputs[2])},
                                {DNNL_ARG_SHIFT, shift},
                                {DNNL_ARG_MEAN, dn::Wrap(prim->channel, args.inputs[3])},
                                {DNNL_ARG_VARIANCE, variance},
                                {DNNL_ARG_DIFF_SRC, dn::Wrap(prim->data, args.outputs[0])},
                                {DNNL_ARG_DIFF_SCALE, dn::Wrap(prim->channel, args.outputs[1])},
                                {DNNL_ARG_DIFF_SHIFT, dn::Wrap(prim->channel, args.outputs[2])}});
}

MSRT_REGISTER_KERNEL({.op = "batch_norm",
                      .impl = "onednn",
                      .priority = kOneDnnPriority,
                      .supports = &OneDnnDType,
                      .run = &BatchNormOneDnn});
MSRT_REGISTER_KERNEL({.op = "batch_norm",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &ReferenceDType,
                      .run = &BatchNormReferenceKernel});
MSRT_REGISTER_KERNEL({.op = "batch_norm_grad",
                      .impl = "onednn",
                      .priority = kOneDnnPriority,
                      .supports = &OneDnnDType,
                      .run = &BatchNormGradOneDnn});
MSRT_REGISTER_KERNEL({.op = "batch_norm_grad",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &ReferenceDType,
                      .run = &BatchNormGradReferenceKernel});

}  // namespace
}  // namespace msrt::kernels
