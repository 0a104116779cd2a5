#include "msrt/core/shape.h"

#include <algorithm>
#include <limits>

#include "msrt/core/errors.h"

namespace msrt {
namespace {

// The product of the non-zero dimensions times `item_size`, or -1 when a
// dimension is negative, -2 when it overflows. Zero dimensions still count
// in the check (NumPy's rule), so the real size is 0 when one is present.
int64_t CheckedProduct(const Shape& shape, int64_t item_size, bool* has_zero) {
  int64_t n = item_size;
  *has_zero = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d == 0) {
      *has_zero = true;
      continue;
    }
    if (__builtin_mul_overflow(n, d, &n)) return -2;
  }
  return n;
}

[[noreturn]] void ThrowBadShape(int64_t status, const Shape& shape, std::string_view dtype, std::string_view what) {
  std::string prefix = what.empty() ? std::string() : StrCat("For '", what, "', ");
  if (status == -1) {
    throw ValueError(StrCat(prefix, prefix.empty() ? "A" : "a",
                            " tensor shape can not have negative dimensions, but got ", ShapeRepr(shape), "."));
  }
  throw ValueError(StrCat(prefix, prefix.empty() ? "A" : "a", " tensor of shape ", ShapeRepr(shape),
                          dtype.empty() ? std::string() : StrCat(" and dtype ", dtype), " is too big: its number of ",
                          dtype.empty() ? "elements" : "bytes", " does not fit in a signed 64-bit integer (at most ",
                          std::numeric_limits<int64_t>::max(), ")."));
}

}  // namespace

bool IsDynamic(const Shape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d == kDynamicDim; });
}

bool ShapeMatches(const Shape& pattern, const Shape& concrete) {
  if (pattern.size() != concrete.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != kDynamicDim && pattern[i] != concrete[i]) return false;
  }
  return true;
}

std::string ShapeRepr(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

int64_t NumElements(const Shape& shape) {
  bool has_zero = false;
  int64_t n = CheckedProduct(shape, 1, &has_zero);
  if (n < 0) ThrowBadShape(n, shape, {}, {});
  return has_zero ? 0 : n;
}

size_t NumBytes(const Shape& shape, DType dtype) {
  bool has_zero = false;
  int64_t n = CheckedProduct(shape, static_cast<int64_t>(ItemSize(dtype)), &has_zero);
  if (n < 0) ThrowBadShape(n, shape, DTypeName(dtype), {});
  return has_zero ? 0 : static_cast<size_t>(n);
}

void CheckShape(const Shape& shape, DType dtype, std::string_view what) {
  bool has_zero = false;
  int64_t n = CheckedProduct(shape, static_cast<int64_t>(ItemSize(dtype)), &has_zero);
  if (n < 0) ThrowBadShape(n, shape, DTypeName(dtype), what);
}

int64_t CheckedMul(int64_t a, int64_t b, std::string_view what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) {
    throw ValueError(StrCat("For '", what, "', the size ", a, " * ", b, " does not fit in a signed 64-bit integer."));
  }
  return out;
}

int64_t CheckedAdd(int64_t a, int64_t b, std::string_view what) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    throw ValueError(StrCat("For '", what, "', the size ", a, " + ", b, " does not fit in a signed 64-bit integer."));
  }
  return out;
}

}  // namespace msrt
