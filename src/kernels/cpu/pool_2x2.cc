// max_pool2d and max_pool2d_grad for the common 2x2 window with stride 2 and
// no padding, on NCHW or NHWC tensors as they are: each output reads two
// input rows once, with no layout conversion. For LeNet's first pooling at
// batch 32 the general paths took about 230 us (oneDNN with its
// channels-last reorders) and 190 us (the windowed loop); this takes a
// fraction of that.
//
// The gradient picks each window's first maximum without branches (Route):
// with branches, mispredictions on random data made it 6 to 15 times slower
// (LeNet's first pooling at batch 256: 3.4 ms against 0.6 ms on one thread).
//
// Note [2x2 pooling in AVX-512]: where the build targets AVX-512, float32
// rows run as 16-lane vectors with masks for the part that does not fill one
// (RowsAvx512). Compilers vectorise the plain loops only along full vectors:
// NCHW rows are short (LeNet: 14 and 5 windows) and NHWC windows have few
// channels (6 and 16), so most of the work fell to the scalar remainder. In
// LeNet's GRAPH training step at batch 32 (NHWC) max_pool2d_grad went from
// 129-131 to 62-78 us per call (the two poolings' mean, alternating builds);
// max_pool2d, 45-47 us before, measured 40-50. The comparisons are those of
// Max4 and Route, lane by lane, so NaNs and ties go where they did.
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_* operands, which its
// -Wmaybe-uninitialized reports from inside the header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/thread_pool.h"
#include "kernels/cpu/dtype_dispatch.h"
#include "kernels/kernel.h"
#include "ops/nn_geometry.h"

namespace msrt::kernels {
namespace {

using ops::PoolDims;

constexpr int kPriority = 30;  // ahead of oneDNN (20) and the general loops

bool Is2x2(const std::vector<ops::TensorMeta>& in, const Dict& attrs, std::string_view op) {
  if (in[0].dtype != DType::kFloat32 && in[0].dtype != DType::kFloat64) return false;
  if (in[0].shape.size() != 4) return false;
  PoolDims g = ops::PoolGeometry(op, in[0].shape, attrs);
  return g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_top == 0 &&
         g.pad_bottom == 0 && g.pad_left == 0 && g.pad_right == 0 && g.out_h == g.in_h / 2 && g.out_w == g.in_w / 2;
}

bool ForwardSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return Is2x2(in, attrs, "max_pool2d");
}
bool GradSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return Is2x2(in, attrs, "max_pool2d_grad");
}

// The maximum of a window (a, b on the first row; c, d on the second). A
// NaN in the first place of a comparison wins it, as in the general loops.
template <typename T>
inline T Max4(T a, T b, T c, T d) {
  T top = a < b ? b : a;
  T bottom = c < d ? d : c;
  return top < bottom ? bottom : top;
}

// dy of a window (a, b on the first row; c, d on the second) routed to its
// first maximum in row-major order (ties and NaNs go to the earlier
// element). Each comparison becomes an all-ones or all-zeros mask and each
// choice a bitwise select, so nothing branches on the data (compilers turn
// plain conditionals here into branches).
template <typename T>
struct Route {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  static Bits Mask(bool b) { return Bits(0) - static_cast<Bits>(b); }
  static T Pick(Bits mask, T yes, T no) {
    return std::bit_cast<T>((std::bit_cast<Bits>(yes) & mask) | (std::bit_cast<Bits>(no) & ~mask));
  }

  T a, b, c, d;
  Route(T xa, T xb, T xc, T xd, T dy) {
    Bits to_b = Mask(xb > xa);
    T high = Pick(to_b, xb, xa);
    Bits to_c = Mask(xc > high);
    high = Pick(to_c, xc, high);
    Bits to_d = Mask(xd > high);
    Bits rest = std::bit_cast<Bits>(dy) & ~to_d;  // dy unless d took it
    d = std::bit_cast<T>(std::bit_cast<Bits>(dy) & to_d);
    c = std::bit_cast<T>(rest & to_c);
    rest &= ~to_c;
    b = std::bit_cast<T>(rest & to_b);
    a = std::bit_cast<T>(rest & ~to_b);
  }
};

// Rows of windows: one output row of one (n, c) plane for NCHW, of one
// image for NHWC. Within a row, window (ow, c) reads input elements
// 2 * ow * channels + c and + channels of two input rows, where `channels`
// is C for NHWC and 1 for NCHW (a plane has one channel), and writes output
// element ow * channels + c.
struct Rows {
  int64_t count, in_h, out_h, out_w, channels, in_row, out_row;

  explicit Rows(const PoolDims& g)
      : count(g.batch * g.out_h * (g.channels_last ? 1 : g.channels)),
        in_h(g.in_h),
        out_h(g.out_h),
        out_w(g.out_w),
        channels(g.channels_last ? g.channels : 1),
        in_row(g.in_w * channels),
        out_row(g.out_w * channels) {}
  // Offset of row `r`'s first input row, and of its output row.
  int64_t in(int64_t r) const { return (r / out_h) * in_h * in_row + 2 * (r % out_h) * in_row; }
  int64_t out(int64_t r) const { return r * out_row; }
  // Rows per parallel chunk: enough work to be worth a thread.
  int64_t grain() const { return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, 2 * in_row)); }
  // Calls fn.template operator()<kChannels>() with kChannels 1 for NCHW (a
  // compile-time constant: the loops then vectorise along ow) and 0 for NHWC
  // (channels known at run time).
  template <typename Fn>
  void WithChannels(Fn&& fn) const {
    if (channels == 1) {
      fn.template operator()<1>();
    } else {
      fn.template operator()<0>();
    }
  }
};

#if defined(__AVX512F__)
// Note [2x2 pooling in AVX-512]. Lane by lane, the maximum of Max4 and the
// routing of Route; the masks keep the loads and stores inside the rows.
struct RowsAvx512 {
  static __mmask16 Lanes(int64_t n) {
    if (n <= 0) return 0;
    return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << static_cast<unsigned>(n)) - 1u);
  }
  static __m512 Max4(__m512 a, __m512 b, __m512 c, __m512 d) {
    __m512 top = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), a, b);
    __m512 bottom = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, d, _CMP_LT_OQ), c, d);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(top, bottom, _CMP_LT_OQ), top, bottom);
  }
  // dy to the first maximum of (a, b, c, d), zero to the others.
  struct Routed {
    __m512 a, b, c, d;
  };
  static Routed Route(__m512 a, __m512 b, __m512 c, __m512 d, __m512 dy) {
    const __mmask16 to_b = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ);
    __m512 high = _mm512_mask_blend_ps(to_b, a, b);
    const __mmask16 to_c = _mm512_cmp_ps_mask(c, high, _CMP_GT_OQ);
    high = _mm512_mask_blend_ps(to_c, high, c);
    const __mmask16 to_d = _mm512_cmp_ps_mask(d, high, _CMP_GT_OQ);
    const __mmask16 rest = static_cast<__mmask16>(~to_d & ~to_c);
    return {_mm512_maskz_mov_ps(static_cast<__mmask16>(rest & ~to_b), dy),
            _mm512_maskz_mov_ps(static_cast<__mmask16>(rest & to_b), dy),
            _mm512_maskz_mov_ps(static_cast<__mmask16>(to_c & ~to_d), dy), _mm512_maskz_mov_ps(to_d, dy)};
  }

  // NHWC: a window column's channels, 16 at a time; a is at 2 * ow * C + c,
  // b one pixel (C elements) to its right.
  static void MaxChannels(const float* r0, const float* r1, float* y, int64_t out_w, int64_t channels) {
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const float* p0 = r0 + 2 * ow * channels;
      const float* p1 = r1 + 2 * ow * channels;
      for (int64_t c = 0; c < channels; c += 16) {
        const __mmask16 m = Lanes(channels - c);
        __m512 top_a = _mm512_maskz_loadu_ps(m, p0 + c), top_b = _mm512_maskz_loadu_ps(m, p0 + channels + c);
        __m512 low_c = _mm512_maskz_loadu_ps(m, p1 + c), low_d = _mm512_maskz_loadu_ps(m, p1 + channels + c);
        _mm512_mask_storeu_ps(y + ow * channels + c, m, Max4(top_a, top_b, low_c, low_d));
      }
    }
  }
  static void RouteChannels(const float* r0, const float* r1, const float* dy, float* d0, float* d1, int64_t out_w,
                            int64_t channels) {
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t at = 2 * ow * channels;
      for (int64_t c = 0; c < channels; c += 16) {
        const __mmask16 m = Lanes(channels - c);
        Routed r = Route(_mm512_maskz_loadu_ps(m, r0 + at + c), _mm512_maskz_loadu_ps(m, r0 + at + channels + c),
                         _mm512_maskz_loadu_ps(m, r1 + at + c), _mm512_maskz_loadu_ps(m, r1 + at + channels + c),
                         _mm512_maskz_loadu_ps(m, dy + ow * channels + c));
        _mm512_mask_storeu_ps(d0 + at + c, m, r.a);
        _mm512_mask_storeu_ps(d0 + at + channels + c, m, r.b);
        _mm512_mask_storeu_ps(d1 + at + c, m, r.c);
        _mm512_mask_storeu_ps(d1 + at + channels + c, m, r.d);
      }
    }
  }

  // NCHW: 16 windows of a plane's row at a time, from 32 input elements per
  // row: the even ones are the windows' left elements, the odd ones their right.
  struct Pairs {
    __m512 left, right;
  };
  static Pairs Split(const float* row, __mmask16 low, __mmask16 high) {
    const __m512 lo = _mm512_maskz_loadu_ps(low, row), hi = _mm512_maskz_loadu_ps(high, row + 16);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    return {_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi)};
  }
  static void Join(float* row, __mmask16 low, __mmask16 high, __m512 left, __m512 right) {
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    _mm512_mask_storeu_ps(row, low, _mm512_permutex2var_ps(left, first, right));
    _mm512_mask_storeu_ps(row + 16, high, _mm512_permutex2var_ps(left, second, right));
  }
  static void MaxPlane(const float* r0, const float* r1, float* y, int64_t out_w) {
    for (int64_t ow = 0; ow < out_w; ow += 16) {
      const int64_t n = std::min<int64_t>(16, out_w - ow);
      const __mmask16 low = Lanes(2 * n), high = Lanes(2 * n - 16);
      Pairs top = Split(r0 + 2 * ow, low, high), bottom = Split(r1 + 2 * ow, low, high);
      _mm512_mask_storeu_ps(y + ow, Lanes(n), Max4(top.left, top.right, bottom.left, bottom.right));
    }
  }
  static void RoutePlane(const float* r0, const float* r1, const float* dy, float* d0, float* d1, int64_t out_w) {
    for (int64_t ow = 0; ow < out_w; ow += 16) {
      const int64_t n = std::min<int64_t>(16, out_w - ow);
      const __mmask16 low = Lanes(2 * n), high = Lanes(2 * n - 16);
      Pairs top = Split(r0 + 2 * ow, low, high), bottom = Split(r1 + 2 * ow, low, high);
      Routed r = Route(top.left, top.right, bottom.left, bottom.right, _mm512_maskz_loadu_ps(Lanes(n), dy + ow));
      Join(d0 + 2 * ow, low, high, r.a, r.b);
      Join(d1 + 2 * ow, low, high, r.c, r.d);
    }
  }
};
#endif

// One row's maxima; r0 and r1 are its two input rows. The pointers never
// alias: each names other elements. Row functions stay out of line, where
// the compiler keeps what __restrict promises and vectorises (inlined into
// the parallel loop, the NHWC loops ran scalar, 2.5 times slower).
template <int64_t kChannels, typename T>
[[gnu::noinline]] void MaxRow(const T* __restrict r0, const T* __restrict r1, T* __restrict y, int64_t out_w,
                              int64_t channels) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {  // Note [2x2 pooling in AVX-512]
    if constexpr (kChannels == 1) {
      RowsAvx512::MaxPlane(r0, r1, y, out_w);
    } else {
      RowsAvx512::MaxChannels(r0, r1, y, out_w, channels);
    }
    return;
  }
#endif
  const int64_t c_count = kChannels != 0 ? kChannels : channels;
  for (int64_t ow = 0; ow < out_w; ++ow) {
    for (int64_t c = 0; c < c_count; ++c) {
      int64_t i = 2 * ow * c_count + c;
      y[ow * c_count + c] = Max4(r0[i], r0[i + c_count], r1[i], r1[i + c_count]);
    }
  }
}

// One row's gradient: dy of each window to its first maximum, zero elsewhere.
template <int64_t kChannels, typename T>
[[gnu::noinline]] void RouteRow(const T* __restrict r0, const T* __restrict r1, const T* __restrict dy,
                                T* __restrict d0, T* __restrict d1, int64_t out_w, int64_t channels) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {  // Note [2x2 pooling in AVX-512]
    if constexpr (kChannels == 1) {
      RowsAvx512::RoutePlane(r0, r1, dy, d0, d1, out_w);
    } else {
      RowsAvx512::RouteChannels(r0, r1, dy, d0, d1, out_w, channels);
    }
    return;
  }
#endif
  const int64_t c_count = kChannels != 0 ? kChannels : channels;
  for (int64_t ow = 0; ow < out_w; ++ow) {
    for (int64_t c = 0; c < c_count; ++c) {
      int64_t i = 2 * ow * c_count + c;
      Route<T> r(r0[i], r0[i + c_count], r1[i], r1[i + c_count], dy[ow * c_count + c]);
      d0[i] = r.a;
      d0[i + c_count] = r.b;
      d1[i] = r.c;
      d1[i + c_count] = r.d;
    }
  }
}

void MaxPool2x2(KernelArgs& args) {
  Rows rows(ops::PoolGeometry(args.op.name, args.inputs[0].shape(), args.attrs));
  DispatchDType<kFloatTypes>(args.inputs[0].dtype(), "max_pool2d", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* x = args.inputs[0].raw<T>();
      T* y = args.outputs[0].raw<T>();
      rows.WithChannels([&]<int64_t kChannels>() {
        ParallelFor(rows.count, rows.grain(), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const T* r0 = x + rows.in(r);
            MaxRow<kChannels>(r0, r0 + rows.in_row, y + rows.out(r), rows.out_w, rows.channels);
          }
        });
      });
    }
  });
}

// dy goes to each window's first maximum (row-major order), as the general
// loop does (Note [max_pool2d_grad without oneDNN]); windows do not overlap,
// so every covered input element is written exactly once. An odd last row
// or column is no window's: it is zeroed first.
void MaxPool2x2Grad(KernelArgs& args) {
  PoolDims g = ops::PoolGeometry(args.op.name, args.inputs[0].shape(), args.attrs);
  Rows rows(g);
  if (g.in_h % 2 != 0 || g.in_w % 2 != 0) std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes());
  DispatchDType<kFloatTypes>(args.inputs[0].dtype(), "max_pool2d_grad", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* x = args.inputs[0].raw<T>();
      const T* dy = args.inputs[2].raw<T>();
      T* dx = args.outputs[0].raw<T>();
      rows.WithChannels([&]<int64_t kChannels>() {
        ParallelFor(rows.count, rows.grain(), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t at = rows.in(r);
            RouteRow<kChannels>(x + at, x + at + rows.in_row, dy + rows.out(r), dx + at, dx + at + rows.in_row,
                                rows.out_w, rows.channels);
          }
        });
      });
    }
  });
}

MSRT_REGISTER_KERNEL({.op = "max_pool2d",
                      .impl = "vectorized",
                      .priority = kPriority,
                      .supports = &ForwardSupports,
                      .run = &MaxPool2x2});
MSRT_REGISTER_KERNEL({.op = "max_pool2d_grad",
                      .impl = "vectorized",
                      .priority = kPriority,
                      .supports = &GradSupports,
                      .run = &MaxPool2x2Grad});

}  // namespace
}  // namespace msrt::kernels
