// CPU kernels of the losses: one pass per row of (N, C) logits.
#include <cmath>

#include "kernels/cpu/reduce_loops.h"
#include "kernels/cpu/vector_math.h"
#include "ops/op_def.h"

namespace msrt::kernels::cpu {
namespace {

// Labels are checked before any row runs: a kernel may not throw from the pool.
template <typename I>
void CheckLabels(std::string_view op, std::string_view name, const I* labels, int64_t n, int64_t classes) {
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] >= classes) {
      ops::OpError(ErrorKind::kIndex, op,
                   StrCat("'", name, "' ", static_cast<int64_t>(labels[i]), " of sample ", i, " is out of range for ",
                          classes, " classes; expected 0 <= ", name, " < ", classes, ", but got ",
                          static_cast<int64_t>(labels[i])));
    }
  }
}

// The row's max m and log(sum(exp(row - m))); `scratch` holds n values.
// Callers add m last, to values of its size, so nothing rounds to m's ulp.
template <typename T>
std::pair<T, T> ShiftedLogSumExp(const T* row, int64_t n, T* scratch) {
  const T m = ReduceContiguous<MaxOp>(row, n);
  return {m, std::log(ExpShiftedSum(row, scratch, n, m))};
}

// Runs body<T>(logits, out) with half types detoured through float32.
template <typename Body>
void WithFloatLogits(KernelArgs& args, const Tensor& logits, Body&& body) {
  Tensor& y = args.outputs[0];
  const DType compute = NativeComputeType(logits.dtype());
  Tensor lc = ConvertTensor(logits, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() { body.template operator()<T>(lc, yc); });
  if (!yc.same(y)) ConvertInto(yc, y);
}

void SparseSoftmaxCrossEntropy(KernelArgs& args) {
  const Tensor& logits = args.inputs[0];
  const Tensor& labels = args.inputs[1];
  const int64_t n = logits.shape()[0], classes = logits.shape()[1];
  WithFloatLogits(args, logits, [&]<typename T>(const Tensor& lc, Tensor& yc) {
    Dispatch(IndexTypeList{}, labels.dtype(), args.op.name, [&]<typename I>() {
      const I* lab = labels.raw<I>();
      CheckLabels(args.op.name, "labels", lab, n, classes);
      const T* x = lc.raw<T>();
      T* out = yc.raw<T>();
      ParallelElements(
          n,
          [&](int64_t r0, int64_t r1) {
            std::vector<T> scratch(static_cast<size_t>(classes));
            for (int64_t r = r0; r < r1; ++r) {
              const T* row = x + r * classes;
              const auto [m, log_s] = ShiftedLogSumExp(row, classes, scratch.data());
              out[r] = log_s - (row[static_cast<int64_t>(lab[r])] - m);
            }
          },
          std::max<int64_t>(kGrain / std::max<int64_t>(classes, 1), 1));
    });
  });
}

void SoftmaxCrossEntropy(KernelArgs& args) {
  const Tensor& logits = args.inputs[0];
  const int64_t n = logits.shape()[0], classes = logits.shape()[1];
  Tensor labels = ConvertTensor(args.inputs[1], NativeComputeType(args.inputs[1].dtype()));
  WithFloatLogits(args, logits, [&]<typename T>(const Tensor& lc, Tensor& yc) {
    const T* x = lc.raw<T>();
    const T* p = labels.raw<T>();
    T* out = yc.raw<T>();
    ParallelElements(
        n,
        [&](int64_t r0, int64_t r1) {
          std::vector<T> scratch(static_cast<size_t>(classes));
          for (int64_t r = r0; r < r1; ++r) {
            const T* row = x + r * classes;
            const T* target = p + r * classes;
            const auto [m, log_s] = ShiftedLogSumExp(row, classes, scratch.data());
            // -sum(p * (x - m - log_s)), as one fixed-order dot product
            for (int64_t c = 0; c < classes; ++c) scratch[c] = target[c] * (log_s - (row[c] - m));
            out[r] = ReduceContiguous<SumOp>(scratch.data(), classes);
          }
        },
        std::max<int64_t>(kGrain / std::max<int64_t>(classes, 1), 1));
  });
}

void NllLoss(KernelArgs& args) {
  const Tensor& log_probs = args.inputs[0];
  const Tensor& target = args.inputs[1];
  const int64_t n = log_probs.shape()[0], classes = log_probs.shape()[1];
  const std::string reduction = ops::AttrString(args.attrs, "reduction");
  WithFloatLogits(args, log_probs, [&]<typename T>(const Tensor& lc, Tensor& yc) {
    Dispatch(IndexTypeList{}, target.dtype(), args.op.name, [&]<typename I>() {
      const I* t = target.raw<I>();
      CheckLabels(args.op.name, "target", t, n, classes);
      const T* x = lc.raw<T>();
      T* out = yc.raw<T>();
      if (reduction == "none") {
        for (int64_t r = 0; r < n; ++r) out[r] = -x[r * classes + static_cast<int64_t>(t[r])];
        return;
      }
      std::vector<T> picked(static_cast<size_t>(n));
      for (int64_t r = 0; r < n; ++r) picked[r] = -x[r * classes + static_cast<int64_t>(t[r])];
      T total = ReduceContiguous<SumOp>(picked.data(), n);
      out[0] = reduction == "sum" ? total : total / static_cast<T>(n);
    });
  });
}

MSRT_REGISTER_KERNEL(
    {.op = "sparse_softmax_cross_entropy", .impl = "vectorized", .priority = 1, .run = &SparseSoftmaxCrossEntropy});
MSRT_REGISTER_KERNEL({.op = "softmax_cross_entropy", .impl = "vectorized", .priority = 1, .run = &SoftmaxCrossEntropy});
MSRT_REGISTER_KERNEL({.op = "nll_loss", .impl = "vectorized", .priority = 1, .run = &NllLoss});

}  // namespace
}  // namespace msrt::kernels::cpu
