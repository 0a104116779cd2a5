// CPU kernels of gather_elements and tensor_scatter_elements. The index
// tensor is viewed as lines along the axis; a line reads (gather) or writes
// (scatter) only the line of x at the same coordinates on the other axes,
// so threads split the lines and a scatter's repeated indices are applied
// in index order (the last wins, or all add up) whatever the thread count.
#include <cstring>
#include <type_traits>

#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/reduce_loops.h"
#include "ops/op_checks.h"

namespace msrt::kernels::cpu {
namespace {

// Where the lines of `index` (shape `is`) start in x (shape `xs`) along `axis`.
struct LinePlan {
  int64_t lines = 0;      // index elements / index size along axis
  int64_t length = 0;     // index size along axis
  int64_t dim = 0;        // x's size along axis
  int64_t x_stride = 0;   // x's stride along axis
  int64_t ix_stride = 0;  // index's stride along axis
  Shape is;
  std::vector<int64_t> x_strides, i_strides;
  int axis = 0;

  // Offsets in x and in index of line l's first element.
  std::pair<int64_t, int64_t> Start(int64_t l) const {
    int64_t x_off = 0, i_off = 0;
    for (int d = static_cast<int>(is.size()) - 1; d >= 0; --d) {
      if (d == axis) continue;
      const int64_t c = l % is[d];
      l /= is[d];
      x_off += c * x_strides[d];
      i_off += c * i_strides[d];
    }
    return {x_off, i_off};
  }
};

LinePlan PlanLines(const Shape& xs, const Shape& is, int64_t axis) {
  LinePlan p;
  p.axis = static_cast<int>(axis);
  p.is = is;
  p.x_strides = Strides(xs);
  p.i_strides = Strides(is);
  p.length = is[axis];
  p.dim = xs[axis];
  p.x_stride = p.x_strides[axis];
  p.ix_stride = p.i_strides[axis];
  p.lines = p.length == 0 ? 0 : NumElements(is) / p.length;
  return p;
}

// IndexError for the first index outside [-dim, dim) (checked before any thread starts).
template <typename I>
void CheckIndices(std::string_view op, std::string_view name, const I* idx, int64_t n, int64_t dim, int64_t axis) {
  for (int64_t k = 0; k < n; ++k) {
    const int64_t v = static_cast<int64_t>(idx[k]);
    if (v < -dim || v >= dim) {
      ops::OpError(ErrorKind::kIndex, op,
                   StrCat("index ", v, " at position ", k, " of '", name, "' is out of range for axis ", axis,
                          " of size ", dim, "; expected ", -dim, " <= index < ", dim, ", but got ", v));
    }
  }
}

template <typename I>
inline int64_t Wrap(I v, int64_t dim) {
  const int64_t i = static_cast<int64_t>(v);
  return i < 0 ? i + dim : i;
}

int64_t LineGrain(const LinePlan& p) { return std::max<int64_t>(kGrain / std::max<int64_t>(p.length, 1), 1); }

void GatherElements(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& index = args.inputs[1];
  Tensor& y = args.outputs[0];
  const int64_t axis = ops::NormalizeAxis(args.op.name, ops::AttrInt(args.attrs, "dim"), x.ndim());
  const LinePlan p = PlanLines(x.shape(), index.shape(), axis);
  Dispatch(IndexTypeList{}, index.dtype(), args.op.name, [&]<typename I>() {
    const I* idx = index.raw<I>();
    CheckIndices(args.op.name, "index", idx, index.numel(), p.dim, axis);
    DispatchBytes(ItemSize(x.dtype()), [&]<typename U>() {
      const U* src = x.raw<U>();
      U* dst = y.raw<U>();  // y has index's shape and strides
      ParallelElements(
          p.lines,
          [&](int64_t l0, int64_t l1) {
            for (int64_t l = l0; l < l1; ++l) {
              const auto [x_off, i_off] = p.Start(l);
              for (int64_t r = 0; r < p.length; ++r) {
                const int64_t at = i_off + r * p.ix_stride;
                dst[at] = src[x_off + Wrap(idx[at], p.dim) * p.x_stride];
              }
            }
          },
          LineGrain(p));
    });
  });
}

void TensorScatterElements(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  const Tensor& updates = args.inputs[2];
  Tensor& y = args.outputs[0];
  const int64_t axis = ops::NormalizeAxis(args.op.name, ops::AttrInt(args.attrs, "axis"), x.ndim());
  const bool add = ops::AttrString(args.attrs, "reduction") == "add";
  const LinePlan p = PlanLines(x.shape(), indices.shape(), axis);
  Dispatch(IndexTypeList{}, indices.dtype(), args.op.name, [&]<typename I>() {
    const I* idx = indices.raw<I>();
    CheckIndices(args.op.name, "indices", idx, indices.numel(), p.dim, axis);
    if (!add) {
      if (!x.same(y)) std::memcpy(y.raw(), x.raw(), x.nbytes());
      DispatchBytes(ItemSize(x.dtype()), [&]<typename U>() {
        const U* src = updates.raw<U>();
        U* dst = y.raw<U>();
        ParallelElements(
            p.lines,
            [&](int64_t l0, int64_t l1) {
              for (int64_t l = l0; l < l1; ++l) {
                const auto [x_off, i_off] = p.Start(l);
                for (int64_t r = 0; r < p.length; ++r) {
                  const int64_t at = i_off + r * p.ix_stride;
                  dst[x_off + Wrap(idx[at], p.dim) * p.x_stride] = src[at];
                }
              }
            },
            LineGrain(p));
      });
      return;
    }
    // Adds accumulate in float32 for the half types.
    const DType compute = NativeComputeType(x.dtype());
    Tensor out = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
    ConvertInto(x, out);
    Tensor uc = ConvertTensor(updates, compute);
    Dispatch(NumberTypeList{}, compute, args.op.name, [&]<typename T>() {
      const T* src = uc.raw<T>();
      T* dst = out.raw<T>();
      ParallelElements(
          p.lines,
          [&](int64_t l0, int64_t l1) {
            for (int64_t l = l0; l < l1; ++l) {
              const auto [x_off, i_off] = p.Start(l);
              for (int64_t r = 0; r < p.length; ++r) {
                const int64_t at = i_off + r * p.ix_stride;
                T& target = dst[x_off + Wrap(idx[at], p.dim) * p.x_stride];
                if constexpr (std::is_integral_v<T>) {  // integers wrap rather than overflow
                  using W = std::make_unsigned_t<T>;
                  target = static_cast<T>(static_cast<W>(static_cast<W>(target) + static_cast<W>(src[at])));
                } else {
                  target += src[at];
                }
              }
            }
          },
          LineGrain(p));
    });
    if (!out.same(y)) ConvertInto(out, y);
  });
}

MSRT_REGISTER_KERNEL({.op = "gather_elements", .impl = "vectorized", .priority = 1, .run = &GatherElements});
MSRT_REGISTER_KERNEL(
    {.op = "tensor_scatter_elements", .impl = "vectorized", .priority = 1, .run = &TensorScatterElements});

}  // namespace
}  // namespace msrt::kernels::cpu
