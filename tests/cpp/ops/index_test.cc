// gather_elements / tensor_scatter_elements (ops/index.cc): repeated indices
// in a scatter apply in index order (the last write wins, adds all count),
// negative indices count from the end, and bad indices raise IndexError
// before anything is written.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "msrt/core/errors.h"
#include "ops/call.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

Tensor Floats(const std::vector<double>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(double), shape, DType::kFloat64);
}

Tensor Indices(const std::vector<int64_t>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(int64_t), shape, DType::kInt64);
}

std::vector<double> Values(const Tensor& t) {
  t.Sync();
  const double* p = t.raw<double>();
  return std::vector<double>(p, p + NumElements(t.shape()));
}

TEST(TensorScatterElements, RepeatedIndicesApplyInOrder) {
  Tensor x = Floats({0, 0, 0, 0}, {1, 4});
  Tensor idx = Indices({1, 3, 1, -3}, {1, 4});  // -3 is 1 again
  Tensor updates = Floats({10, 20, 30, 40}, {1, 4});
  Tensor replaced = Call1("tensor_scatter_elements", {x, idx, updates},
                          Dict{{"axis", Value(1)}, {"reduction", Value("none")}});
  EXPECT_EQ(Values(replaced), (std::vector<double>{0, 40, 0, 20}));
  Tensor added = Call1("tensor_scatter_elements", {x, idx, updates},
                       Dict{{"axis", Value(1)}, {"reduction", Value("add")}});
  EXPECT_EQ(Values(added), (std::vector<double>{0, 80, 0, 20}));
}

TEST(GatherElements, SmallerIndexShapesAndNegativeIndices) {
  Tensor x = Floats({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = Call1("gather_elements", {x, Indices({-1, 0}, {1, 2})}, Dict{{"dim", Value(1)}});
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_EQ(Values(y), (std::vector<double>{3, 1}));
}

TEST(GatherElements, OutOfRangeIndicesRaiseIndexError) {
  Tensor x = Floats({1, 2, 3}, {3});
  EXPECT_THROW(
      {
        Tensor y = Call1("gather_elements", {x, Indices({0, 3}, {2})}, Dict{{"dim", Value(0)}});
        y.Sync();
      },
      IndexError);
}

}  // namespace
}  // namespace msrt::ops
