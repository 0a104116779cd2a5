// CPU kernels of the shape ops that move elements: transpose, concat, stack,
// split, strided_slice, gather (and its scatter-add gradient), one_hot,
// broadcast_to and tile. Moving kernels only look at element sizes, so one
// instantiation per size serves every dtype.
#include <cstring>

#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/reduce_loops.h"
#include "ops/op_checks.h"
#include "ops/shape_utils.h"

namespace msrt::kernels::cpu {
namespace {

// Outer (before axis), the axis, and inner (after axis) sizes.
struct AxisSplit {
  int64_t outer = 1, dim = 1, inner = 1;
};
AxisSplit SplitAt(const Shape& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < axis) s.outer *= shape[i];
    if (i == axis) s.dim = shape[i];
    if (i > axis) s.inner *= shape[i];
  }
  return s;
}

// ---- transpose ----

// Walks the output in order; each output row gathers from the input with a
// fixed stride (1 when the last axis stays last).
template <typename U>
void TransposeLoop(const U* in, U* out, const Shape& out_dims, const std::vector<int64_t>& in_strides) {
  const int rank = static_cast<int>(out_dims.size());
  const int64_t n = NumElements(out_dims);
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = in_strides[rank - 1];
  ParallelElements(n, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(rank, 0);
    int64_t rem = begin, offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      index[d] = rem % out_dims[d];
      rem /= out_dims[d];
      offset += index[d] * in_strides[d];
    }
    int64_t pos = begin;
    while (pos < end) {
      int64_t count = std::min(inner - index[rank - 1], end - pos);
      const U* src = in + offset;
      U* dst = out + pos;
      if (inner_stride == 1) {
        std::memcpy(dst, src, count * sizeof(U));
      } else {
        for (int64_t i = 0; i < count; ++i) dst[i] = src[i * inner_stride];
      }
      pos += count;
      offset += count * inner_stride;
      index[rank - 1] += count;
      for (int d = rank - 1; d > 0 && index[d] == out_dims[d]; --d) {
        offset -= out_dims[d] * in_strides[d];
        index[d] = 0;
        ++index[d - 1];
        offset += in_strides[d - 1];
      }
    }
  });
}

// Transposes the last two dims of (batch, rows, cols) in cache-sized tiles.
template <typename U>
void TransposeTiles(const U* in, U* out, int64_t batch, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  ParallelElements(
      batch * row_tiles,
      [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t b = t / row_tiles;
          const int64_t r0 = (t % row_tiles) * kTile;
          const int64_t r1 = std::min(rows, r0 + kTile);
          const U* src = in + b * rows * cols;
          U* dst = out + b * rows * cols;
          for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
            const int64_t c1 = std::min(cols, c0 + kTile);
            for (int64_t r = r0; r < r1; ++r) {
              for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
            }
          }
        }
      },
      std::max<int64_t>(kGrain / (kTile * std::max<int64_t>(cols, 1)), 1));
}

void Transpose(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if (y.numel() == 0) return;
  auto perm = ops::CheckPermutation("transpose", ops::AttrInts(args.attrs, "perm"), x.ndim());
  // Collapse: drop size-1 axes (renumbering the rest), then merge input axes
  // that stay adjacent into runs.
  std::vector<int64_t> compact(perm.size(), -1);
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < perm.size(); ++i) {
    if (x.shape()[i] != 1) {
      compact[i] = static_cast<int64_t>(sizes.size());
      sizes.push_back(x.shape()[i]);
    }
  }
  std::vector<std::vector<int64_t>> runs;  // runs of compact input axes, in output order
  for (int64_t p : perm) {
    const int64_t c = compact[p];
    if (c < 0) continue;
    if (!runs.empty() && runs.back().back() + 1 == c) {
      runs.back().push_back(c);
    } else {
      runs.push_back({c});
    }
  }
  std::vector<size_t> order(runs.size());  // runs in input order
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[a][0] < runs[b][0]; });
  std::vector<int64_t> run_size(runs.size(), 1);
  for (size_t i = 0; i < runs.size(); ++i) {
    for (int64_t c : runs[i]) run_size[i] *= sizes[c];
  }
  std::vector<int64_t> run_stride(runs.size(), 1);
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    run_stride[*it] = stride;
    stride *= run_size[*it];
  }
  DispatchBytes(ItemSize(x.dtype()), [&]<typename U>() {
    const U* in = x.raw<U>();
    U* out = y.raw<U>();
    if (runs.size() <= 1) {
      std::memcpy(out, in, x.nbytes());
      return;
    }
    // (batch, rows, cols) -> (batch, cols, rows): the common matrix transpose.
    const size_t k = runs.size();
    bool batched_swap = (k == 2 && order[0] == 1) || (k == 3 && order[0] == 0 && order[1] == 2 && order[2] == 1);
    if (batched_swap) {
      const int64_t batch = k == 3 ? run_size[0] : 1;
      const int64_t rows = run_size[k - 1];  // input rows = the run now last
      const int64_t cols = run_size[k - 2];
      TransposeTiles(in, out, batch, rows, cols);
      return;
    }
    TransposeLoop(in, out, Shape(run_size.begin(), run_size.end()), run_stride);
  });
}

// ---- concat, stack, split ----

// Copies each input's (outer, chunk) blocks side by side into out.
void JoinAlong(const std::vector<Tensor>& inputs, Tensor& out, int64_t outer) {
  std::vector<int64_t> chunk(inputs.size());  // bytes per outer index
  int64_t row = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    chunk[i] = outer == 0 ? 0 : static_cast<int64_t>(inputs[i].nbytes()) / outer;
    row += chunk[i];
  }
  char* dst = static_cast<char*>(out.raw());
  ParallelElements(
      outer,
      [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          char* d = dst + o * row;
          for (size_t i = 0; i < inputs.size(); ++i) {
            std::memcpy(d, static_cast<const char*>(inputs[i].raw()) + o * chunk[i], chunk[i]);
            d += chunk[i];
          }
        }
      },
      std::max<int64_t>(kGrain * 4 / std::max<int64_t>(row, 1), 1));
}

void Concat(KernelArgs& args) {
  Tensor& y = args.outputs[0];
  int64_t axis = ops::NormalizeAxis("concat", ops::AttrInt(args.attrs, "axis"), y.ndim());
  JoinAlong(args.inputs, y, SplitAt(y.shape(), axis).outer);
}

void Stack(KernelArgs& args) {
  Tensor& y = args.outputs[0];
  int64_t axis = ops::NormalizeAxis("stack", ops::AttrInt(args.attrs, "axis"), y.ndim());
  JoinAlong(args.inputs, y, SplitAt(y.shape(), axis).outer);
}

void Split(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  int64_t axis = ops::NormalizeAxis("split", ops::AttrInt(args.attrs, "axis"), x.ndim());
  const int64_t outer = SplitAt(x.shape(), axis).outer;
  if (outer == 0 || x.nbytes() == 0) return;
  const int64_t row = static_cast<int64_t>(x.nbytes()) / outer;
  const int64_t chunk = row / static_cast<int64_t>(args.outputs.size());
  const char* src = static_cast<const char*>(x.raw());
  ParallelElements(
      outer,
      [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          for (size_t i = 0; i < args.outputs.size(); ++i) {
            std::memcpy(static_cast<char*>(args.outputs[i].raw()) + o * chunk, src + o * row + i * chunk, chunk);
          }
        }
      },
      std::max<int64_t>(kGrain * 4 / std::max<int64_t>(row, 1), 1));
}

// ---- strided_slice ----

void StridedSlice(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if (y.numel() == 0) return;
  ops::SliceSpec spec = ops::ResolveSlice(x.shape(), args.attrs);
  const int rank = x.ndim();
  if (rank == 0) {
    std::memcpy(y.raw(), x.raw(), x.nbytes());
    return;
  }
  const std::vector<int64_t> in_strides = Strides(x.shape());
  int64_t base = 0;
  std::vector<int64_t> step_strides(rank);
  for (int d = 0; d < rank; ++d) {
    base += spec.start[d] * in_strides[d];
    step_strides[d] = spec.step[d] * in_strides[d];
  }
  DispatchBytes(ItemSize(x.dtype()),
                [&]<typename U>() { TransposeLoop(x.raw<U>() + base, y.raw<U>(), y.shape(), step_strides); });
}

// ---- gather ----

template <typename I>
void CheckIndices(std::string_view op, const I* idx, int64_t n, int64_t dim, int64_t axis) {
  for (int64_t k = 0; k < n; ++k) {
    if (idx[k] < 0 || idx[k] >= dim) {
      ops::OpError(ErrorKind::kIndex, op,
                   StrCat("index ", static_cast<int64_t>(idx[k]), " at position ", k,
                          " of 'indices' is out of range for axis ", axis, " of size ", dim, "; expected 0 <= index < ",
                          dim, ", but got ", static_cast<int64_t>(idx[k])));
    }
  }
}

void Gather(KernelArgs& args) {
  const Tensor& params = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  Tensor& y = args.outputs[0];
  const int64_t axis = ops::NormalizeAxis("gather", ops::AttrInt(args.attrs, "axis"), params.ndim());
  const AxisSplit p = SplitAt(params.shape(), axis);
  const int64_t k = indices.numel();
  const size_t row = static_cast<size_t>(p.inner) * ItemSize(params.dtype());
  Dispatch(IndexTypeList{}, indices.dtype(), "gather", [&]<typename I>() {
    const I* idx = indices.raw<I>();
    CheckIndices("gather", idx, k, p.dim, axis);
    const char* src = static_cast<const char*>(params.raw());
    char* dst = static_cast<char*>(y.raw());
    ParallelElements(
        p.outer * k,
        [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t) {
            const int64_t a = t / k, j = t % k;
            std::memcpy(dst + t * row, src + (a * p.dim + static_cast<int64_t>(idx[j])) * row, row);
          }
        },
        std::max<int64_t>(kGrain * 4 / std::max<int64_t>(static_cast<int64_t>(row), 1), 1));
  });
}

void GatherGrad(KernelArgs& args) {
  const Tensor& dy = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  Tensor& dx = args.outputs[0];
  const int64_t axis = ops::AttrInt(args.attrs, "axis");
  const AxisSplit o = SplitAt(dx.shape(), axis);
  const int64_t k = indices.numel();
  const DType compute = NativeComputeType(dy.dtype());
  Tensor g = ConvertTensor(dy, compute);
  Tensor out = dx.dtype() == compute ? dx : Tensor::Empty(dx.shape(), compute);
  std::memset(out.raw(), 0, out.nbytes());
  Dispatch(IndexTypeList{}, indices.dtype(), "gather_grad", [&]<typename I>() {
    const I* idx = indices.raw<I>();
    CheckIndices("gather_grad", idx, k, o.dim, axis);
    Dispatch(NumberTypeList{}, compute, "gather_grad", [&]<typename T>() {
      const T* src = g.raw<T>();
      T* dst = out.raw<T>();
      // Each output element sums its contributions in index order: parallel
      // over outer slices and inner columns, never over k.
      const int64_t cols = o.outer * o.inner;
      ParallelElements(
          cols,
          [&](int64_t begin, int64_t end) {
            ForOutputSegments(o.inner, begin, end, [&](int64_t a, int64_t c0, int64_t c1) {
              for (int64_t j = 0; j < k; ++j) {
                const T* s = src + (a * k + j) * o.inner;
                T* d = dst + (a * o.dim + static_cast<int64_t>(idx[j])) * o.inner;
                for (int64_t c = c0; c < c1; ++c) d[c] += s[c];
              }
            });
          },
          std::max<int64_t>(kGrain / std::max<int64_t>(k, 1), 1));
    });
  });
  if (!out.same(dx)) ConvertInto(out, dx);
}

// ---- one_hot, broadcast_to, tile ----

void OneHot(KernelArgs& args) {
  const Tensor& indices = args.inputs[0];
  Tensor& y = args.outputs[0];
  const int64_t depth = ops::AttrInt(args.attrs, "depth");
  int64_t axis = ops::AttrInt(args.attrs, "axis");
  if (axis == -1) axis = indices.ndim();
  const AxisSplit s = SplitAt(y.shape(), axis);  // (prefix, depth, suffix)
  const double on = ops::AttrFloat(args.attrs, "on_value");
  const double off = ops::AttrFloat(args.attrs, "off_value");
  Dispatch(IndexTypeList{}, indices.dtype(), "one_hot", [&]<typename I>() {
    const I* idx = indices.raw<I>();
    Dispatch(AllTypeList{}, y.dtype(), "one_hot", [&]<typename T>() {
      const T on_v = ConvertValue<T>(on), off_v = ConvertValue<T>(off);
      T* out = y.raw<T>();
      ParallelElements(
          s.outer,
          [&](int64_t a0, int64_t a1) {
            for (int64_t a = a0; a < a1; ++a) {
              T* block = out + a * depth * s.inner;
              for (int64_t i = 0; i < depth * s.inner; ++i) block[i] = off_v;
              for (int64_t c = 0; c < s.inner; ++c) {
                const int64_t v = static_cast<int64_t>(idx[a * s.inner + c]);
                if (v >= 0 && v < depth) block[v * s.inner + c] = on_v;
              }
            }
          },
          std::max<int64_t>(kGrain / std::max<int64_t>(depth * s.inner, 1), 1));
    });
  });
}

void BroadcastTo(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  DispatchBytes(ItemSize(x.dtype()),
                [&]<typename U>() { BroadcastCopy(x.raw<U>(), x.shape(), y.raw<U>(), y.shape()); });
}

void Tile(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if (y.numel() == 0) return;
  auto multiples = ops::AttrInts(args.attrs, "multiples");
  const Shape padded = ops::PadShape("tile", x.shape(), multiples);
  const int rank = static_cast<int>(padded.size());
  if (rank == 0) {
    std::memcpy(y.raw(), x.raw(), x.nbytes());
    return;
  }
  const std::vector<int64_t> in_strides = Strides(padded);
  const Shape& out_dims = y.shape();
  const int64_t row = padded[rank - 1];  // one input row, repeated multiples[-1] times
  const int64_t rows = NumElements(out_dims) / out_dims[rank - 1];
  DispatchBytes(ItemSize(x.dtype()), [&]<typename U>() {
    const U* in = x.raw<U>();
    U* out = y.raw<U>();
    ParallelElements(
        rows,
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            // Input row of output row r: each outer index modulo x's size.
            int64_t rem = r, offset = 0;
            for (int d = rank - 2; d >= 0; --d) {
              offset += (rem % out_dims[d]) % padded[d] * in_strides[d];
              rem /= out_dims[d];
            }
            U* dst = out + r * out_dims[rank - 1];
            for (int64_t m = 0; m < multiples[rank - 1]; ++m) std::memcpy(dst + m * row, in + offset, row * sizeof(U));
          }
        },
        std::max<int64_t>(kGrain / std::max<int64_t>(out_dims[rank - 1], 1), 1));
  });
}

#define MSRT_SHAPE_KERNEL(op_name, fn) \
  MSRT_REGISTER_KERNEL({.op = op_name, .impl = "vectorized", .priority = 1, .run = fn})
MSRT_SHAPE_KERNEL("transpose", &Transpose);
MSRT_SHAPE_KERNEL("concat", &Concat);
MSRT_SHAPE_KERNEL("stack", &Stack);
MSRT_SHAPE_KERNEL("split", &Split);
MSRT_SHAPE_KERNEL("strided_slice", &StridedSlice);
MSRT_SHAPE_KERNEL("gather", &Gather);
MSRT_SHAPE_KERNEL("gather_grad", &GatherGrad);
MSRT_SHAPE_KERNEL("one_hot", &OneHot);
MSRT_SHAPE_KERNEL("broadcast_to", &BroadcastTo);
MSRT_SHAPE_KERNEL("tile", &Tile);
#undef MSRT_SHAPE_KERNEL

}  // namespace
}  // namespace msrt::kernels::cpu
