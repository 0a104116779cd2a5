// cumsum / cumprod (ops/cumulative.cc): cumprod's gradient kernel against a
// brute-force sum of products, zeros included, in every direction and mode.
#include <gtest/gtest.h>

#include <vector>

#include "ops/call.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

Tensor Floats(const std::vector<double>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(double), shape, DType::kFloat64);
}

std::vector<double> Values(const Tensor& t) {
  t.Sync();
  const double* p = t.raw<double>();
  return std::vector<double>(p, p + NumElements(t.shape()));
}

// d/dx_k of sum_i dy_i * y_i along one line, y the (exclusive, reversed) cumprod.
std::vector<double> BruteForce(const std::vector<double>& x, const std::vector<double>& dy, bool exclusive,
                               bool reverse) {
  const int n = static_cast<int>(x.size());
  auto pos = [&](int t) { return reverse ? n - 1 - t : t; };
  std::vector<double> dx(x.size(), 0.0);
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < n; ++i) {
      double product = 1.0;
      bool depends = false;
      for (int j = 0; j < (exclusive ? i : i + 1); ++j) {
        if (j == k) {
          depends = true;
        } else {
          product *= x[pos(j)];
        }
      }
      if (depends) dx[pos(k)] += dy[pos(i)] * product;
    }
  }
  return dx;
}

TEST(CumprodGrad, IsExactWithZeros) {
  const std::vector<double> x = {2.0, 0.0, -3.0, 0.5, 0.0, 4.0};
  const std::vector<double> dy = {1.0, -2.0, 0.5, 3.0, 1.5, -1.0};
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      Tensor dx = Call1("cumprod_grad", {Floats(x, {6}), Floats(dy, {6})},
                        Dict{{"axis", Value(0)}, {"exclusive", Value(exclusive)}, {"reverse", Value(reverse)}});
      std::vector<double> want = BruteForce(x, dy, exclusive, reverse);
      std::vector<double> got = Values(dx);
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_DOUBLE_EQ(got[i], want[i]) << "exclusive=" << exclusive << " reverse=" << reverse << " i=" << i;
      }
    }
  }
}

TEST(CumprodGrad, ColumnsMatchLines) {
  // Along axis 0 of (6, 2): each column is the line above (scaled in column 1).
  const std::vector<double> x = {2.0, 4.0, 0.0, 0.0, -3.0, -6.0, 0.5, 1.0, 0.0, 0.0, 4.0, 8.0};
  const std::vector<double> dy(12, 1.0);
  Tensor dx = Call1("cumprod_grad", {Floats(x, {6, 2}), Floats(dy, {6, 2})},
                    Dict{{"axis", Value(0)}, {"exclusive", Value(false)}, {"reverse", Value(false)}});
  std::vector<double> got = Values(dx);
  std::vector<double> line = BruteForce({2.0, 0.0, -3.0, 0.5, 0.0, 4.0}, std::vector<double>(6, 1.0), false, false);
  for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(got[2 * i], line[i]);
}

TEST(Cumsum, NoneAxisScansTheFlattenedTensor) {
  Tensor y = Call1("cumsum", {Floats({1, 2, 3, 4, 5, 6}, {2, 3})}, Dict{{"axis", Value()}});
  EXPECT_EQ(y.shape(), (Shape{6}));
  EXPECT_EQ(Values(y), (std::vector<double>{1, 3, 6, 10, 15, 21}));
}

}  // namespace
}  // namespace msrt::ops
