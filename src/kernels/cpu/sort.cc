// CPU kernels of sort and topk. x is viewed as (A, R, B) around the axis;
// threads split the A * B lines, each sorted through an index array with a
// total order (NaN above every number, ties by index), so the result does
// not depend on the thread count.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/reduce_loops.h"
#include "ops/op_checks.h"

namespace msrt::kernels::cpu {
namespace {

// Whether element i (value a) comes before element j (value b).
template <typename T>
bool Before(T a, T b, int32_t i, int32_t j, bool largest_first) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return i < j;
    return largest_first ? a_nan : b_nan;  // NaN is the largest
  }
  if (a != b) return largest_first ? a > b : a < b;
  return i < j;
}

// For each line of (A, R, B): its first `k` elements in order, as values
// and int32 indices into the line.
template <typename T>
void SortLines(const T* x, T* values, int32_t* indices, const AxisView& v, int64_t k, bool largest_first) {
  const int64_t lines = v.A * v.B;
  if (lines == 0 || k == 0) return;
  ParallelElements(
      lines,
      [&](int64_t begin, int64_t end) {
        std::vector<T> line(static_cast<size_t>(v.R));
        std::vector<int32_t> order(static_cast<size_t>(v.R));
        for (int64_t l = begin; l < end; ++l) {
          const int64_t a = l / v.B, b = l % v.B;
          const T* src = x + a * v.R * v.B + b;
          for (int64_t r = 0; r < v.R; ++r) line[r] = src[r * v.B];
          std::iota(order.begin(), order.end(), 0);
          auto before = [&](int32_t i, int32_t j) { return Before(line[i], line[j], i, j, largest_first); };
          if (k < v.R) {
            std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          } else {
            std::sort(order.begin(), order.end(), before);
          }
          T* dst = values + a * k * v.B + b;
          int32_t* idx = indices + a * k * v.B + b;
          for (int64_t t = 0; t < k; ++t) {
            dst[t * v.B] = line[order[t]];
            idx[t * v.B] = order[t];
          }
        }
      },
      std::max<int64_t>(kGrain / std::max<int64_t>(v.R, 1) / 8, 1));
}

void RunSortLike(KernelArgs& args, int64_t axis_attr, int64_t k, bool largest_first) {
  const Tensor& x = args.inputs[0];
  Tensor& values = args.outputs[0];
  Tensor& indices = args.outputs[1];
  const int64_t axis = ops::NormalizeAxis(args.op.name, axis_attr, std::max(x.ndim(), 1));
  const AxisView v = x.ndim() == 0 ? AxisView{} : ViewAlong(x.shape(), axis);
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor vc = values.dtype() == compute ? values : Tensor::Empty(values.shape(), compute);
  Dispatch(NumberTypeList{}, compute, args.op.name,
           [&]<typename T>() { SortLines(xc.raw<T>(), vc.raw<T>(), indices.raw<int32_t>(), v, k, largest_first); });
  if (!vc.same(values)) ConvertInto(vc, values);
}

void RunSort(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t axis = ops::AttrInt(args.attrs, "axis");
  const int64_t n = x.ndim() == 0 ? 1 : x.shape()[ops::NormalizeAxis("sort", axis, x.ndim())];
  RunSortLike(args, axis, n, ops::AttrBool(args.attrs, "descending"));
}

void RunTopK(KernelArgs& args) {
  const Value& axis = ops::Attr(args.attrs, "axis");
  RunSortLike(args, axis.is_none() ? -1 : axis.as_int(), ops::AttrInt(args.attrs, "k"),
              ops::AttrBool(args.attrs, "largest"));
}

// The distinct values in ascending order (through a stable sort of the
// indices); output 0 becomes a view of the count found.
void RunUnique(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t n = x.numel();
  const Tensor xc = ConvertTensor(x, NativeComputeType(x.dtype()));
  int32_t* idx = args.outputs[1].raw<int32_t>();
  std::vector<int64_t> firsts;  // per distinct value, the index of an element holding it
  DispatchNative(xc.dtype(), [&]<typename T>() {
    const T* v = xc.raw<T>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto before = [&](int64_t i, int64_t j) {
      const bool i_nan = v[i] != v[i], j_nan = v[j] != v[j];  // NaN after every number
      return i_nan || j_nan ? !i_nan && j_nan : v[i] < v[j];
    };
    std::stable_sort(order.begin(), order.end(), before);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = order[static_cast<size_t>(k)];
      if (k == 0 || before(order[static_cast<size_t>(k - 1)], i)) firsts.push_back(i);
      idx[i] = static_cast<int32_t>(firsts.size() - 1);
    }
  });
  Tensor& out = args.outputs[0];
  const size_t item = ItemSize(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.data());
  auto* dst = static_cast<uint8_t*>(out.mutable_data());
  for (size_t k = 0; k < firsts.size(); ++k) {
    std::memcpy(dst + k * item, src + static_cast<size_t>(firsts[k]) * item, item);
  }
  auto view = std::make_shared<TensorImpl>();
  view->storage = out.impl()->storage;
  view->offset = out.impl()->offset;
  view->dtype = out.dtype();
  view->shape = {static_cast<int64_t>(firsts.size())};
  out = Tensor(std::move(view));
}

MSRT_REGISTER_KERNEL({.op = "sort", .impl = "vectorized", .priority = 1, .run = &RunSort});
MSRT_REGISTER_KERNEL({.op = "unique", .impl = "reference", .priority = 0, .run = &RunUnique});
MSRT_REGISTER_KERNEL({.op = "topk", .impl = "vectorized", .priority = 1, .run = &RunTopK});

}  // namespace
}  // namespace msrt::kernels::cpu
