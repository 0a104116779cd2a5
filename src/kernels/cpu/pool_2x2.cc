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

// One row's maxima; r0 and r1 are its two input rows. The pointers never
// alias: each names other elements. Row functions stay out of line, where
// the compiler keeps what __restrict promises and vectorises (inlined into
// the parallel loop, the NHWC loops ran scalar, 2.5 times slower).
template <int64_t kChannels, typename T>
[[gnu::noinline]] void MaxRow(const T* __restrict r0, const T* __restrict r1, T* __restrict y, int64_t out_w,
                              int64_t channels) {
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
