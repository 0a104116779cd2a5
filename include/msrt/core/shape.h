// Shapes and their sizes, computed with overflow checks in one place.
//
// Every element count and byte size msrt computes from a shape (creating,
// reshaping, broadcasting, op inference, arrays from NumPy, shapes read from
// files) goes through these functions. A shape is valid when every dimension
// is non-negative and the product of its non-zero dimensions, times the
// element size, fits in a signed 64-bit byte count (NumPy's rule: a shape
// with a zero dimension is checked too, so every partial product a kernel
// computes fits as well).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "msrt/core/dtype.h"

namespace msrt {

using Shape = std::vector<int64_t>;

/// A dimension of unknown size in a graph compiled for dynamic shapes
/// (Note [Dynamic shapes] in src/compiler/dynamic_shape.h); never in a tensor.
inline constexpr int64_t kDynamicDim = -1;

/// Whether `shape` has a kDynamicDim.
bool IsDynamic(const Shape& shape);

/// Whether `concrete` fits `pattern`: the same rank, and every dimension of
/// `pattern` that is not kDynamicDim equal.
bool ShapeMatches(const Shape& pattern, const Shape& concrete);

/// "(2, 3)" — Python tuple style.
std::string ShapeRepr(const Shape& shape);

/// Number of elements of a shape (1 for a scalar). ValueError for a negative
/// dimension or a count that does not fit in int64.
int64_t NumElements(const Shape& shape);

/// Bytes of a tensor of `shape` and `dtype`. ValueError for a negative
/// dimension or a size that does not fit in a signed 64-bit byte count.
size_t NumBytes(const Shape& shape, DType dtype);

/// Raises ValueError unless `shape` is valid for `dtype` (see above). `what`
/// names the caller in the message ("For 'reshape', ..."); empty for none.
void CheckShape(const Shape& shape, DType dtype, std::string_view what = {});

/// a * b and a + b for sizes; ValueError naming `what` when they overflow.
int64_t CheckedMul(int64_t a, int64_t b, std::string_view what);
int64_t CheckedAdd(int64_t a, int64_t b, std::string_view what);

}  // namespace msrt
