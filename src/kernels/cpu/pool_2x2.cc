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

using ops::Pool2dGeometry;

constexpr int kPriority = 30;  // ahead of oneDNN (20) and the general loops

bool Is2x2(const std::vector<ops::TensorMeta>& in, const Dict& attrs, std::string_view op) {
  if (in[0].dtype != DType::kFloat32 && in[0].dtype != DType::kFloat64) return false;
  if (in[0].shape.size() != 4) return false;
  Pool2dGeometry g = ops::PoolGeometry(op, in[0].shape, attrs);
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

// The window at (n, oh, ow): its four input offsets and its output offset,
// with `step` the distance between neighbouring channels' elements (1 in
// NHWC; NCHW walks one plane, so it has no channel loop).
struct Windows {
  Pool2dGeometry g;
  // Work items: (n, c) planes for NCHW, (n, oh) output rows for NHWC.
  int64_t items() const { return g.channels_last ? g.batch * g.out_h : g.batch * g.channels; }
  // Items per parallel chunk: enough work to be worth a thread.
  int64_t grain() const {
    int64_t item_elements = g.channels_last ? 2 * g.in_w * g.channels : g.in_h * g.in_w;
    return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, item_elements));
  }
  // Calls fn(x00, x01, x10, x11, y, count, x_step): `count` windows side by
  // side along the innermost axis (channels for NHWC, ow for NCHW), where
  // x.. and y are offsets of the first one's elements and window k's are at
  // +k * x_step for x (1 for NHWC, 2 for NCHW; a compile-time constant, so
  // the loops vectorise) and +k for y.
  template <typename Fn>
  void ForItem(int64_t item, Fn&& fn) const {
    if (g.channels_last) {
      int64_t n = item / g.out_h, oh = item % g.out_h;
      int64_t row = g.in_w * g.channels;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t x00 = ((n * g.in_h + 2 * oh) * g.in_w + 2 * ow) * g.channels;
        fn(x00, x00 + g.channels, x00 + row, x00 + row + g.channels, (item * g.out_w + ow) * g.channels, g.channels,
           std::integral_constant<int64_t, 1>{});
      }
    } else {
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        int64_t x00 = item * g.in_h * g.in_w + 2 * oh * g.in_w;
        fn(x00, x00 + 1, x00 + g.in_w, x00 + g.in_w + 1, (item * g.out_h + oh) * g.out_w, g.out_w,
           std::integral_constant<int64_t, 2>{});
      }
    }
  }
};

void MaxPool2x2(KernelArgs& args) {
  Windows w{ops::PoolGeometry(args.op.name, args.inputs[0].shape(), args.attrs)};
  DispatchDType(args.inputs[0].dtype(), "max_pool2d", kFloatTypes, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* x = args.inputs[0].raw<T>();
      T* y = args.outputs[0].raw<T>();
      ParallelFor(w.items(), w.grain(), [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          w.ForItem(item, [&](int64_t i00, int64_t i01, int64_t i10, int64_t i11, int64_t o, int64_t count, auto x_step) {
            constexpr int64_t s = decltype(x_step)::value;
            const T *a = x + i00, *b = x + i01, *c = x + i10, *d = x + i11;
            T* out = y + o;
            for (int64_t k = 0; k < count; ++k) out[k] = Max4(a[k * s], b[k * s], c[k * s], d[k * s]);
          });
        }
      });
    }
  });
}

// dy goes to each window's first maximum (row-major order), as the general
// loop does (Note [max_pool2d_grad without oneDNN]); windows do not overlap,
// so every covered input element is written exactly once. An odd last row
// or column is no window's: it is zeroed first.
void MaxPool2x2Grad(KernelArgs& args) {
  Windows w{ops::PoolGeometry(args.op.name, args.inputs[0].shape(), args.attrs)};
  if (w.g.in_h % 2 != 0 || w.g.in_w % 2 != 0) std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes());
  DispatchDType(args.inputs[0].dtype(), "max_pool2d_grad", kFloatTypes, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* x = args.inputs[0].raw<T>();
      const T* dy = args.inputs[2].raw<T>();
      T* dx = args.outputs[0].raw<T>();
      ParallelFor(w.items(), w.grain(), [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          w.ForItem(item, [&](int64_t i00, int64_t i01, int64_t i10, int64_t i11, int64_t o, int64_t count, auto x_step) {
            constexpr int64_t s = decltype(x_step)::value;
            const T *a = x + i00, *b = x + i01, *c = x + i10, *d = x + i11;
            T *da = dx + i00, *db = dx + i01, *dc = dx + i10, *dd = dx + i11;
            const T* g = dy + o;
            for (int64_t k = 0; k < count; ++k) {
              Route<T> r(a[k * s], b[k * s], c[k * s], d[k * s], g[k]);
              da[k * s] = r.a;
              db[k * s] = r.b;
              dc[k * s] = r.c;
              dd[k * s] = r.d;
            }
          });
        }
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
