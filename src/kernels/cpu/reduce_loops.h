// Reduction loops over x viewed as (A, R, B): R is reduced, A and B kept.
// B == 1 (the last axis, e.g. rows of (N, C)) and A == 1 (leading axes) are
// the fast paths; every reduction order is fixed by the shape and the
// thread count (partials are combined in chunk order, never atomically), or
// by the shape alone when deterministic="ON".
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/vector_math.h"

namespace msrt::kernels::cpu {

/// Chunks a long reduction is cut into when deterministic="ON", whatever
/// the thread count.
inline constexpr int kDeterministicSplit = 16;

/// Lanes a row reduction keeps: element i goes to lane i % kReduceLanes.
/// Fixed, so the summation order does not depend on the vector width.
inline constexpr int kReduceLanes = 32;
/// Bytes of the GCC/Clang generic vectors the lanes are held in (split or
/// widened by the compiler to what the target has).
inline constexpr int kVectorBytes = 32;

template <typename T>
struct VectorOf;
#define MSRT_VECTOR_OF(T)                                      \
  template <>                                                  \
  struct VectorOf<T> {                                         \
    typedef T type __attribute__((vector_size(kVectorBytes))); \
  };
MSRT_VECTOR_OF(float)
MSRT_VECTOR_OF(double)
MSRT_VECTOR_OF(int64_t)
MSRT_VECTOR_OF(int32_t)
MSRT_VECTOR_OF(int16_t)
MSRT_VECTOR_OF(int8_t)
MSRT_VECTOR_OF(uint8_t)
MSRT_VECTOR_OF(uint16_t)
MSRT_VECTOR_OF(uint32_t)
MSRT_VECTOR_OF(uint64_t)
#undef MSRT_VECTOR_OF

// Each op: Init, Combine on scalars (exact, NaN-propagating for max/min),
// and CombineVector on lanes (max/min there ignore NaN: ReduceContiguous
// tracks NaNs apart, see kTracksNaN).
struct SumOp {
  static constexpr bool kTracksNaN = false;
  template <typename T>
  static T Init() {
    return T(0);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return static_cast<T>(a + b);
  }
  template <typename V>
  [[gnu::always_inline]] static V CombineVector(V a, V b) {
    return a + b;
  }
};

struct ProdOp {
  static constexpr bool kTracksNaN = false;
  template <typename T>
  static T Init() {
    return T(1);
  }
  template <typename T>
  static T Combine(T a, T b) {
    return static_cast<T>(a * b);
  }
  template <typename V>
  [[gnu::always_inline]] static V CombineVector(V a, V b) {
    return a * b;
  }
};

struct MaxOp {
  static constexpr bool kTracksNaN = true;
  template <typename T>
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  template <typename T>
  static T Combine(T a, T b) {
    const T m = a >= b ? a : b;
    return a != a ? a : m;  // NaN propagates (b NaN: a >= b is false, so m is b)
  }
  template <typename V>
  [[gnu::always_inline]] static V CombineVector(V a, V b) {
    return a > b ? a : b;
  }
};

struct MinOp {
  static constexpr bool kTracksNaN = true;
  template <typename T>
  static T Init() {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  template <typename T>
  static T Combine(T a, T b) {
    const T m = a <= b ? a : b;
    return a != a ? a : m;
  }
  template <typename V>
  [[gnu::always_inline]] static V CombineVector(V a, V b) {
    return a < b ? a : b;
  }
};

/// Reduces n contiguous values: kReduceLanes independent accumulators held
/// in vectors, the tail added to the first lanes, then the lanes combined
/// pairwise in a fixed order.
template <class Op, typename T>
T ReduceContiguous(const T* x, int64_t n) {
  using V = typename VectorOf<T>::type;
  constexpr int kPer = kVectorBytes / static_cast<int>(sizeof(T));
  constexpr int kGroups = kReduceLanes / kPer;
  static_assert(kGroups >= 1 && kGroups * kPer == kReduceLanes);
  V acc[kGroups];
  for (int g = 0; g < kGroups; ++g) {
    for (int l = 0; l < kPer; ++l) acc[g][l] = Op::template Init<T>();
  }
  using Mask = decltype(acc[0] != acc[0]);
  Mask nan = {};
  int64_t i = 0;
  for (; i + kReduceLanes <= n; i += kReduceLanes) {
    for (int g = 0; g < kGroups; ++g) {
      V v;
      std::memcpy(&v, x + i + g * kPer, sizeof(V));
      acc[g] = Op::CombineVector(acc[g], v);
      if constexpr (Op::kTracksNaN && kIsFloat<T>) nan |= (v != v);
    }
  }
  (void)nan;
  T lanes[kReduceLanes];
  std::memcpy(lanes, acc, sizeof(lanes));
  for (int l = 0; i < n; ++i, ++l) lanes[l] = Op::Combine(lanes[l], x[i]);
  if constexpr (Op::kTracksNaN && kIsFloat<T>) {
    for (int l = 0; l < kPer; ++l) {
      if (nan[l] != 0) return std::numeric_limits<T>::quiet_NaN();
    }
  }
  for (int width = kReduceLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] = Op::Combine(lanes[l], lanes[l + width]);
  }
  return lanes[0];
}

/// y[i] = exp(x[i] - shift), returning sum(y) (16 lanes, fixed order): the
/// exponentials and their sum in one pass (softmax, losses).
template <typename T>
T ExpShiftedSum(const T* x, T* y, int64_t n, T shift) {
  constexpr int kLanes = 16;
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const T e = vecmath::Exp(x[i + l] - shift);
      y[i + l] = e;
      acc[l] += e;
    }
  }
  for (int l = 0; i < n; ++i, ++l) {
    y[i] = vecmath::Exp(x[i] - shift);
    acc[l] += y[i];
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  }
  return acc[0];
}

/// acc[b] = combine(acc[b], x[r, b]) for r in [0, R): a column reduction.
template <class Op, typename T>
void ReduceColumns(const T* x, int64_t R, int64_t B, int64_t stride, T* acc) {
  for (int64_t r = 0; r < R; ++r) {
    const T* row = x + r * stride;
    for (int64_t b = 0; b < B; ++b) acc[b] = Op::Combine(acc[b], row[b]);
  }
}

/// Calls fn(a, b0, b1) for the (a, [b0, b1)) pieces of output range [begin, end) of an (A, B) output.
template <typename Fn>
void ForOutputSegments(int64_t B, int64_t begin, int64_t end, Fn&& fn) {
  while (begin < end) {
    int64_t a = begin / B;
    int64_t b0 = begin % B;
    int64_t b1 = std::min(B, b0 + (end - begin));
    fn(a, b0, b1);
    begin += b1 - b0;
  }
}

/// out[a, b] = reduce over r of x[a, r, b].
template <class Op, typename T>
void ReduceARB(const T* x, T* out, int64_t A, int64_t R, int64_t B) {
  const int64_t outputs = A * B;
  if (outputs == 0) return;
  if (R == 0) {
    std::fill(out, out + outputs, Op::template Init<T>());
    return;
  }
  const int64_t total = outputs * R;
  // deterministic="ON": the split (and so the order partials are combined
  // in) must not depend on the thread count; the pool still runs the chunks.
  const int threads = DeterministicKernels() ? kDeterministicSplit : IntraOpThreads();
  // Few outputs over a long reduction: split R and combine partials in order.
  if (total >= 2 * kGrain && outputs < 4 * static_cast<int64_t>(threads)) {
    const Split split = SplitWork(R, std::max<int64_t>(kGrain / outputs, 1), threads);
    std::vector<T> partial(static_cast<size_t>(split.chunks * outputs));
    ParallelFor(split.chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t r0 = c * split.chunk_size;
        const int64_t r1 = std::min(R, r0 + split.chunk_size);
        T* p = partial.data() + c * outputs;
        for (int64_t a = 0; a < A; ++a) {
          if (B == 1) {
            p[a] = ReduceContiguous<Op>(x + a * R + r0, r1 - r0);
          } else {
            T* pa = p + a * B;
            std::fill(pa, pa + B, Op::template Init<T>());
            ReduceColumns<Op>(x + (a * R + r0) * B, r1 - r0, B, B, pa);
          }
        }
      }
    });
    for (int64_t o = 0; o < outputs; ++o) {
      T acc = partial[o];
      for (int64_t c = 1; c < split.chunks; ++c) acc = Op::Combine(acc, partial[c * outputs + o]);
      out[o] = acc;
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(kGrain / R, 1);
  if (B == 1) {
    ParallelElements(
        A,
        [&](int64_t a0, int64_t a1) {
          for (int64_t a = a0; a < a1; ++a) out[a] = ReduceContiguous<Op>(x + a * R, R);
        },
        grain);
    return;
  }
  ParallelElements(
      outputs,
      [&](int64_t begin, int64_t end) {
        ForOutputSegments(B, begin, end, [&](int64_t a, int64_t b0, int64_t b1) {
          T* o = out + a * B + b0;
          std::fill(o, o + (b1 - b0), Op::template Init<T>());
          ReduceColumns<Op>(x + a * R * B + b0, R, b1 - b0, B, o);
        });
      },
      grain);
}

}  // namespace msrt::kernels::cpu
