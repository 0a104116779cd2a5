// CPU kernels of the random ops (Note [Random streams] in core/random.h).
#include "core/random.h"
#include "kernels/cpu/elementwise_loops.h"

namespace msrt::kernels::cpu {
namespace {

// Element i keeps with probability keep_prob, from word i % 4 of block i / 4.
void Dropout(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  Tensor& mask = args.outputs[1];
  const double keep = ops::AttrFloat(args.attrs, "keep_prob");
  const random::Stream stream = random::StreamOf(args.attrs);
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Tensor mc = mask.dtype() == compute ? mask : Tensor::Empty(mask.shape(), compute);
  const int64_t n = x.numel();
  Dispatch(FloatTypeList{}, compute, "dropout", [&]<typename T>() {
    const T* in = xc.raw<T>();
    T* out = yc.raw<T>();
    T* m = mc.raw<T>();
    const T scale = static_cast<T>(1.0 / keep);
    const float threshold = static_cast<float>(keep);
    const int64_t blocks = (n + 3) / 4;
    ParallelElements(
        blocks,
        [&](int64_t b0, int64_t b1) {
          for (int64_t b = b0; b < b1; ++b) {
            const auto words = random::StreamBlock(stream, static_cast<uint64_t>(b));
            for (int64_t l = 0; l < 4; ++l) {
              const int64_t i = b * 4 + l;
              if (i >= n) break;
              const T v = random::UniformFloat(words[l]) < threshold ? scale : T(0);
              m[i] = v;
              out[i] = in[i] * v;
            }
          }
        },
        kGrain / 4);
  });
  if (!yc.same(y)) ConvertInto(yc, y);
  if (!mc.same(mask)) ConvertInto(mc, mask);
}

MSRT_REGISTER_KERNEL({.op = "dropout", .impl = "vectorized", .priority = 1, .run = &Dropout});

}  // namespace
}  // namespace msrt::kernels::cpu
