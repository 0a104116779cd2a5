// CPU kernels of layer_norm and layer_norm_grad: one pass per row of the
// normalized axes, vectorised (float32 accumulates in float32 over 16 lanes;
// the variance is taken about the mean, in a second pass over the row, which
// is in cache). float16 and bfloat16 go through float32.
//
// gamma and beta cover the trailing `params` elements of x, repeated before
// (Note [layer_norm] in src/ops/nn_norm.cc): the element of gamma for x's
// flat index i is i % params, so a row is walked in segments over which that
// index runs contiguously (the whole row when params == cols).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/elementwise_loops.h"
#include "ops/op_def.h"

namespace msrt::kernels::cpu {
namespace {

struct RowLayout {
  int64_t rows = 1, cols = 1, params = 1;
};

RowLayout LayoutOf(const Tensor& x, const Tensor& gamma, const Dict& attrs) {
  RowLayout l;
  const int64_t rank = x.ndim();
  int64_t begin_norm = ops::AttrInt(attrs, "begin_norm_axis");
  if (begin_norm < 0) begin_norm += rank;
  for (int64_t i = 0; i < rank; ++i) (i < begin_norm ? l.rows : l.cols) *= x.shape()[i];
  l.params = std::max<int64_t>(gamma.numel(), 1);
  return l;
}

// f(c, p, n) over the row starting at flat index `first`: the n elements from
// column c use gamma's elements p .. p + n - 1.
template <typename F>
void ForEachSegment(int64_t first, int64_t cols, int64_t params, F&& f) {
  int64_t c = 0;
  int64_t p = first % params;
  while (c < cols) {
    const int64_t n = std::min(cols - c, params - p);
    f(c, p, n);
    c += n;
    p = 0;
  }
}

template <typename T>
T RowSum(const T* v, int64_t n) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < n; ++c) sum += v[c];
  return sum;
}

template <typename T>
T RowSquaredDeviation(const T* v, int64_t n, T mean) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < n; ++c) {
    const T d = v[c] - mean;
    sum += d * d;
  }
  return sum;
}

// Rows per task: about kGrain elements.
int64_t RowGrain(int64_t cols) { return std::max<int64_t>(kGrain / std::max<int64_t>(cols, 1), 1); }

void LayerNorm(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const RowLayout l = LayoutOf(x, args.inputs[1], args.attrs);
  const double epsilon = ops::AttrFloat(args.attrs, "epsilon");
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor gc = ConvertTensor(args.inputs[1], compute);
  Tensor bc = ConvertTensor(args.inputs[2], compute);
  std::vector<Tensor> outs;
  for (Tensor& out : args.outputs) outs.push_back(out.dtype() == compute ? out : Tensor::Empty(out.shape(), compute));
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() {
    const T* in = xc.raw<T>();
    const T* gamma = gc.raw<T>();
    const T* beta = bc.raw<T>();
    T* y = outs[0].raw<T>();
    T* mean = outs[1].raw<T>();
    T* var = outs[2].raw<T>();
    const int64_t cols = l.cols;
    const T inv_cols = cols > 0 ? T(1) / static_cast<T>(cols) : T(0);
    ParallelElements(
        l.rows,
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const T* row = in + r * cols;
            const T m = RowSum(row, cols) * inv_cols;
            const T v = RowSquaredDeviation(row, cols, m) * inv_cols;
            const T inv_std = T(1) / std::sqrt(v + static_cast<T>(epsilon));
            mean[r] = m;
            var[r] = v;
            T* out = y + r * cols;
            ForEachSegment(r * cols, cols, l.params, [&](int64_t c0, int64_t p0, int64_t n) {
              const T* xs = row + c0;
              const T* gs = gamma + p0;
              const T* bs = beta + p0;
              T* ys = out + c0;
#pragma omp simd
              for (int64_t k = 0; k < n; ++k) ys[k] = (xs[k] - m) * inv_std * gs[k] + bs[k];
            });
          }
        },
        RowGrain(cols));
  });
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].same(args.outputs[i])) ConvertInto(outs[i], args.outputs[i]);
  }
}

// layer_norm_grad(dy, x, gamma, mean, variance) -> (dx, dgamma, dbeta). Per
// row, with x_hat = (x - mean) inv_std and g = dy gamma:
//   dx = inv_std (g - mean(g) - x_hat mean(g x_hat)),
// and dgamma, dbeta sum dy x_hat and dy over the elements each covers. Rows
// are split into a fixed number of blocks, each summing dgamma and dbeta into
// its own buffer, and the blocks are added in order: the result does not
// depend on the thread count.
void LayerNormGrad(KernelArgs& args) {
  const Tensor& dy = args.inputs[0];
  const Tensor& x = args.inputs[1];
  const RowLayout l = LayoutOf(x, args.inputs[2], args.attrs);
  const double epsilon = ops::AttrFloat(args.attrs, "epsilon");
  const DType compute = NativeComputeType(x.dtype());
  Tensor dyc = ConvertTensor(dy, compute);
  Tensor xc = ConvertTensor(x, compute);
  Tensor gc = ConvertTensor(args.inputs[2], compute);
  Tensor mc = ConvertTensor(args.inputs[3], compute);
  Tensor vc = ConvertTensor(args.inputs[4], compute);
  std::vector<Tensor> outs;
  for (Tensor& out : args.outputs) outs.push_back(out.dtype() == compute ? out : Tensor::Empty(out.shape(), compute));
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() {
    const T* g_in = dyc.raw<T>();
    const T* x_in = xc.raw<T>();
    const T* gamma = gc.raw<T>();
    const T* mean = mc.raw<T>();
    const T* var = vc.raw<T>();
    T* dx = outs[0].raw<T>();
    const int64_t cols = l.cols, params = l.params;
    const T inv_cols = cols > 0 ? T(1) / static_cast<T>(cols) : T(0);
    // Blocks of rows: enough for the threads, few enough that their buffers are cheap.
    const int64_t grain = RowGrain(cols);
    const int64_t blocks = std::clamp<int64_t>(l.rows / grain, 1, 16);
    std::vector<T> partial(static_cast<size_t>(2 * blocks * params), T(0));
    ParallelFor(blocks, 1, [&](int64_t b0, int64_t b1) {
      std::vector<T> g_row(static_cast<size_t>(cols));
      std::vector<T> xhat_row(static_cast<size_t>(cols));
      for (int64_t b = b0; b < b1; ++b) {
        T* dgamma = partial.data() + 2 * b * params;
        T* dbeta = dgamma + params;
        const int64_t r_begin = l.rows * b / blocks, r_end = l.rows * (b + 1) / blocks;
        for (int64_t r = r_begin; r < r_end; ++r) {
          const T* dys = g_in + r * cols;
          const T* xs = x_in + r * cols;
          const T m = mean[r];
          const T inv_std = T(1) / std::sqrt(var[r] + static_cast<T>(epsilon));
          T* gr = g_row.data();
          T* xh = xhat_row.data();
          ForEachSegment(r * cols, cols, params, [&](int64_t c0, int64_t p0, int64_t n) {
            const T* d = dys + c0;
            const T* xv = xs + c0;
            const T* gm = gamma + p0;
            T* dg = dgamma + p0;
            T* db = dbeta + p0;
            T* go = gr + c0;
            T* ho = xh + c0;
#pragma omp simd
            for (int64_t k = 0; k < n; ++k) {
              const T h = (xv[k] - m) * inv_std;
              ho[k] = h;
              go[k] = d[k] * gm[k];
              dg[k] += d[k] * h;
              db[k] += d[k];
            }
          });
          T sum_g = 0, sum_gh = 0;
#pragma omp simd reduction(+ : sum_g, sum_gh)
          for (int64_t c = 0; c < cols; ++c) {
            sum_g += gr[c];
            sum_gh += gr[c] * xh[c];
          }
          const T mean_g = sum_g * inv_cols, mean_gh = sum_gh * inv_cols;
          T* out = dx + r * cols;
#pragma omp simd
          for (int64_t c = 0; c < cols; ++c) out[c] = inv_std * (gr[c] - mean_g - xh[c] * mean_gh);
        }
      }
    });
    T* dgamma = outs[1].raw<T>();
    T* dbeta = outs[2].raw<T>();
    const int64_t n_params = outs[1].numel();
    for (int64_t p = 0; p < n_params; ++p) {
      T sg = 0, sb = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        sg += partial[static_cast<size_t>(2 * b * params + p)];
        sb += partial[static_cast<size_t>(2 * b * params + params + p)];
      }
      dgamma[p] = sg;
      dbeta[p] = sb;
    }
  });
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].same(args.outputs[i])) ConvertInto(outs[i], args.outputs[i]);
  }
}

MSRT_REGISTER_KERNEL({.op = "layer_norm", .impl = "vectorized", .priority = 1, .run = &LayerNorm});
MSRT_REGISTER_KERNEL({.op = "layer_norm_grad", .impl = "vectorized", .priority = 1, .run = &LayerNormGrad});

}  // namespace
}  // namespace msrt::kernels::cpu
