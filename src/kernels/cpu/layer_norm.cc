// CPU kernel of layer_norm: one pass per row of the normalized axes, the
// statistics summed in double so long rows keep float32 accuracy.
#include <cmath>
#include <vector>

#include "kernels/cpu/elementwise_loops.h"
#include "ops/op_def.h"

namespace msrt::kernels::cpu {
namespace {

void LayerNorm(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const int64_t rank = x.ndim();
  int64_t begin_norm = ops::AttrInt(args.attrs, "begin_norm_axis");
  if (begin_norm < 0) begin_norm += rank;
  const double epsilon = ops::AttrFloat(args.attrs, "epsilon");
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < rank; ++i) (i < begin_norm ? rows : cols) *= x.shape()[i];
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor gc = ConvertTensor(args.inputs[1], compute);
  Tensor bc = ConvertTensor(args.inputs[2], compute);
  // gamma and beta cover the trailing `params` elements of x, repeated before.
  const int64_t params = std::max<int64_t>(gc.numel(), 1);
  std::vector<Tensor> outs;
  for (Tensor& out : args.outputs) outs.push_back(out.dtype() == compute ? out : Tensor::Empty(out.shape(), compute));
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() {
    const T* in = xc.raw<T>();
    const T* gamma = gc.raw<T>();
    const T* beta = bc.raw<T>();
    T* y = outs[0].raw<T>();
    T* mean = outs[1].raw<T>();
    T* var = outs[2].raw<T>();
    ParallelElements(
        rows,
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const T* row = in + r * cols;
            double sum = 0;
            for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(row[c]);
            const double m = cols > 0 ? sum / static_cast<double>(cols) : 0.0;
            double squares = 0;
            for (int64_t c = 0; c < cols; ++c) {
              const double d = static_cast<double>(row[c]) - m;
              squares += d * d;
            }
            const double v = cols > 0 ? squares / static_cast<double>(cols) : 0.0;
            const double inv_std = 1.0 / std::sqrt(v + epsilon);
            mean[r] = static_cast<T>(m);
            var[r] = static_cast<T>(v);
            T* out = y + r * cols;
            int64_t p = (r * cols) % params;  // gamma's element for the row's first
            for (int64_t c = 0; c < cols; ++c) {
              out[c] = static_cast<T>((static_cast<double>(row[c]) - m) * inv_std) * gamma[p] + beta[p];
              if (++p == params) p = 0;
            }
          }
        },
        std::max<int64_t>(kGrain / std::max<int64_t>(cols, 1), 1));
  });
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].same(args.outputs[i])) ConvertInto(outs[i], args.outputs[i]);
  }
}

MSRT_REGISTER_KERNEL({.op = "layer_norm", .impl = "vectorized", .priority = 1, .run = &LayerNorm});

}  // namespace
}  // namespace msrt::kernels::cpu
