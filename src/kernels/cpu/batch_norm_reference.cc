// batch_norm and batch_norm_grad on CPU: reference loops for float64 (and
// float32 the vectorized kernels in batch_norm.cc take). x of shape
// (N, C, ...) is seen as (N, C, rest); with data_format "NHWC", x of shape
// (N, H, W, C) as (N, H * W, C).
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"

namespace msrt::kernels {
namespace {

namespace dn = onednn;
using dn::kReferencePriority;

bool ReferenceDType(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return (in[0].dtype == DType::kFloat64 || in[0].dtype == DType::kFloat32) && !attrs.Contains(kEpilogueAttr);
}

struct Layout {
  int64_t batch, channels, inner;
  bool channels_last;
  int64_t count() const { return batch * inner; }  // elements per channel
  // Where element i of channel c of sample n is.
  int64_t At(int64_t n, int64_t c, int64_t i) const {
    return channels_last ? (n * inner + i) * channels + c : (n * channels + c) * inner + i;
  }
};

Layout LayoutOf(const Tensor& x, const Dict& attrs) {
  const Shape& s = x.shape();
  if (ops::AttrString(attrs, ops::kDataFormatAttr) == ops::kChannelsLast) {
    return {s[0], s.back(), NumElements(Shape(s.begin() + 1, s.end() - 1)), true};
  }
  return {s[0], s[1], NumElements(Shape(s.begin() + 2, s.end())), false};
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
  Layout l = LayoutOf(x, args.attrs);
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
  ParallelFor(l.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double m = 0, v = 0;
      if (training) {
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t i = 0; i < l.inner; ++i) m += static_cast<double>(px[l.At(n, c, i)]);
        }
        m = l.count() > 0 ? m / static_cast<double>(l.count()) : 0.0;
        for (int64_t n = 0; n < l.batch; ++n) {
          for (int64_t i = 0; i < l.inner; ++i) {
            double d = static_cast<double>(px[l.At(n, c, i)]) - m;
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
          int64_t at = l.At(n, c, i);
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
  Layout l = LayoutOf(args.inputs[1], args.attrs);
  double count = static_cast<double>(l.count());
  ParallelFor(l.channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double m = static_cast<double>(mean[c]), inv = static_cast<double>(inv_std[c]);
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t at = l.At(n, c, i);
          double g = static_cast<double>(dy[at]);
          sum_dy += g;
          sum_dy_xhat += g * (static_cast<double>(px[at]) - m) * inv;
        }
      }
      double k = static_cast<double>(scale[c]) * inv / count;
      for (int64_t n = 0; n < l.batch; ++n) {
        for (int64_t i = 0; i < l.inner; ++i) {
          int64_t at = l.At(n, c, i);
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

MSRT_REGISTER_KERNEL({.op = "batch_norm",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &ReferenceDType,
                      .run = &BatchNormReferenceKernel});
MSRT_REGISTER_KERNEL({.op = "batch_norm_grad",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &ReferenceDType,
                      .run = &BatchNormGradReferenceKernel});

}  // namespace
}  // namespace msrt::kernels
