// batch_norm and batch_norm_grad on CPU, NCHW or NHWC (data_format), in
// loops the compiler vectorizes, split over the thread pool: float32, and
// bfloat16 x (dy, y, dx) with float32 scale, bias and statistics.
//
// Note [bfloat16 batch_norm]
// A bfloat16 element is widened to float32 as it is loaded (its bits are
// float32's high half) and each element of y (dx) is rounded once, as it is
// stored, as FloatToBFloat16 rounds (to nearest even, NaN kept quiet): the
// loops are the float32 ones, in the same order, so the result is bit for
// bit the float32 kernel's on the widened x, rounded, which is what mixed
// precision's casts around a float32 batch_norm give
// (OpProperties::mixed_precision), with half the bytes read and written and
// no separate casts.
//
// Note [batch_norm without oneDNN]
// oneDNN 2.6's channels-last batch normalization synchronizes its threads
// with spinning barriers inside each call (statistics, then normalization).
// When the machine has other work, a thread that spins on a barrier while
// the thread it waits for is descheduled burns the time slice: on a loaded
// 2-core machine a CIFAR ResNet's batch_norm took 10 to 40 ms a call in place
// of 0.2 ms, on one thread as on two. Its plain (NCHW) form is a scalar
// loop, several times slower than these. Here each pass is one ParallelFor
// whose chunks write their own partial sums (double), combined in a fixed
// order afterwards: no barrier inside a pass, and the result does not
// depend on the thread count.
//
// NHWC x is (rows, C) with rows = N * H * W: a pass runs over blocks of rows,
// the inner loop over the contiguous channels. NCHW x is (N, C, inner): a
// pass runs over channels, the inner loop over a contiguous plane.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/kernel.h"

namespace msrt::kernels {
namespace {

constexpr int kPriority = 30;  // ahead of oneDNN (20) and the reference loops

bool DataDType(DType d) { return d == DType::kFloat32 || d == DType::kBFloat16; }

// batch_norm: x is input 0 and scale input 1; batch_norm_grad: dy and x are
// inputs 0 and 1 and scale input 2. Both: x float32 or bfloat16, the channel
// vectors float32.
bool ForwardDTypes(const std::vector<ops::TensorMeta>& in) {
  return DataDType(in[0].dtype) &&
         std::all_of(in.begin() + 1, in.end(), [](const ops::TensorMeta& m) { return m.dtype == DType::kFloat32; });
}

bool GradSupports(const std::vector<ops::TensorMeta>& in, const Dict&) {
  return in[0].dtype == in[1].dtype && DataDType(in[1].dtype) &&
         std::all_of(in.begin() + 2, in.end(), [](const ops::TensorMeta& m) { return m.dtype == DType::kFloat32; });
}

// Element i of a float32 or bfloat16 array as float32, and a float32 value
// stored into one (Note [bfloat16 batch_norm]); the compiler vectorizes both.
inline float Load(const float* p, int64_t i) { return p[i]; }
inline float Load(const BFloat16* p, int64_t i) { return std::bit_cast<float>(static_cast<uint32_t>(p[i].bits) << 16); }
inline void Store(float* p, int64_t i, float v) { p[i] = v; }
inline void Store(BFloat16* p, int64_t i, float v) {
  const auto bits = std::bit_cast<uint32_t>(v);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;  // FloatToBFloat16's rounding
  const uint32_t nan = (bits >> 16) | 0x40u;
  p[i].bits = static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// f(c) for each channel c of an NHWC row, in order, 16 at a time: a loop of
// a fixed 16 iterations vectorizes whatever the element type (a loop over
// all the channels of a bfloat16 row would take 32 lanes of 16 bits at once
// and run 16-channel rows in its scalar tail).
template <typename F>
inline void ForChannels(int64_t channels, F&& f) {
  int64_t c = 0;
  for (; c + 16 <= channels; c += 16) {
    for (int64_t j = 0; j < 16; ++j) f(c + j);
  }
  for (; c < channels; ++c) f(c);
}

// Calls body.template operator()<T>() with x's element type.
template <typename Body>
void DispatchX(DType dtype, Body&& body) {
  if (dtype == DType::kBFloat16) return body.template operator()<BFloat16>();
  body.template operator()<float>();
}

// batch_norm's epilogue (kEpilogueAttr): none, or a relu applied as y is written.
std::optional<bool> ReluEpilogue(const Dict& attrs) {
  const Value* list = attrs.Find(kEpilogueAttr);
  if (list == nullptr || list->as_list().empty()) return false;
  if (list->as_list().size() == 1 && list->as_list()[0].as_string() == "relu") return true;
  return std::nullopt;
}

bool ForwardSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return ForwardDTypes(in) && ReluEpilogue(attrs).has_value();
}

struct Geometry {
  int64_t batch, channels, inner;
  bool channels_last;
  int64_t count() const { return batch * inner; }  // elements per channel
  int64_t rows() const { return batch * inner; }   // NHWC: rows of C channels
};

Geometry GeometryOf(const Tensor& x, const Dict& attrs) {
  const Shape& s = x.shape();
  if (ops::AttrString(attrs, ops::kDataFormatAttr) == ops::kChannelsLast) {
    return {s[0], s.back(), NumElements(Shape(s.begin() + 1, s.end() - 1)), true};
  }
  return {s[0], s[1], NumElements(Shape(s.begin() + 2, s.end())), false};
}

// NHWC passes cut the rows into at most kMaxBlocks blocks of equal size (the
// last may be shorter); the cut depends on the rows alone.
constexpr int64_t kMaxBlocks = 64;
struct Blocks {
  int64_t count, rows;
};
Blocks RowBlocks(int64_t rows) {
  int64_t per = std::max<int64_t>(1, (rows + kMaxBlocks - 1) / kMaxBlocks);
  return {(rows + per - 1) / per, per};
}

// Elementwise work: chunks of about 16K elements.
int64_t RowGrain(int64_t channels) { return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(channels, 1)); }

// Sums over a contiguous plane in kLanes independent lanes, so the loop
// vectorizes without reassociating one running sum.
constexpr int64_t kLanes = 8;
struct LaneSums {
  double first[kLanes] = {}, second[kLanes] = {};
  double First() const { return Total(first); }
  double Second() const { return Total(second); }
  static double Total(const double* v) {
    double t = 0;
    for (int64_t j = 0; j < kLanes; ++j) t += v[j];
    return t;
  }
};

// s.first += x - shift, s.second += (x - shift)^2 over the plane.
template <typename T>
void AddMoments(const T* x, int64_t length, float shift, LaneSums& s) {
  int64_t i = 0;
  for (; i + kLanes <= length; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      auto d = static_cast<double>(Load(x, i + j) - shift);
      s.first[j] += d;
      s.second[j] += d * d;
    }
  }
  for (; i < length; ++i) {
    auto d = static_cast<double>(Load(x, i) - shift);
    s.first[0] += d;
    s.second[0] += d * d;
  }
}

// s.first += dy, s.second += dy * (x - mean) over the plane.
template <typename T>
void AddGradSums(const T* dy, const T* x, int64_t length, float mean, LaneSums& s) {
  int64_t i = 0;
  for (; i + kLanes <= length; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      auto d = static_cast<double>(Load(dy, i + j));
      s.first[j] += d;
      s.second[j] += d * static_cast<double>(Load(x, i + j) - mean);
    }
  }
  for (; i < length; ++i) {
    auto d = static_cast<double>(Load(dy, i));
    s.first[0] += d;
    s.second[0] += d * static_cast<double>(Load(x, i) - mean);
  }
}

// Statistics of x: per channel, the sum of (x - shift) and of its square,
// shift being the channel's first element (which keeps the variance exact
// when the mean is large against the spread).
template <typename T>
void Moments(const T* x, const Geometry& g, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t channels = g.channels;
  const auto count = static_cast<double>(g.count());
  mean.assign(static_cast<size_t>(channels), 0.0);
  var.assign(static_cast<size_t>(channels), 0.0);
  if (g.channels_last) {
    std::vector<float> shift(static_cast<size_t>(channels));  // the first row
    for (int64_t c = 0; c < channels; ++c) shift[static_cast<size_t>(c)] = Load(x, c);
    Blocks b = RowBlocks(g.rows());
    std::vector<double> partial(static_cast<size_t>(b.count * channels * 2), 0.0);
    ParallelFor(b.count, 1, [&](int64_t begin, int64_t end) {
      const float* sh = shift.data();
      for (int64_t k = begin; k < end; ++k) {
        double* s = partial.data() + k * channels * 2;
        double* ss = s + channels;
        int64_t last = std::min(g.rows(), (k + 1) * b.rows);
        for (int64_t r = k * b.rows; r < last; ++r) {
          const T* row = x + r * channels;
          ForChannels(channels, [&](int64_t c) {
            double d = static_cast<double>(Load(row, c) - sh[c]);
            s[c] += d;
            ss[c] += d * d;
          });
        }
      }
    });
    for (int64_t k = 0; k < b.count; ++k) {
      const double* s = partial.data() + k * channels * 2;
      for (int64_t c = 0; c < channels; ++c) {
        mean[static_cast<size_t>(c)] += s[c];
        var[static_cast<size_t>(c)] += s[channels + c];
      }
    }
    for (int64_t c = 0; c < channels; ++c) {
      auto at = static_cast<size_t>(c);
      double m = mean[at] / count;
      var[at] = std::max(0.0, var[at] / count - m * m);
      mean[at] = m + static_cast<double>(shift[at]);
    }
    return;
  }
  ParallelFor(channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const float shift = Load(x, c * g.inner);
      LaneSums s;
      for (int64_t n = 0; n < g.batch; ++n) AddMoments(x + (n * channels + c) * g.inner, g.inner, shift, s);
      double m = s.First() / count;
      var[static_cast<size_t>(c)] = std::max(0.0, s.Second() / count - m * m);
      mean[static_cast<size_t>(c)] = m + static_cast<double>(shift);
    }
  });
}

// y = x * a[c] + b[c], then max(y, 0) when kRelu (a fused relu epilogue).
template <bool kRelu, typename T>
void ScaleShift(const T* x, T* y, const float* a, const float* b, const Geometry& g) {
  const int64_t channels = g.channels;
  auto finish = [](float v) { return kRelu ? std::max(v, 0.0f) : v; };
  if (g.channels_last) {
    ParallelFor(g.rows(), RowGrain(channels), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* in = x + r * channels;
        T* out = y + r * channels;
        ForChannels(channels, [&](int64_t c) { Store(out, c, finish(Load(in, c) * a[c] + b[c])); });
      }
    });
    return;
  }
  ParallelFor(g.batch * channels, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(g.inner, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t p = begin; p < end; ++p) {
                  const float ap = a[p % channels], bp = b[p % channels];
                  const T* in = x + p * g.inner;
                  T* out = y + p * g.inner;
                  for (int64_t i = 0; i < g.inner; ++i) Store(out, i, finish(Load(in, i) * ap + bp));
                }
              });
}

void BatchNorm(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Geometry g = GeometryOf(x, args.attrs);
  const bool training = ops::AttrBool(args.attrs, "is_training");
  const double epsilon = ops::AttrFloat(args.attrs, "epsilon");
  const auto channels = static_cast<size_t>(g.channels);
  const float* scale = args.inputs[1].raw<float>();
  const float* bias = args.inputs[2].raw<float>();
  float* running_mean = args.inputs[3].raw<float>();
  float* running_var = args.inputs[4].raw<float>();
  float* saved_mean = args.outputs[1].raw<float>();
  float* saved_inv_std = args.outputs[2].raw<float>();
  std::vector<double> mean, var;
  if (training && g.count() > 0) {
    DispatchX(x.dtype(), [&]<typename T>() { Moments(x.raw<T>(), g, mean, var); });
  } else if (training) {  // an empty batch: nothing to normalize, the running statistics stay
    mean.assign(channels, 0.0);
    var.assign(channels, 0.0);
  } else {
    mean.assign(running_mean, running_mean + channels);
    var.assign(running_var, running_var + channels);
  }
  std::vector<float> a(channels), b(channels);
  for (size_t c = 0; c < channels; ++c) {
    double inv = 1.0 / std::sqrt(var[c] + epsilon);
    double ac = static_cast<double>(scale[c]) * inv;
    a[c] = static_cast<float>(ac);
    b[c] = static_cast<float>(static_cast<double>(bias[c]) - mean[c] * ac);
    saved_mean[c] = static_cast<float>(mean[c]);
    saved_inv_std[c] = static_cast<float>(inv);
  }
  if (g.count() > 0) {
    const bool relu = *ReluEpilogue(args.attrs);
    DispatchX(x.dtype(), [&]<typename T>() {
      const T* in = x.raw<T>();
      T* out = args.outputs[0].raw<T>();
      if (relu) {
        ScaleShift<true>(in, out, a.data(), b.data(), g);
      } else {
        ScaleShift<false>(in, out, a.data(), b.data(), g);
      }
    });
  }
  if (training && g.count() > 0) {
    // running = (1 - momentum) * running + momentum * batch, with the unbiased variance.
    const double momentum = ops::AttrFloat(args.attrs, "momentum");
    const double correction = static_cast<double>(g.count()) / static_cast<double>(std::max<int64_t>(g.count() - 1, 1));
    for (size_t c = 0; c < channels; ++c) {
      running_mean[c] = static_cast<float>((1 - momentum) * static_cast<double>(running_mean[c]) + momentum * mean[c]);
      running_var[c] = static_cast<float>((1 - momentum) * static_cast<double>(running_var[c]) +
                                          momentum * var[c] * correction);
    }
  }
}

// dx = scale * inv * (dy - mean(dy) - (x - mean) * inv^2 * mean(dy * (x - mean))),
// dscale = inv * sum(dy * (x - mean)), dbias = sum(dy).
template <typename T>
void BatchNormGradOf(KernelArgs& args) {
  const T* dy = args.inputs[0].raw<T>();
  const T* x = args.inputs[1].raw<T>();
  const float* scale = args.inputs[2].raw<float>();
  const float* mean = args.inputs[3].raw<float>();
  const float* inv_std = args.inputs[4].raw<float>();
  T* dx = args.outputs[0].raw<T>();
  float* dscale = args.outputs[1].raw<float>();
  float* dbias = args.outputs[2].raw<float>();
  Geometry g = GeometryOf(args.inputs[1], args.attrs);
  const int64_t channels = g.channels;
  const auto count = static_cast<double>(g.count());
  std::vector<double> sum_dy(static_cast<size_t>(channels), 0.0), sum_dy_xmu(static_cast<size_t>(channels), 0.0);
  if (g.count() == 0) {
    std::fill(dscale, dscale + channels, 0.0f);
    std::fill(dbias, dbias + channels, 0.0f);
    return;
  }
  // Per-channel coefficients of dx = alpha * (dy - beta - (x - mean) * gamma).
  std::vector<float> alpha(static_cast<size_t>(channels)), beta(static_cast<size_t>(channels)),
      gamma(static_cast<size_t>(channels));
  auto finish = [&] {
    for (int64_t c = 0; c < channels; ++c) {
      auto at = static_cast<size_t>(c);
      double inv = static_cast<double>(inv_std[c]);
      dscale[c] = static_cast<float>(sum_dy_xmu[at] * inv);
      dbias[c] = static_cast<float>(sum_dy[at]);
      alpha[at] = static_cast<float>(static_cast<double>(scale[c]) * inv);
      beta[at] = static_cast<float>(sum_dy[at] / count);
      gamma[at] = static_cast<float>(sum_dy_xmu[at] * inv * inv / count);
    }
  };
  if (g.channels_last) {
    Blocks b = RowBlocks(g.rows());
    std::vector<double> partial(static_cast<size_t>(b.count * channels * 2), 0.0);
    ParallelFor(b.count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        double* s = partial.data() + k * channels * 2;
        double* sx = s + channels;
        int64_t last = std::min(g.rows(), (k + 1) * b.rows);
        for (int64_t r = k * b.rows; r < last; ++r) {
          const T* grow = dy + r * channels;
          const T* xrow = x + r * channels;
          ForChannels(channels, [&](int64_t c) {
            auto d = static_cast<double>(Load(grow, c));
            s[c] += d;
            sx[c] += d * static_cast<double>(Load(xrow, c) - mean[c]);
          });
        }
      }
    });
    for (int64_t k = 0; k < b.count; ++k) {
      const double* s = partial.data() + k * channels * 2;
      for (int64_t c = 0; c < channels; ++c) {
        sum_dy[static_cast<size_t>(c)] += s[c];
        sum_dy_xmu[static_cast<size_t>(c)] += s[channels + c];
      }
    }
    finish();
    ParallelFor(g.rows(), RowGrain(channels), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* grow = dy + r * channels;
        const T* xrow = x + r * channels;
        T* out = dx + r * channels;
        const float* al = alpha.data();
        const float* be = beta.data();
        const float* ga = gamma.data();
        ForChannels(channels, [&](int64_t c) {
          Store(out, c, al[c] * (Load(grow, c) - be[c] - (Load(xrow, c) - mean[c]) * ga[c]));
        });
      }
    });
    return;
  }
  ParallelFor(channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      LaneSums s;
      for (int64_t n = 0; n < g.batch; ++n) {
        int64_t at = (n * channels + c) * g.inner;
        AddGradSums(dy + at, x + at, g.inner, mean[c], s);
      }
      sum_dy[static_cast<size_t>(c)] = s.First();
      sum_dy_xmu[static_cast<size_t>(c)] = s.Second();
    }
  });
  finish();
  ParallelFor(g.batch * channels, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(g.inner, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t p = begin; p < end; ++p) {
                  auto c = static_cast<size_t>(p % channels);
                  const float a = alpha[c], b = beta[c], k = gamma[c], m = mean[c];
                  const T* gp = dy + p * g.inner;
                  const T* xp = x + p * g.inner;
                  T* out = dx + p * g.inner;
                  for (int64_t i = 0; i < g.inner; ++i) Store(out, i, a * (Load(gp, i) - b - (Load(xp, i) - m) * k));
                }
              });
}

void BatchNormGrad(KernelArgs& args) {
  DispatchX(args.inputs[1].dtype(), [&]<typename T>() { BatchNormGradOf<T>(args); });
}

MSRT_REGISTER_KERNEL(
    {.op = "batch_norm", .impl = "vectorized", .priority = kPriority, .supports = &ForwardSupports, .run = &BatchNorm});
MSRT_REGISTER_KERNEL({.op = "batch_norm_grad",
                      .impl = "vectorized",
                      .priority = kPriority,
                      .supports = &GradSupports,
                      .run = &BatchNormGrad});

}  // namespace
}  // namespace msrt::kernels
