// Index arithmetic the CPU kernels share: row-major strides, and a tensor
// seen as (A, R, B) around one axis.
#pragma once

#include <cstdint>
#include <vector>

#include "msrt/core/shape.h"

namespace msrt::kernels::cpu {

/// Row-major strides of `shape`, in elements.
inline std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

/// A tensor as (A, R, B): the product of the sizes before an axis, the
/// axis's own size, and the product of the sizes after it.
struct AxisView {
  int64_t A = 1, R = 1, B = 1;
};

inline AxisView ViewAlong(const Shape& shape, int64_t axis) {
  AxisView v;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < axis) v.A *= shape[i];
    if (i == axis) v.R = shape[i];
    if (i > axis) v.B *= shape[i];
  }
  return v;
}

}  // namespace msrt::kernels::cpu
