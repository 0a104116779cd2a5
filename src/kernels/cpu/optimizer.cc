// CPU kernels of the in-place ops: assign, assign_add, assign_sub and the
// fused optimizer steps. Scalars (learning rates, betas...) are 0-d tensors
// read once; the update is one vectorisable pass over the parameters.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/optimizer_loops.h"

namespace msrt::kernels::cpu {
namespace {

double ScalarValue(const Tensor& t) {
  double v = 0;
  Dispatch(AllTypeList{}, t.dtype(), "optimizer", [&]<typename T>() { v = ConvertValue<double>(t.raw<T>()[0]); });
  return v;
}

// A tensor in its compute type; half types are worked on in float32 and
// written back by Commit().
struct Working {
  explicit Working(const Tensor& t) : original(t), work(ConvertTensor(t, NativeComputeType(t.dtype()))) {}
  void Commit() {
    if (!work.same(original)) ConvertInto(work, original);
  }
  template <typename T>
  T* data() const {
    return work.raw<T>();
  }
  Tensor original;
  Tensor work;
};

void Assign(KernelArgs& args) {
  Tensor& var = args.outputs[0];
  Tensor value = ConvertTensor(args.inputs[1], var.dtype());
  if (value.raw() == var.raw()) return;
  Dispatch(AllTypeList{}, var.dtype(), "assign",
           [&]<typename T>() { BroadcastCopy(value.raw<T>(), value.shape(), var.raw<T>(), var.shape()); });
}

template <bool kAdd>
void AssignArithmetic(KernelArgs& args) {
  Working var(args.outputs[0]);
  Tensor value = ConvertTensor(args.inputs[1], var.work.dtype());
  DispatchNative(var.work.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      T* v = var.data<T>();
      BinaryLoop(v, var.work.shape(), value.raw<T>(), value.shape(), v, var.work.shape(),
                 [](T a, T b) { return static_cast<T>(kAdd ? a + b : a - b); });
    }
  });
  var.Commit();
}

void ApplyMomentum(KernelArgs& args) {
  Working var(args.outputs[0]);
  Working accum(args.inputs[1]);
  Working grad(args.inputs[3]);
  const double lr = ScalarValue(args.inputs[2]);
  const double momentum = ScalarValue(args.inputs[4]);
  const bool nesterov = ops::AttrBool(args.attrs, "use_nesterov");
  Dispatch(FloatTypeList{}, var.work.dtype(), "apply_momentum", [&]<typename T>() {
    T* w = var.data<T>();
    T* a = accum.data<T>();
    const T* g = grad.data<T>();
    const T lr_t = static_cast<T>(lr), mom = static_cast<T>(momentum);
    ParallelElements(var.work.numel(), [&](int64_t begin, int64_t end) {
      if (nesterov) {
        for (int64_t i = begin; i < end; ++i) {
          a[i] = a[i] * mom + g[i];
          w[i] -= lr_t * (g[i] + mom * a[i]);
        }
      } else {
        for (int64_t i = begin; i < end; ++i) {
          a[i] = a[i] * mom + g[i];
          w[i] -= lr_t * a[i];
        }
      }
    });
  });
  accum.Commit();
  var.Commit();
}

void ApplyGradientDescent(KernelArgs& args) {
  Working var(args.outputs[0]);
  Working delta(args.inputs[2]);
  const double alpha = ScalarValue(args.inputs[1]);
  Dispatch(FloatTypeList{}, var.work.dtype(), "apply_gradient_descent", [&]<typename T>() {
    T* w = var.data<T>();
    const T* d = delta.data<T>();
    const T a = static_cast<T>(alpha);
    ParallelElements(var.work.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) w[i] -= a * d[i];
    });
  });
  var.Commit();
}

// MindSpore's Adam:
//   lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//   m += (g - m) * (1 - beta1);  v += (g^2 - v) * (1 - beta2)
//   var -= lr_t * m / (eps + sqrt(v)), or with Nesterov
//   var -= lr_t * (m * beta1 + (1 - beta1) * g) / (eps + sqrt(v))
void Adam(KernelArgs& args) {
  Working var(args.outputs[0]);
  Working m(args.inputs[1]);
  Working v(args.inputs[2]);
  Working grad(args.inputs[9]);
  const double beta1_power = ScalarValue(args.inputs[3]), beta2_power = ScalarValue(args.inputs[4]);
  const double lr = ScalarValue(args.inputs[5]), beta1 = ScalarValue(args.inputs[6]);
  const double beta2 = ScalarValue(args.inputs[7]), eps = ScalarValue(args.inputs[8]);
  const bool nesterov = ops::AttrBool(args.attrs, "use_nesterov");
  const double lr_t = lr * std::sqrt(1 - beta2_power) / (1 - beta1_power);
  Dispatch(FloatTypeList{}, var.work.dtype(), "adam", [&]<typename T>() {
    T* w = var.data<T>();
    T* pm = m.data<T>();
    T* pv = v.data<T>();
    const T* g = grad.data<T>();
    const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2), e = static_cast<T>(eps);
    const T step = static_cast<T>(lr_t);
    ParallelElements(var.work.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        pm[i] += (g[i] - pm[i]) * (T(1) - b1);
        pv[i] += (g[i] * g[i] - pv[i]) * (T(1) - b2);
        const T direction = nesterov ? pm[i] * b1 + (T(1) - b1) * g[i] : pm[i];
        w[i] -= step * direction / (e + std::sqrt(pv[i]));
      }
    });
  });
  m.Commit();
  v.Commit();
  var.Commit();
}

// MindSpore's AdamWeightDecay:
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   var -= lr * (m / (sqrt(v) + eps) + decay * var)
void AdamWeightDecay(KernelArgs& args) {
  Working var(args.outputs[0]);
  Working m(args.inputs[1]);
  Working v(args.inputs[2]);
  Working grad(args.inputs[8]);
  const double lr = ScalarValue(args.inputs[3]), beta1 = ScalarValue(args.inputs[4]);
  const double beta2 = ScalarValue(args.inputs[5]), eps = ScalarValue(args.inputs[6]);
  const double decay = ScalarValue(args.inputs[7]);
  Dispatch(FloatTypeList{}, var.work.dtype(), "adam_weight_decay", [&]<typename T>() {
    T* w = var.data<T>();
    T* pm = m.data<T>();
    T* pv = v.data<T>();
    const T* g = grad.data<T>();
    const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2), e = static_cast<T>(eps);
    const T rate = static_cast<T>(lr), wd = static_cast<T>(decay);
    ParallelElements(var.work.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        pm[i] = b1 * pm[i] + (T(1) - b1) * g[i];
        pv[i] = b2 * pv[i] + (T(1) - b2) * g[i] * g[i];
        const T update = pm[i] / (std::sqrt(pv[i]) + e) + wd * w[i];
        w[i] -= rate * update;
      }
    });
  });
  m.Commit();
  v.Commit();
  var.Commit();
}

// MindSpore's ApplyRMSProp:
//   ms = decay * ms + (1 - decay) * g^2
//   moment = momentum * moment + lr * g / sqrt(ms + eps);  var -= moment
// and ApplyCenteredRMSProp, which also keeps mg = decay * mg + (1 - decay) * g
// and divides by sqrt(ms - mg^2 + eps).
template <bool kCentered>
void ApplyRmsProp(KernelArgs& args) {
  // Input positions: plain (var, ms, moment, lr, grad, decay, momentum, eps);
  // centered (var, mg, ms, moment, grad, lr, decay, momentum, eps).
  constexpr int kMs = kCentered ? 2 : 1, kMoment = kCentered ? 3 : 2, kGrad = 4;
  constexpr int kLr = kCentered ? 5 : 3, kDecay = kCentered ? 6 : 5;
  Working var(args.outputs[0]);
  Working ms(args.inputs[kMs]);
  Working moment(args.inputs[kMoment]);
  Working grad(args.inputs[kGrad]);
  Working mg(kCentered ? args.inputs[1] : args.outputs[0]);
  const double lr = ScalarValue(args.inputs[kLr]), decay = ScalarValue(args.inputs[kDecay]);
  const double momentum = ScalarValue(args.inputs[kDecay + 1]), eps = ScalarValue(args.inputs[kDecay + 2]);
  Dispatch(FloatTypeList{}, var.work.dtype(), kCentered ? "apply_centered_rms_prop" : "apply_rms_prop",
           [&]<typename T>() {
             T* w = var.data<T>();
             T* s = ms.data<T>();
             T* mom = moment.data<T>();
             T* pmg = mg.data<T>();
             const T* g = grad.data<T>();
             const T rate = static_cast<T>(lr), d = static_cast<T>(decay), mu = static_cast<T>(momentum);
             const T e = static_cast<T>(eps);
             ParallelElements(var.work.numel(), [&](int64_t begin, int64_t end) {
               for (int64_t i = begin; i < end; ++i) {
                 s[i] = d * s[i] + (T(1) - d) * g[i] * g[i];
                 T denom = s[i] + e;
                 if constexpr (kCentered) {
                   pmg[i] = d * pmg[i] + (T(1) - d) * g[i];
                   denom = s[i] - pmg[i] * pmg[i] + e;
                 }
                 mom[i] = mu * mom[i] + rate * g[i] / std::sqrt(denom);
                 w[i] -= mom[i];
               }
             });
           });
  if constexpr (kCentered) mg.Commit();
  ms.Commit();
  moment.Commit();
  var.Commit();
}

// MindSpore's ApplyAdagrad: accum += g^2 (if update_slots); var -= lr * g / sqrt(accum).
void ApplyAdagrad(KernelArgs& args) {
  Working var(args.outputs[0]);
  Working accum(args.inputs[1]);
  Working grad(args.inputs[3]);
  const double lr = ScalarValue(args.inputs[2]);
  const bool update_slots = ops::AttrBool(args.attrs, "update_slots");
  Dispatch(FloatTypeList{}, var.work.dtype(), "apply_adagrad", [&]<typename T>() {
    T* w = var.data<T>();
    T* a = accum.data<T>();
    const T* g = grad.data<T>();
    const T rate = static_cast<T>(lr);
    ParallelElements(var.work.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        if (update_slots) a[i] += g[i] * g[i];
        w[i] -= rate * g[i] / std::sqrt(a[i]);
      }
    });
  });
  accum.Commit();
  var.Commit();
}

// MindSpore's Lamb step (see the op's declaration). Two passes: the moments
// and the three norms (accumulated in double), then the update.
void Lamb(KernelArgs& args) {
  Working var(args.outputs[0]);
  Working m(args.inputs[1]);
  Working v(args.inputs[2]);
  Working grad(args.inputs[9]);
  const double lr = ScalarValue(args.inputs[3]), beta1 = ScalarValue(args.inputs[4]);
  const double beta2 = ScalarValue(args.inputs[5]), eps = ScalarValue(args.inputs[6]);
  const double decay = ScalarValue(args.inputs[7]), step = ScalarValue(args.inputs[8]);
  const bool decay_flag = ops::AttrBool(args.attrs, "decay_flag");
  Dispatch(FloatTypeList{}, var.work.dtype(), "lamb", [&]<typename T>() {
    T* w = var.data<T>();
    T* pm = m.data<T>();
    T* pv = v.data<T>();
    const T* g = grad.data<T>();
    const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2), e = static_cast<T>(eps);
    const T wd = static_cast<T>(decay);
    const T bc1 = static_cast<T>(1 - std::pow(beta1, step)), bc2 = static_cast<T>(1 - std::pow(beta2, step));
    const int64_t n = var.work.numel();
    double w_sq = 0, g_sq = 0, h_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      pm[i] = b1 * pm[i] + (T(1) - b1) * g[i];
      pv[i] = b2 * pv[i] + (T(1) - b2) * g[i] * g[i];
      const T mm = pm[i] / bc1, vv = pv[i] / bc2;
      const T h = mm / std::sqrt(vv + e) + wd * w[i];
      w_sq += static_cast<double>(w[i]) * w[i];
      g_sq += static_cast<double>(g[i]) * g[i];
      h_sq += static_cast<double>(h) * h;
    }
    const double w_norm = std::sqrt(w_sq), g_norm = std::sqrt(g_sq), h_norm = std::sqrt(h_sq);
    double ratio = (w_norm > 0 && g_norm > 0) ? w_norm / h_norm : 1.0;
    ratio = std::min(std::max(ratio, 0.0), 10.0);
    const T scale = static_cast<T>(ratio * lr);
    const T wd_update = decay_flag ? wd : T(0);
    ParallelElements(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T mm = pm[i] / bc1, vv = pv[i] / bc2;
        w[i] -= scale * (mm / (std::sqrt(vv) + e) + wd_update * w[i]);
      }
    });
  });
  m.Commit();
  v.Commit();
  var.Commit();
}

#define MSRT_INPLACE_KERNEL(op_name, fn) \
  MSRT_REGISTER_KERNEL({.op = op_name, .impl = "vectorized", .priority = 1, .run = fn})
MSRT_INPLACE_KERNEL("assign", &Assign);
MSRT_INPLACE_KERNEL("assign_add", &AssignArithmetic<true>);
MSRT_INPLACE_KERNEL("assign_sub", &AssignArithmetic<false>);
MSRT_INPLACE_KERNEL("apply_momentum", &ApplyMomentum);
MSRT_INPLACE_KERNEL("apply_gradient_descent", &ApplyGradientDescent);
MSRT_INPLACE_KERNEL("adam", &Adam);
MSRT_INPLACE_KERNEL("adam_weight_decay", &AdamWeightDecay);
MSRT_INPLACE_KERNEL("apply_rms_prop", &ApplyRmsProp<false>);
MSRT_INPLACE_KERNEL("apply_centered_rms_prop", &ApplyRmsProp<true>);
MSRT_INPLACE_KERNEL("apply_adagrad", &ApplyAdagrad);
MSRT_INPLACE_KERNEL("lamb", &Lamb);
#undef MSRT_INPLACE_KERNEL

}  // namespace

void MomentumLoop(float* w, float* accum, const float* grad, float lr, float momentum, int64_t n) {
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      accum[i] = accum[i] * momentum + grad[i];
      w[i] -= lr * accum[i];
    }
  });
}

void DescentLoop(float* w, const float* accum, float lr, int64_t n) {
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) w[i] -= lr * accum[i];
  });
}

}  // namespace msrt::kernels::cpu
