// Loops shared by the CPU elementwise, reduction and shape kernels.
//
// Elementwise loops have three shapes: contiguous (all operands have the
// output's shape), scalar (one operand has one element) and broadcast, where
// a BroadcastPlan collapses the output into rows whose operands advance with
// stride 0 or 1, so the innermost loop is still a plain vectorisable loop.
// Everything is split over the thread pool in chunks of at least kGrain
// elements; smaller tensors run inline on the calling thread.
#pragma once

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/float_to_int.h"
#include "core/thread_pool.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/kernel.h"
#include "msrt/tensor/tensor.h"

namespace msrt::kernels::cpu {

/// Elements per chunk below which splitting a loop is not worth a wake-up.
inline constexpr int64_t kGrain = 32768;

/// The C++ types of the dtypes that have native kernels.
template <typename T>
inline constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

/// The type loops read and write a T as: bool as its byte (0 or 1), since
/// GCC does not vectorise loops that load bool.
template <typename T>
using StorageOf = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

/// float16 and bfloat16 are computed through float32.
inline bool IsHalfType(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
inline DType NativeComputeType(DType d) { return IsHalfType(d) ? DType::kFloat32 : d; }

/// Converts between any two element types (half through float32).
/// Complex to real keeps the real part (as MindSpore's and NumPy's casts do;
/// to bool: whether the real part is nonzero); real to complex has a zero
/// imaginary part.
template <typename To, typename From>
inline To ConvertValue(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsComplex<From> && kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
  } else if constexpr (kIsComplex<From>) {
    return ConvertValue<To>(v.real());
  } else if constexpr (kIsComplex<To>) {
    return To(ConvertValue<typename To::value_type>(v), typename To::value_type(0));
  } else if constexpr (std::is_same_v<From, Half>) {
    return ConvertValue<To>(HalfToFloat(v));
  } else if constexpr (std::is_same_v<From, BFloat16>) {
    return ConvertValue<To>(BFloat16ToFloat(v));
  } else if constexpr (std::is_same_v<To, Half>) {
    return FloatToHalf(ConvertValue<float>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return FloatToBFloat16(ConvertValue<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return FloatToInt<To>(v);  // out-of-range values: defined results (a plain cast is undefined)
  } else {
    return static_cast<To>(v);
  }
}

/// A tensor with `t`'s contents converted to `dtype` (`t` itself if it has it).
Tensor ConvertTensor(const Tensor& t, DType dtype);
/// Converts `src` into `dst` (same number of elements).
void ConvertInto(const Tensor& src, Tensor& dst);

/// The dtype of a kernel element type.
template <typename T>
inline constexpr DType kDTypeOf = DType::kFloat32;
template <>
inline constexpr DType kDTypeOf<double> = DType::kFloat64;
template <>
inline constexpr DType kDTypeOf<int32_t> = DType::kInt32;
template <>
inline constexpr DType kDTypeOf<int64_t> = DType::kInt64;
template <>
inline constexpr DType kDTypeOf<int16_t> = DType::kInt16;
template <>
inline constexpr DType kDTypeOf<int8_t> = DType::kInt8;
template <>
inline constexpr DType kDTypeOf<uint8_t> = DType::kUInt8;
template <>
inline constexpr DType kDTypeOf<uint16_t> = DType::kUInt16;
template <>
inline constexpr DType kDTypeOf<uint32_t> = DType::kUInt32;
template <>
inline constexpr DType kDTypeOf<uint64_t> = DType::kUInt64;
template <>
inline constexpr DType kDTypeOf<std::complex<float>> = DType::kComplex64;
template <>
inline constexpr DType kDTypeOf<std::complex<double>> = DType::kComplex128;
template <>
inline constexpr DType kDTypeOf<bool> = DType::kBool;
template <>
inline constexpr DType kDTypeOf<Half> = DType::kFloat16;
template <>
inline constexpr DType kDTypeOf<BFloat16> = DType::kBFloat16;

template <typename... Ts>
struct TypeList {};
using FloatTypeList = TypeList<float, double>;
using IndexTypeList = TypeList<int32_t, int64_t>;
using IntTypeList = TypeList<int32_t, int64_t, uint8_t, int8_t, int16_t, uint16_t, uint32_t, uint64_t>;
/// Real numbers (complex ones are not ordered: kernels that compare take these).
using NumberTypeList =
    TypeList<float, double, int32_t, int64_t, uint8_t, int8_t, int16_t, uint16_t, uint32_t, uint64_t>;
/// Types with native kernels: half types are computed through float32.
using NativeTypeList =
    TypeList<float, double, int32_t, int64_t, uint8_t, int8_t, int16_t, uint16_t, uint32_t, uint64_t, bool>;
using ComplexTypeList = TypeList<std::complex<float>, std::complex<double>>;
/// The native types and the complex ones.
using NativeOrComplexTypeList = TypeList<float, double, int32_t, int64_t, uint8_t, int8_t, int16_t, uint16_t, uint32_t,
                                         uint64_t, bool, std::complex<float>, std::complex<double>>;
using AllTypeList = TypeList<float, double, int32_t, int64_t, uint8_t, int8_t, int16_t, uint16_t, uint32_t, uint64_t,
                             bool, Half, BFloat16, std::complex<float>, std::complex<double>>;

/// Calls body.template operator()<T>() for the T in the list whose dtype is
/// `dtype` (only those are instantiated); TypeError naming `op` otherwise.
template <typename... Ts, typename Body>
void Dispatch(TypeList<Ts...>, DType dtype, std::string_view op, Body&& body) {
  bool done = ((dtype == kDTypeOf<Ts> ? (body.template operator()<Ts>(), true) : false) || ...);
  if (!done) ops::OpError(ErrorKind::kType, op, StrCat("has no CPU kernel for dtype ", DTypeName(dtype)));
}

/// body.template operator()<H>() with H = Half or BFloat16 for float16 or
/// bfloat16 `dtype`; false (nothing called) for other dtypes.
template <typename Body>
bool DispatchHalf(DType dtype, Body&& body) {
  if (dtype == DType::kFloat16) return body.template operator()<Half>(), true;
  if (dtype == DType::kBFloat16) return body.template operator()<BFloat16>(), true;
  return false;
}

/// Dispatch over the native compute types.
template <typename Body>
void DispatchNative(DType dtype, Body&& body) {
  Dispatch(NativeTypeList{}, dtype, "kernel", std::forward<Body>(body));
}

/// Dispatch over the native compute types and complex64/complex128: for
/// kernels whose bodies test `kSupports<T>` and reject the rest themselves.
template <typename Body>
void DispatchNativeOrComplex(DType dtype, std::string_view op, Body&& body) {
  Dispatch(NativeOrComplexTypeList{}, dtype, op, std::forward<Body>(body));
}

/// TypeError "[op] has no CPU kernel for dtype X": for kernel bodies
/// instantiated for a type their op does not compute.
[[noreturn]] inline void NoKernelForDType(std::string_view op, DType dtype) {
  ops::OpError(ErrorKind::kType, op, StrCat("has no CPU kernel for dtype ", DTypeName(dtype)));
}

/// Calls body.template operator()<U>() with an unsigned type of `size`
/// bytes: for kernels that only move elements.
template <typename Body>
void DispatchBytes(size_t size, Body&& body) {
  switch (size) {
    case 1: return body.template operator()<uint8_t>();
    case 2: return body.template operator()<uint16_t>();
    case 4: return body.template operator()<uint32_t>();
    case 8: return body.template operator()<uint64_t>();
    case 16: return body.template operator()<std::complex<double>>();  // moved whole, never computed on
  }
  MSRT_INTERNAL_ASSERT(false, "element size ", size);
}

/// ParallelFor with the elementwise grain, inline for small n.
template <typename Fn>
inline void ParallelElements(int64_t n, Fn&& fn, int64_t grain = kGrain) {
  if (n <= 0) return;
  if (n < 2 * grain) {
    fn(int64_t{0}, n);
    return;
  }
  ParallelFor(n, grain, fn);
}

/// The output split into rows over which every operand advances with stride
/// 0 or 1 (inner) and jumps by precomputed strides between rows (outer).
template <int N>
struct BroadcastPlan {
  std::vector<int64_t> dims;                    // collapsed output dims (last = inner row)
  std::array<std::vector<int64_t>, N> strides;  // element strides per operand, 0 where broadcast
};

template <int N>
BroadcastPlan<N> MakeBroadcastPlan(const Shape& out, const std::array<const Shape*, N>& inputs) {
  BroadcastPlan<N> plan;
  const size_t rank = out.size();
  // Element strides of each input aligned to the output's rank.
  std::array<std::vector<int64_t>, N> full;
  for (int k = 0; k < N; ++k) {
    const Shape& s = *inputs[k];
    full[k].assign(rank, 0);
    int64_t stride = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t axis = s.size() - 1 - i;
      size_t out_axis = rank - 1 - i;
      full[k][out_axis] = s[axis] == 1 ? 0 : stride;
      stride *= s[axis];
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    if (!plan.dims.empty()) {
      // Merge with the previous kept dim when every operand is contiguous across both.
      bool mergeable = true;
      for (int k = 0; k < N; ++k) {
        if (plan.strides[k].back() != full[k][i] * out[i]) mergeable = false;
      }
      if (mergeable) {
        plan.dims.back() *= out[i];
        for (int k = 0; k < N; ++k) plan.strides[k].back() = full[k][i];
        continue;
      }
    }
    plan.dims.push_back(out[i]);
    for (int k = 0; k < N; ++k) plan.strides[k].push_back(full[k][i]);
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (int k = 0; k < N; ++k) plan.strides[k].push_back(0);
  }
  return plan;
}

/// Calls run(out_offset, in_offsets, count) for each row segment of the
/// flat output range [begin, end); operand k advances by strides[k].back()
/// within a segment.
template <int N, typename Run>
void ForEachRow(const BroadcastPlan<N>& plan, int64_t begin, int64_t end, Run&& run) {
  const int rank = static_cast<int>(plan.dims.size());
  const int64_t inner = plan.dims.back();
  std::vector<int64_t> index(rank, 0);
  std::array<int64_t, N> offsets{};
  int64_t rem = begin;
  for (int d = rank - 1; d >= 0; --d) {
    index[d] = rem % plan.dims[d];
    rem /= plan.dims[d];
    for (int k = 0; k < N; ++k) offsets[k] += index[d] * plan.strides[k][d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t count = std::min(inner - index[rank - 1], end - pos);
    run(pos, offsets, count);
    pos += count;
    // Advance the odometer by `count` along the inner dim, carrying outwards.
    for (int k = 0; k < N; ++k) offsets[k] += count * plan.strides[k][rank - 1];
    index[rank - 1] += count;
    for (int d = rank - 1; d > 0 && index[d] == plan.dims[d]; --d) {
      for (int k = 0; k < N; ++k) offsets[k] -= plan.dims[d] * plan.strides[k][d];
      index[d] = 0;
      ++index[d - 1];
      for (int k = 0; k < N; ++k) offsets[k] += plan.strides[k][d - 1];
    }
  }
}

// Note [Loop pointers are locals]
// Loop bodies copy the pointers and values they use into locals first: a
// lambda reads its captures through memory (the closure), and a store
// through a byte pointer (bool outputs are bytes) may alias that memory, so
// GCC would reload them on every iteration and not vectorise the loop.

/// out[i] = f(a[i]) over contiguous data.
template <typename A, typename O, typename F>
void UnaryLoop(const A* a, O* out, int64_t n, F f) {
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    const A* pa = a;
    O* po = out;
    const F g = f;
    for (int64_t i = begin; i < end; ++i) po[i] = g(pa[i]);
  });
}

/// out = f(a, b) with NumPy broadcasting.
template <typename A, typename B, typename O, typename F>
void BinaryLoop(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, O* out, const Shape& out_shape,
                F f) {
  const int64_t n = NumElements(out_shape);
  if (n == 0) return;
  const int64_t na = NumElements(a_shape), nb = NumElements(b_shape);
  // Loops read locals, not captures (Note [Loop pointers are locals]).
  if (na == n && nb == n) {
    ParallelElements(n, [&](int64_t begin, int64_t end) {
      const A* pa = a;
      const B* pb = b;
      O* po = out;
      const F g = f;
      for (int64_t i = begin; i < end; ++i) po[i] = g(pa[i], pb[i]);
    });
    return;
  }
  if (na == n && nb == 1) {
    const B s = b[0];
    ParallelElements(n, [&](int64_t begin, int64_t end) {
      const A* pa = a;
      const B sb = s;
      O* po = out;
      const F g = f;
      for (int64_t i = begin; i < end; ++i) po[i] = g(pa[i], sb);
    });
    return;
  }
  if (na == 1 && nb == n) {
    const A s = a[0];
    ParallelElements(n, [&](int64_t begin, int64_t end) {
      const A sa = s;
      const B* pb = b;
      O* po = out;
      const F g = f;
      for (int64_t i = begin; i < end; ++i) po[i] = g(sa, pb[i]);
    });
    return;
  }
  const BroadcastPlan<2> plan = MakeBroadcastPlan<2>(out_shape, {&a_shape, &b_shape});
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back();
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    ForEachRow<2>(plan, begin, end, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t count) {
      const A* pa = a + off[0];
      const B* pb = b + off[1];
      O* po = out + o;
      const F g = f;
      if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < count; ++i) po[i] = g(pa[i], pb[i]);
      } else if (sa == 1) {
        const B s = pb[0];
        for (int64_t i = 0; i < count; ++i) po[i] = g(pa[i], s);
      } else if (sb == 1) {
        const A s = pa[0];
        for (int64_t i = 0; i < count; ++i) po[i] = g(s, pb[i]);
      } else {
        const O v = g(pa[0], pb[0]);
        for (int64_t i = 0; i < count; ++i) po[i] = v;
      }
    });
  });
}

/// One row of a ternary loop; each operand advances (true) or stays (false).
/// The strides are template arguments so that every combination vectorises.
template <bool kA, bool kB, bool kC, typename A, typename B, typename C, typename O, typename F>
inline void TernaryRow(const A* a, const B* b, const C* c, O* out, int64_t count, F& f) {
  for (int64_t i = 0; i < count; ++i) out[i] = f(a[kA ? i : 0], b[kB ? i : 0], c[kC ? i : 0]);
}

template <typename A, typename B, typename C, typename O, typename F>
inline void TernaryRowDispatch(const A* a, int64_t sa, const B* b, int64_t sb, const C* c, int64_t sc, O* out,
                               int64_t count, F& f) {
  switch ((sa != 0) * 4 + (sb != 0) * 2 + (sc != 0)) {
    case 0: return TernaryRow<false, false, false>(a, b, c, out, count, f);
    case 1: return TernaryRow<false, false, true>(a, b, c, out, count, f);
    case 2: return TernaryRow<false, true, false>(a, b, c, out, count, f);
    case 3: return TernaryRow<false, true, true>(a, b, c, out, count, f);
    case 4: return TernaryRow<true, false, false>(a, b, c, out, count, f);
    case 5: return TernaryRow<true, false, true>(a, b, c, out, count, f);
    case 6: return TernaryRow<true, true, false>(a, b, c, out, count, f);
    default: return TernaryRow<true, true, true>(a, b, c, out, count, f);
  }
}

/// out = f(a, b, c) with NumPy broadcasting (select).
template <typename A, typename B, typename C, typename O, typename F>
void TernaryLoop(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, const C* c, const Shape& c_shape,
                 O* out, const Shape& out_shape, F f) {
  const int64_t n = NumElements(out_shape);
  if (n == 0) return;
  const int64_t na = NumElements(a_shape), nb = NumElements(b_shape), nc = NumElements(c_shape);
  // Every operand full-size or a single value: one flat row.
  if ((na == n || na == 1) && (nb == n || nb == 1) && (nc == n || nc == 1)) {
    const int64_t sa = na == n ? 1 : 0, sb = nb == n ? 1 : 0, sc = nc == n ? 1 : 0;
    ParallelElements(n, [&](int64_t begin, int64_t end) {
      TernaryRowDispatch(a + begin * sa, sa, b + begin * sb, sb, c + begin * sc, sc, out + begin, end - begin, f);
    });
    return;
  }
  const BroadcastPlan<3> plan = MakeBroadcastPlan<3>(out_shape, {&a_shape, &b_shape, &c_shape});
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back(), sc = plan.strides[2].back();
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    ForEachRow<3>(plan, begin, end, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t count) {
      TernaryRowDispatch(a + off[0], sa, b + off[1], sb, c + off[2], sc, out + o, count, f);
    });
  });
}

/// Copies `src` broadcast to `out_shape` into `out` (broadcast_to, tile rows).
template <typename T>
void BroadcastCopy(const T* src, const Shape& src_shape, T* out, const Shape& out_shape) {
  const int64_t n = NumElements(out_shape);
  if (n == 0) return;
  if (NumElements(src_shape) == n) {
    ParallelElements(n, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin, src + begin, (end - begin) * sizeof(T));
    });
    return;
  }
  const BroadcastPlan<1> plan = MakeBroadcastPlan<1>(out_shape, {&src_shape});
  const int64_t s = plan.strides[0].back();
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    ForEachRow<1>(plan, begin, end, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t count) {
      if (s == 1) {
        std::memcpy(out + o, src + off[0], count * sizeof(T));
      } else {
        const T v = src[off[0]];
        for (int64_t i = 0; i < count; ++i) out[o + i] = v;
      }
    });
  });
}

inline float ConvertValueToFloat(float v) { return v; }
inline float ConvertValueToFloat(Half v) { return HalfToFloat(v); }
inline float ConvertValueToFloat(BFloat16 v) { return BFloat16ToFloat(v); }

/// Note [Half blocks]
/// A float16 or bfloat16 elementwise kernel computes in float32 block by
/// block: each chunk of the thread split converts kHalfBlock elements of its
/// half inputs into float32 buffers on the stack (half_convert.h), runs the
/// float32 loop on them and converts the block of results back, instead of
/// converting whole tensors before and after (three more passes over memory
/// and two float32 temporaries).
inline constexpr int64_t kHalfBlock = 1024;

/// Runs body(in, out, count) over blocks of the flat range [0, n): in[k]
/// points at `count` float32 values of input k, out at `count` float32
/// results (written into `out_data` converted to O). Input k is
/// `in_data[k]` of element type Ins... (float, Half or BFloat16) with
/// `in_numel[k]` elements: n, or 1 (the single value is repeated).
template <typename O, typename... Ins, typename Body>
void HalfBlockLoop(int64_t n, O* out_data, const std::array<int64_t, sizeof...(Ins)>& in_numel, Body body,
                   const Ins*... in_data) {
  constexpr size_t N = sizeof...(Ins);
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    alignas(64) float buffers[N + 1][kHalfBlock];
    for (int64_t start = begin; start < end; start += kHalfBlock) {
      const int64_t count = std::min(kHalfBlock, end - start);
      std::array<const float*, N> in{};
      size_t k = 0;
      auto load = [&]<typename T>(const T* data) {
        if (in_numel[k] == 1) {
          const float v = ConvertValueToFloat(data[0]);
          for (int64_t i = 0; i < count; ++i) buffers[k][i] = v;
          in[k] = buffers[k];
        } else if constexpr (std::is_same_v<T, float>) {
          in[k] = data + start;
        } else {
          ToFloatN(data + start, buffers[k], count);
          in[k] = buffers[k];
        }
        ++k;
      };
      (load(in_data), ...);
      if constexpr (std::is_same_v<O, float>) {
        body(in, out_data + start, count);
      } else {
        body(in, buffers[N], count);
        FromFloatN(buffers[N], out_data + start, count);
      }
    }
  });
}

}  // namespace msrt::kernels::cpu
