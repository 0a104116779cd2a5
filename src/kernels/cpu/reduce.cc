// CPU kernels of the reductions, argmax/argmin and softmax/log_softmax.
#include <atomic>
#include <cmath>

#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/reduce_loops.h"
#include "kernels/cpu/vector_math.h"
#include "ops/grad_utils.h"

namespace msrt::kernels::cpu {
namespace {

// x's dims with size-1 dims dropped and neighbours of the same kind merged.
struct Group {
  int64_t size;
  bool reduced;
};

std::vector<Group> Groups(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<Group> groups;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!groups.empty() && groups.back().reduced == reduced) {
      groups.back().size *= shape[i];
    } else {
      groups.push_back({shape[i], reduced});
    }
  }
  return groups;
}

// Reduces the groups of x one reduced group at a time (the last first), into out.
template <class Op, typename T>
void ReduceGroups(const T* x, T* out, std::vector<Group> groups) {
  std::vector<T> buffer;
  const T* src = x;
  for (;;) {
    int last = -1;
    for (int i = 0; i < static_cast<int>(groups.size()); ++i) {
      if (groups[i].reduced) last = i;
    }
    if (last < 0) {
      // Nothing (left) to reduce: copy.
      int64_t n = 1;
      for (const Group& g : groups) n *= g.size;
      if (src != out) std::copy(src, src + n, out);
      return;
    }
    int64_t A = 1, B = 1;
    for (int i = 0; i < last; ++i) A *= groups[i].size;
    for (int i = last + 1; i < static_cast<int>(groups.size()); ++i) B *= groups[i].size;
    const int64_t R = groups[last].size;
    bool final_pass = true;
    for (int i = 0; i < last; ++i) final_pass = final_pass && !groups[i].reduced;
    if (final_pass) {
      ReduceARB<Op>(src, out, A, R, B);
      return;
    }
    std::vector<T> next(static_cast<size_t>(A * B));
    ReduceARB<Op>(src, next.data(), A, R, B);
    buffer.swap(next);
    src = buffer.data();
    // Drop the reduced group and merge its neighbours when they are both kept.
    groups.erase(groups.begin() + last);
    if (last > 0 && last < static_cast<int>(groups.size()) && groups[last - 1].reduced == groups[last].reduced) {
      groups[last - 1].size *= groups[last].size;
      groups.erase(groups.begin() + last);
    }
  }
}

// Sum or product of complex values over `axes`, element by element into the
// output (complex values have no vector lanes here; the order is fixed).
template <class Op, typename T>
void ReduceComplex(const T* x, const Shape& shape, const std::vector<int64_t>& axes, T* out, int64_t out_numel) {
  for (int64_t o = 0; o < out_numel; ++o) out[o] = Op::template Init<T>();
  const int rank = static_cast<int>(shape.size());
  // Output strides of each input dim: 0 for reduced dims.
  Shape strides(shape.size(), 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (std::find(axes.begin(), axes.end(), int64_t{d}) != axes.end()) continue;
    strides[d] = stride;
    stride *= shape[d];
  }
  const int64_t n = NumElements(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0, rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      o += (rest % shape[d]) * strides[d];
      rest /= shape[d];
    }
    out[o] = Op::Combine(out[o], x[i]);
  }
}

template <class Op>
void RunReduce(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const bool mean = args.op.name == "reduce_mean";
  auto axes = ops::ReductionAxes(args.op.name, ops::AttrInts(args.attrs, "axis"), x.ndim());
  const DType compute = NativeComputeType(y.dtype());  // mean of integers computes in float32
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  int64_t count = 1;
  for (int64_t a : axes) count *= x.shape()[a];
  DispatchNativeOrComplex(compute, args.op.name, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {
      if constexpr (std::is_same_v<Op, SumOp> || std::is_same_v<Op, ProdOp>) {
        T* out = yc.raw<T>();
        ReduceComplex<Op>(xc.raw<T>(), x.shape(), axes, out, yc.numel());
        if (mean) {
          using R = typename T::value_type;
          const R scale = count == 0 ? std::numeric_limits<R>::quiet_NaN() : R(1) / static_cast<R>(count);
          for (int64_t i = 0; i < yc.numel(); ++i) out[i] = count == 0 ? T(scale, scale) : out[i] * scale;
        }
      } else {
        NoKernelForDType(args.op.name, compute);
      }
    } else if constexpr (!std::is_same_v<T, bool>) {
      T* out = yc.raw<T>();
      ReduceGroups<Op>(xc.raw<T>(), out, Groups(x.shape(), axes));
      if constexpr (kIsFloat<T>) {
        if (mean) {
          const T scale = count == 0 ? std::numeric_limits<T>::quiet_NaN() : T(1) / static_cast<T>(count);
          const int64_t n = yc.numel();
          for (int64_t i = 0; i < n; ++i) out[i] = count == 0 ? scale : out[i] * scale;
        }
      }
    } else {
      NoKernelForDType(args.op.name, compute);
    }
  });
  if (!yc.same(y)) ConvertInto(yc, y);
}

template <bool kMax>
void RunArgReduce(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  // No axis: the index into the flattened tensor.
  const Value& axis = ops::Attr(args.attrs, "axis");
  AxisView v;
  if (x.ndim() > 0) {
    v = axis.is_none() ? AxisView{1, x.numel(), 1}
                       : ViewAlong(x.shape(), ops::NormalizeAxis(args.op.name, axis.as_int(), x.ndim()));
  }
  Tensor xc = ConvertTensor(x, NativeComputeType(x.dtype()));
  // The index type is the op's output_type (int32 or int64).
  auto run = [&]<typename I>(I* out) {
    Dispatch(NumberTypeList{}, xc.dtype(), args.op.name, [&]<typename T>() {
      const T* p = xc.raw<T>();
      // Better: strictly greater (first index wins ties), or the first NaN.
      auto better = [](T candidate, T best) {
        if constexpr (kMax) {
          return candidate > best || (candidate != candidate && best == best);
        } else {
          return candidate < best || (candidate != candidate && best == best);
        }
      };
      if (v.B == 1 && v.R > 1) {
        // Rows: the extreme with the vectorised reduction, then its first index.
        ParallelElements(
            v.A,
            [&](int64_t a0, int64_t a1) {
              for (int64_t a = a0; a < a1; ++a) {
                const T* row = p + a * v.R;
                const T best = kMax ? ReduceContiguous<MaxOp>(row, v.R) : ReduceContiguous<MinOp>(row, v.R);
                int64_t r = 0;
                if (best != best) {
                  while (row[r] == row[r]) ++r;  // the first NaN
                } else {
                  while (row[r] != best) ++r;
                }
                out[a] = static_cast<I>(r);
              }
            },
            std::max<int64_t>(kGrain / v.R, 1));
        return;
      }
      ParallelElements(
          v.A * v.B,
          [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
              const int64_t a = o / v.B, b = o % v.B;
              const T* base = p + a * v.R * v.B + b;
              T best = base[0];
              I index = 0;
              for (int64_t r = 1; r < v.R; ++r) {
                T value = base[r * v.B];
                if (better(value, best)) {
                  best = value;
                  index = static_cast<I>(r);
                }
              }
              out[o] = index;
            }
          },
          std::max<int64_t>(kGrain / std::max<int64_t>(v.R, 1), 1));
    });
  };
  if (y.dtype() == DType::kInt64) {
    run(y.raw<int64_t>());
  } else {
    run(y.raw<int32_t>());
  }
}

// ---- softmax ----

// One row of softmax (or log_softmax) over n contiguous values.
template <bool kLog, typename T>
void SoftmaxRow(const T* x, T* y, int64_t n) {
  const T m = ReduceContiguous<MaxOp>(x, n);
  const T s = ExpShiftedSum(x, y, n, m);
  if constexpr (kLog) {
    // (x - m) - log(s): adding m to log(s) first would round to m's ulp.
    const T log_s = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_s;
  } else {
    const T inv = T(1) / s;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

// Softmax along the middle of (A, R, B) for output columns [b0, b1) of slice a.
template <bool kLog, typename T>
void SoftmaxColumns(const T* x, T* y, int64_t R, int64_t B, int64_t b0, int64_t b1, std::vector<T>& m,
                    std::vector<T>& s) {
  const int64_t w = b1 - b0;
  m.assign(static_cast<size_t>(w), MaxOp::Init<T>());
  s.assign(static_cast<size_t>(w), T(0));
  ReduceColumns<MaxOp>(x + b0, R, w, B, m.data());
  for (int64_t r = 0; r < R; ++r) {
    const T* xr = x + r * B + b0;
    T* yr = y + r * B + b0;
    for (int64_t b = 0; b < w; ++b) {
      yr[b] = vecmath::Exp(xr[b] - m[b]);
      s[b] += yr[b];
    }
  }
  if constexpr (kLog) {
    for (int64_t b = 0; b < w; ++b) s[b] = std::log(s[b]);
    for (int64_t r = 0; r < R; ++r) {
      const T* xr = x + r * B + b0;
      T* yr = y + r * B + b0;
      for (int64_t b = 0; b < w; ++b) yr[b] = (xr[b] - m[b]) - s[b];
    }
  } else {
    for (int64_t b = 0; b < w; ++b) s[b] = T(1) / s[b];
    for (int64_t r = 0; r < R; ++r) {
      T* yr = y + r * B + b0;
      for (int64_t b = 0; b < w; ++b) yr[b] *= s[b];
    }
  }
}

template <bool kLog>
void RunSoftmax(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const int64_t axis = ops::NormalizeAxis(args.op.name, ops::AttrInt(args.attrs, "axis"), x.ndim());
  const AxisView v = x.ndim() == 0 ? AxisView{} : ViewAlong(x.shape(), axis);
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() {
    const T* px = xc.raw<T>();
    T* py = yc.raw<T>();
    if (v.R == 0 || v.A * v.B == 0) return;
    const int64_t grain = std::max<int64_t>(kGrain / v.R, 1);
    if (v.B == 1) {
      ParallelElements(
          v.A,
          [&](int64_t a0, int64_t a1) {
            for (int64_t a = a0; a < a1; ++a) SoftmaxRow<kLog>(px + a * v.R, py + a * v.R, v.R);
          },
          grain);
      return;
    }
    ParallelElements(
        v.A * v.B,
        [&](int64_t begin, int64_t end) {
          std::vector<T> m, s;
          ForOutputSegments(v.B, begin, end, [&](int64_t a, int64_t b0, int64_t b1) {
            SoftmaxColumns<kLog>(px + a * v.R * v.B, py + a * v.R * v.B, v.R, v.B, b0, b1, m, s);
          });
        },
        grain);
  });
  if (!yc.same(y)) ConvertInto(yc, y);
}

// Whether every p[i] & mask is below `limit` (the exponent of inf and NaN):
// an unsigned max that the compiler vectorises, one read of the data.
template <typename Bits>
bool BelowLimit(const Bits* p, int64_t n, Bits mask, Bits limit) {
  Bits worst = 0;
  for (int64_t i = 0; i < n; ++i) worst = std::max<Bits>(worst, static_cast<Bits>(p[i] & mask));
  return worst < limit;
}

template <typename Bits>
void CheckFinite(const Tensor& t, int64_t words, Bits mask, Bits limit, std::atomic<bool>& finite) {
  const Bits* p = static_cast<const Bits*>(t.raw());
  ParallelElements(words, [&](int64_t begin, int64_t end) {
    if (finite.load(std::memory_order_relaxed) && !BelowLimit<Bits>(p + begin, end - begin, mask, limit)) {
      finite.store(false, std::memory_order_relaxed);
    }
  });
}

void AllFinite(KernelArgs& args) {
  std::atomic<bool> finite{true};
  for (const Tensor& t : args.inputs) {
    const int64_t n = t.numel();
    switch (t.dtype()) {
      case DType::kFloat16: CheckFinite<uint16_t>(t, n, 0x7fff, 0x7c00, finite); break;
      case DType::kBFloat16: CheckFinite<uint16_t>(t, n, 0x7fff, 0x7f80, finite); break;
      case DType::kFloat32: CheckFinite<uint32_t>(t, n, 0x7fffffffu, 0x7f800000u, finite); break;
      case DType::kComplex64: CheckFinite<uint32_t>(t, 2 * n, 0x7fffffffu, 0x7f800000u, finite); break;
      case DType::kFloat64: CheckFinite<uint64_t>(t, n, 0x7fffffffffffffffull, 0x7ff0000000000000ull, finite); break;
      case DType::kComplex128:
        CheckFinite<uint64_t>(t, 2 * n, 0x7fffffffffffffffull, 0x7ff0000000000000ull, finite);
        break;
      default: break;  // integers and bools are always finite
    }
  }
  *static_cast<bool*>(args.outputs[0].raw()) = finite.load();
}

#define MSRT_REDUCE_KERNEL(op_name, fn) \
  MSRT_REGISTER_KERNEL({.op = op_name, .impl = "vectorized", .priority = 1, .run = fn})
MSRT_REDUCE_KERNEL("reduce_sum", &RunReduce<SumOp>);
MSRT_REDUCE_KERNEL("reduce_mean", &RunReduce<SumOp>);
MSRT_REDUCE_KERNEL("reduce_prod", &RunReduce<ProdOp>);
MSRT_REDUCE_KERNEL("reduce_max", &RunReduce<MaxOp>);
MSRT_REDUCE_KERNEL("reduce_min", &RunReduce<MinOp>);
MSRT_REDUCE_KERNEL("argmax", &RunArgReduce<true>);
MSRT_REDUCE_KERNEL("argmin", &RunArgReduce<false>);
MSRT_REDUCE_KERNEL("softmax", &RunSoftmax<false>);
MSRT_REDUCE_KERNEL("log_softmax", &RunSoftmax<true>);
MSRT_REDUCE_KERNEL("all_finite", &AllFinite);
#undef MSRT_REDUCE_KERNEL

}  // namespace
}  // namespace msrt::kernels::cpu
