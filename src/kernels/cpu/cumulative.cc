// CPU kernels of cumsum, cumprod and cumprod's gradient. x is viewed as
// (A, R, B) around the axis; lines along R are independent, so threads split
// the A * B lines, and when B > 1 each thread runs a block of neighbouring
// lines together (the inner loop over b is contiguous and vectorises).
#include <type_traits>

#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/reduce_loops.h"
#include "ops/op_checks.h"

namespace msrt::kernels::cpu {
namespace {

// x's (A, R, B) for the op's axis; a None axis scans the flattened tensor.
AxisView ViewFor(const KernelArgs& args, const Shape& shape) {
  AxisView v;
  const Value& axis = ops::Attr(args.attrs, "axis");
  if (axis.is_none() || shape.empty()) {
    v.R = NumElements(shape);
    return v;
  }
  const int64_t a = ops::NormalizeAxis(args.op.name, axis.as_int(), static_cast<int64_t>(shape.size()));
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < a) v.A *= shape[i];
    if (i == a) v.R = shape[i];
    if (i > a) v.B *= shape[i];
  }
  return v;
}

// Integer sums and products wrap (two's complement) instead of overflowing.
template <typename T>
T Plus(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T Times(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // uint8/int8/int16 promote to int before multiplying: widen to unsigned int first.
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

struct SumScan {
  template <typename T>
  static T Init() {
    return T(0);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return Plus(a, b);
  }
};
struct ProdScan {
  template <typename T>
  static T Init() {
    return T(1);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return Times(a, b);
  }
};

// Calls fn(line_x_offset, w) for blocks of w neighbouring lines (stride B
// between their elements) covering lines [begin, end) of an (A, R, B) view.
template <typename Fn>
void ForLineBlocks(const AxisView& v, int64_t begin, int64_t end, Fn&& fn) {
  ForOutputSegments(v.B, begin, end, [&](int64_t a, int64_t b0, int64_t b1) { fn(a * v.R * v.B + b0, b1 - b0); });
}

// Scans w lines starting at x and y (elements r * B apart) in the given order.
template <class Op, typename T>
void ScanBlock(const T* x, T* y, int64_t R, int64_t B, int64_t w, bool exclusive, bool reverse, std::vector<T>& acc) {
  if (w == 1) {  // one line (B == 1: contiguous rows): a scalar running value
    T c = Op::template Init<T>();
    for (int64_t t = 0; t < R; ++t) {
      const int64_t r = (reverse ? R - 1 - t : t) * B;
      const T value = x[r];
      if (exclusive) {
        y[r] = c;
        c = Op::Combine(c, value);
      } else {
        c = Op::Combine(c, value);
        y[r] = c;
      }
    }
    return;
  }
  acc.assign(static_cast<size_t>(w), Op::template Init<T>());
  T* c = acc.data();
  for (int64_t t = 0; t < R; ++t) {
    const int64_t r = reverse ? R - 1 - t : t;
    const T* xr = x + r * B;
    T* yr = y + r * B;
    if (exclusive) {
      for (int64_t b = 0; b < w; ++b) {
        const T value = xr[b];
        yr[b] = c[b];
        c[b] = Op::Combine(c[b], value);
      }
    } else {
      for (int64_t b = 0; b < w; ++b) {
        c[b] = Op::Combine(c[b], xr[b]);
        yr[b] = c[b];
      }
    }
  }
}

template <class Op>
void RunScan(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const AxisView v = ViewFor(args, x.shape());
  const bool exclusive = ops::AttrBool(args.attrs, "exclusive");
  const bool reverse = ops::AttrBool(args.attrs, "reverse");
  // Half types accumulate in float32; other inputs in the output's dtype.
  const DType compute = NativeComputeType(y.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Dispatch(NumberTypeList{}, compute, args.op.name, [&]<typename T>() {
    const T* px = xc.raw<T>();
    T* py = yc.raw<T>();
    if (v.R == 0 || v.A * v.B == 0) return;
    ParallelElements(
        v.A * v.B,
        [&](int64_t begin, int64_t end) {
          std::vector<T> acc;
          ForLineBlocks(v, begin, end, [&](int64_t offset, int64_t w) {
            ScanBlock<Op>(px + offset, py + offset, v.R, v.B, w, exclusive, reverse, acc);
          });
        },
        std::max<int64_t>(kGrain / v.R, 1));
  });
  if (!yc.same(y)) ConvertInto(yc, y);
}

// cumprod's gradient along one line, t counting in scan order:
//   inclusive: dx_t = P_t * S_t with S_t = dy_t + x_{t+1} S_{t+1}
//   exclusive: dx_t = P_t * T_t with T_t = dy_{t+1} + x_{t+1} T_{t+1}
// where P_t is the product of x before t. No division, so zeros are exact.
template <typename T>
void CumprodGradBlock(const T* x, const T* dy, T* dx, int64_t R, int64_t B, int64_t w, bool exclusive, bool reverse,
                      std::vector<T>& acc) {
  auto at = [&](int64_t t) { return (reverse ? R - 1 - t : t) * B; };
  acc.assign(static_cast<size_t>(w), T(0));
  T* s = acc.data();
  for (int64_t t = R - 1; t >= 0; --t) {  // the suffix recurrence into dx
    const int64_t o = at(t);
    if (exclusive) {
      for (int64_t b = 0; b < w; ++b) dx[o + b] = s[b];
      if (t > 0) {
        for (int64_t b = 0; b < w; ++b) s[b] = dy[o + b] + x[o + b] * s[b];
      }
    } else {
      if (t + 1 < R) {
        const int64_t n = at(t + 1);
        for (int64_t b = 0; b < w; ++b) s[b] = dy[o + b] + x[n + b] * s[b];
      } else {
        for (int64_t b = 0; b < w; ++b) s[b] = dy[o + b];
      }
      for (int64_t b = 0; b < w; ++b) dx[o + b] = s[b];
    }
  }
  acc.assign(static_cast<size_t>(w), T(1));
  T* p = acc.data();
  for (int64_t t = 0; t < R; ++t) {  // times the prefix products
    const int64_t o = at(t);
    for (int64_t b = 0; b < w; ++b) {
      dx[o + b] *= p[b];
      p[b] *= x[o + b];
    }
  }
}

void RunCumprodGrad(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& dy = args.inputs[1];
  Tensor& dx = args.outputs[0];
  const AxisView v = ViewFor(args, x.shape());
  const bool exclusive = ops::AttrBool(args.attrs, "exclusive");
  const bool reverse = ops::AttrBool(args.attrs, "reverse");
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor gc = ConvertTensor(dy, compute);
  Tensor out = dx.dtype() == compute ? dx : Tensor::Empty(dx.shape(), compute);
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() {
    if (v.R == 0 || v.A * v.B == 0) return;
    const T* px = xc.raw<T>();
    const T* pg = gc.raw<T>();
    T* po = out.raw<T>();
    ParallelElements(
        v.A * v.B,
        [&](int64_t begin, int64_t end) {
          std::vector<T> acc;
          ForLineBlocks(v, begin, end, [&](int64_t offset, int64_t w) {
            CumprodGradBlock(px + offset, pg + offset, po + offset, v.R, v.B, w, exclusive, reverse, acc);
          });
        },
        std::max<int64_t>(kGrain / v.R, 1));
  });
  if (!out.same(dx)) ConvertInto(out, dx);
}

#define MSRT_SCAN_KERNEL(op_name, fn) \
  MSRT_REGISTER_KERNEL({.op = op_name, .impl = "vectorized", .priority = 1, .run = fn})
MSRT_SCAN_KERNEL("cumsum", &RunScan<SumScan>);
MSRT_SCAN_KERNEL("cumprod", &RunScan<ProdScan>);
MSRT_SCAN_KERNEL("cumprod_grad", &RunCumprodGrad);
#undef MSRT_SCAN_KERNEL

}  // namespace
}  // namespace msrt::kernels::cpu
