// batch_norm and batch_norm_grad for float32 on CPU, NCHW or NHWC
// (data_format), in loops the compiler vectorizes, split over the thread
// pool.
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
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/kernel.h"

namespace msrt::kernels {
namespace {

constexpr int kPriority = 30;  // ahead of oneDNN (20) and the reference loops

bool Supports(const std::vector<ops::TensorMeta>& in, const Dict&) {
  return in[0].dtype == DType::kFloat32 && in[1].dtype == DType::kFloat32;
}

// batch_norm's epilogue (kEpilogueAttr): none, or a relu applied as y is written.
std::optional<bool> ReluEpilogue(const Dict& attrs) {
  const Value* list = attrs.Find(kEpilogueAttr);
  if (list == nullptr || list->as_list().empty()) return false;
  if (list->as_list().size() == 1 && list->as_list()[0].as_string() == "relu") return true;
  return std::nullopt;
}

bool ForwardSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return Supports(in, attrs) && ReluEpilogue(attrs).has_value();
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
void AddMoments(const float* x, int64_t length, float shift, LaneSums& s) {
  int64_t i = 0;
  for (; i + kLanes <= length; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      auto d = static_cast<double>(x[i + j] - shift);
      s.first[j] += d;
      s.second[j] += d * d;
    }
  }
  for (; i < length; ++i) {
    auto d = static_cast<double>(x[i] - shift);
    s.first[0] += d;
    s.second[0] += d * d;
  }
}

// s.first += dy, s.second += dy * (x - mean) over the plane.
void AddGradSums(const float* dy, const float* x, int64_t length, float mean, LaneSums& s) {
  int64_t i = 0;
  for (; i + kLanes <= length; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      auto d = static_cast<double>(dy[i + j]);
      s.first[j] += d;
      s.second[j] += d * static_cast<double>(x[i + j] - mean);
    }
  }
  for (; i < length; ++i) {
    auto d = static_cast<double>(dy[i]);
    s.first[0] += d;
    s.second[0] += d * static_cast<double>(x[i] - mean);
  }
}

// Statistics of x: per channel, the sum of (x - shift) and of its square,
// shift being the channel's first element (which keeps the variance exact
// when the mean is large against the spread).
void Moments(const float* x, const Geometry& g, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t channels = g.channels;
  const auto count = static_cast<double>(g.count());
  mean.assign(static_cast<size_t>(channels), 0.0);
  var.assign(static_cast<size_t>(channels), 0.0);
  if (g.channels_last) {
    const float* shift = x;  // the first row
    Blocks b = RowBlocks(g.rows());
    std::vector<double> partial(static_cast<size_t>(b.count * channels * 2), 0.0);
    ParallelFor(b.count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        double* s = partial.data() + k * channels * 2;
        double* ss = s + channels;
        int64_t last = std::min(g.rows(), (k + 1) * b.rows);
        for (int64_t r = k * b.rows; r < last; ++r) {
          const float* row = x + r * channels;
          for (int64_t c = 0; c < channels; ++c) {
            double d = static_cast<double>(row[c] - shift[c]);
            s[c] += d;
            ss[c] += d * d;
          }
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
      mean[at] = m + static_cast<double>(shift[c]);
    }
    return;
  }
  ParallelFor(channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const float shift = x[c * g.inner];
      LaneSums s;
      for (int64_t n = 0; n < g.batch; ++n) AddMoments(x + (n * channels + c) * g.inner, g.inner, shift, s);
      double m = s.First() / count;
      var[static_cast<size_t>(c)] = std::max(0.0, s.Second() / count - m * m);
      mean[static_cast<size_t>(c)] = m + static_cast<double>(shift);
    }
  });
}

// y = x * a[c] + b[c], then max(y, 0) when kRelu (a fused relu epilogue).
template <bool kRelu>
void ScaleShift(const float* x, float* y, const float* a, const float* b, const Geometry& g) {
  const int64_t channels = g.channels;
  auto finish = [](float v) { return kRelu ? std::max(v, 0.0f) : v; };
  if (g.channels_last) {
    ParallelFor(g.rows(), RowGrain(channels), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* in = x + r * channels;
        float* out = y + r * channels;
        for (int64_t c = 0; c < channels; ++c) out[c] = finish(in[c] * a[c] + b[c]);
      }
    });
    return;
  }
  ParallelFor(g.batch * channels, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(g.inner, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t p = begin; p < end; ++p) {
                  const float ap = a[p % channels], bp = b[p % channels];
                  const float* in = x + p * g.inner;
                  float* out = y + p * g.inner;
                  for (int64_t i = 0; i < g.inner; ++i) out[i] = finish(in[i] * ap + bp);
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
    Moments(x.raw<float>(), g, mean, var);
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
    const float* in = x.raw<float>();
    float* out = args.outputs[0].raw<float>();
    if (*ReluEpilogue(args.attrs)) {
      ScaleShift<true>(in, out, a.data(), b.data(), g);
    } else {
      ScaleShift<false>(in, out, a.data(), b.data(), g);
    }
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
void BatchNormGrad(KernelArgs& args) {
  const float* dy = args.inputs[0].raw<float>();
  const float* x = args.inputs[1].raw<float>();
  const float* scale = args.inputs[2].raw<float>();
  const float* mean = args.inputs[3].raw<float>();
  const float* inv_std = args.inputs[4].raw<float>();
  float* dx = args.outputs[0].raw<float>();
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
          const float* grow = dy + r * channels;
          const float* xrow = x + r * channels;
          for (int64_t c = 0; c < channels; ++c) {
            auto d = static_cast<double>(grow[c]);
            s[c] += d;
            sx[c] += d * static_cast<double>(xrow[c] - mean[c]);
          }
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
        const float* grow = dy + r * channels;
        const float* xrow = x + r * channels;
        float* out = dx + r * channels;
        for (int64_t c = 0; c < channels; ++c) {
          out[c] = alpha[static_cast<size_t>(c)] *
                   (grow[c] - beta[static_cast<size_t>(c)] - (xrow[c] - mean[c]) * gamma[static_cast<size_t>(c)]);
        }
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
                  const float* gp = dy + p * g.inner;
                  const float* xp = x + p * g.inner;
                  float* out = dx + p * g.inner;
                  for (int64_t i = 0; i < g.inner; ++i) out[i] = a * (gp[i] - b - (xp[i] - m) * k);
                }
              });
}

MSRT_REGISTER_KERNEL(
    {.op = "batch_norm", .impl = "vectorized", .priority = kPriority, .supports = &ForwardSupports, .run = &BatchNorm});
MSRT_REGISTER_KERNEL({.op = "batch_norm_grad",
                      .impl = "vectorized",
                      .priority = kPriority,
                      .supports = &Supports,
                      .run = &BatchNormGrad});

}  // namespace
}  // namespace msrt::kernels
