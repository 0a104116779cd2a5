// CPU kernels of the random ops (Note [Random streams] in core/random.h).
#include <cmath>

#include "core/random.h"
#include "kernels/cpu/elementwise_loops.h"

namespace msrt::kernels::cpu {
namespace {

// Element i keeps with probability keep_prob, from word i % 4 of block i / 4.
void Dropout(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  Tensor& mask = args.outputs[1];
  const double keep = ops::AttrFloat(args.attrs, "keep_prob");
  const random::Stream stream = random::StreamOf(args.attrs);
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Tensor mc = mask.dtype() == compute ? mask : Tensor::Empty(mask.shape(), compute);
  const int64_t n = x.numel();
  Dispatch(FloatTypeList{}, compute, "dropout", [&]<typename T>() {
    const T* in = xc.raw<T>();
    T* out = yc.raw<T>();
    T* m = mc.raw<T>();
    const T scale = static_cast<T>(1.0 / keep);
    const float threshold = static_cast<float>(keep);
    const int64_t blocks = (n + 3) / 4;
    ParallelElements(
        blocks,
        [&](int64_t b0, int64_t b1) {
          for (int64_t b = b0; b < b1; ++b) {
            const auto words = random::StreamBlock(stream, static_cast<uint64_t>(b));
            for (int64_t l = 0; l < 4; ++l) {
              const int64_t i = b * 4 + l;
              if (i >= n) break;
              const T v = random::UniformFloat(words[l]) < threshold ? scale : T(0);
              m[i] = v;
              out[i] = in[i] * v;
            }
          }
        },
        kGrain / 4);
  });
  if (!yc.same(y)) ConvertInto(yc, y);
  if (!mc.same(mask)) ConvertInto(mc, mask);
}

// Calls fill(i, words) for blocks of four elements: element i takes word i % 4
// of block i / 4 of the op's stream, whatever the thread.
template <typename Fill>
void ForEachBlock(const KernelArgs& args, int64_t n, Fill&& fill) {
  const random::Stream stream = random::StreamOf(args.attrs);
  ParallelElements((n + 3) / 4,
                   [&](int64_t b0, int64_t b1) {
                     for (int64_t b = b0; b < b1; ++b)
                       fill(b * 4, random::StreamBlock(stream, static_cast<uint64_t>(b)));
                   },
                   kGrain / 4);
}

// A uniform double in (0, 1] from 32 random bits (never 0: Box-Muller takes its log).
inline double OpenUnit(uint32_t bits) { return (static_cast<double>(bits) + 1.0) * (1.0 / 4294967296.0); }

inline void SinCos(float x, float* s, float* c) { ::sincosf(x, s, c); }
inline void SinCos(double x, double* s, double* c) { ::sincos(x, s, c); }

// Standard normal samples: Box-Muller on the words (0, 1) and (2, 3) of a
// block gives its four elements.
void RandomNormal(KernelArgs& args) {
  Tensor& y = args.outputs[0];
  const int64_t n = y.numel();
  Tensor out = y.dtype() == NativeComputeType(y.dtype()) ? y : Tensor::Empty(y.shape(), DType::kFloat32);
  Dispatch(FloatTypeList{}, out.dtype(), args.op.name, [&]<typename T>() {
    T* p = out.raw<T>();
    ForEachBlock(args, n, [&](int64_t i0, const std::array<uint32_t, 4>& w) {
      for (size_t pair = 0; pair < 2; ++pair) {
        // float32 (and the half types) in float math, float64 in double.
        const T u = static_cast<T>(OpenUnit(w[2 * pair]));
        const T r = std::sqrt(T(-2) * std::log(u));
        const T theta = static_cast<T>(2.0 * 3.14159265358979323846 / 4294967296.0) * static_cast<T>(w[2 * pair + 1]);
        T sin_theta, cos_theta;
        SinCos(theta, &sin_theta, &cos_theta);
        const int64_t i = i0 + 2 * static_cast<int64_t>(pair);
        if (i < n) p[i] = r * cos_theta;
        if (i + 1 < n) p[i + 1] = r * sin_theta;
      }
    });
  });
  if (!out.same(y)) ConvertInto(out, y);
}

// Uniform samples on [0, 1): 24 bits for float32 and the half types, 32 for float64.
void RandomUniform(KernelArgs& args) {
  Tensor& y = args.outputs[0];
  const int64_t n = y.numel();
  Tensor out = y.dtype() == NativeComputeType(y.dtype()) ? y : Tensor::Empty(y.shape(), DType::kFloat32);
  Dispatch(FloatTypeList{}, out.dtype(), args.op.name, [&]<typename T>() {
    T* p = out.raw<T>();
    ForEachBlock(args, n, [&](int64_t i0, const std::array<uint32_t, 4>& w) {
      for (int64_t l = 0; l < 4 && i0 + l < n; ++l) {
        if constexpr (std::is_same_v<T, double>) {
          p[i0 + l] = static_cast<double>(w[l]) * (1.0 / 4294967296.0);
        } else {
          p[i0 + l] = random::UniformFloat(w[l]);
        }
      }
    });
  });
  // Rounding float32 to a half type may give 1.0: step those back below 1.
  if (!out.same(y)) {
    float* p = out.raw<float>();
    const float below_one = y.dtype() == DType::kFloat16 ? 0.99951171875f : 0.99609375f;
    for (int64_t i = 0; i < n; ++i) p[i] = std::min(p[i], below_one);
    ConvertInto(out, y);
  }
}

// Integers on [low, high): the high 32 bits of word * (high - low), which is
// uniform up to (high - low) / 2**32 of bias.
void RandomInt(KernelArgs& args) {
  Tensor& y = args.outputs[0];
  const int64_t n = y.numel();
  const int64_t low = ops::AttrInt(args.attrs, "low");
  const uint64_t range = static_cast<uint64_t>(ops::AttrInt(args.attrs, "high")) - static_cast<uint64_t>(low);
  Dispatch(IntTypeList{}, y.dtype(), args.op.name, [&]<typename T>() {
    T* p = y.raw<T>();
    ForEachBlock(args, n, [&](int64_t i0, const std::array<uint32_t, 4>& w) {
      for (int64_t l = 0; l < 4 && i0 + l < n; ++l) {
        // range <= 2**32, so the product fits 64 bits; the sum wraps like a cast.
        const uint64_t offset = (static_cast<uint64_t>(w[l]) * range) >> 32;
        p[i0 + l] = static_cast<T>(static_cast<uint64_t>(low) + offset);
      }
    });
  });
}

MSRT_REGISTER_KERNEL({.op = "dropout", .impl = "vectorized", .priority = 1, .run = &Dropout});
MSRT_REGISTER_KERNEL({.op = "random_normal", .impl = "vectorized", .priority = 1, .run = &RandomNormal});
MSRT_REGISTER_KERNEL({.op = "random_uniform", .impl = "vectorized", .priority = 1, .run = &RandomUniform});
MSRT_REGISTER_KERNEL({.op = "random_int", .impl = "vectorized", .priority = 1, .run = &RandomInt});

}  // namespace
}  // namespace msrt::kernels::cpu
