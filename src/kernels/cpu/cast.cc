// Conversions between dtypes (cast, and the float32 detour of half types),
// and the kernels that only copy or fill: identity, ones_like, zeros_like,
// fill, and the reshape family.
#include <cstring>

#include "kernels/cpu/elementwise_loops.h"
#include "ops/op_checks.h"
#include "ops/shape_utils.h"

namespace msrt::kernels::cpu {

void ConvertInto(const Tensor& src, Tensor& dst) {
  MSRT_INTERNAL_ASSERT(src.numel() == dst.numel(), "ConvertInto: ", src.Describe(), " into ", dst.Describe());
  const int64_t n = src.numel();
  if (src.dtype() == dst.dtype()) {
    if (n > 0 && src.raw() != dst.raw()) std::memcpy(dst.raw(), src.raw(), dst.nbytes());
    return;
  }
  // float32 <-> float16 / bfloat16: the vectorised conversions (Note [Half conversions])
  if (src.dtype() == DType::kFloat32 && IsHalfType(dst.dtype())) {
    DispatchHalf(dst.dtype(), [&]<typename H>() {
      const float* in = src.raw<float>();
      H* out = dst.raw<H>();
      ParallelElements(n, [&](int64_t begin, int64_t end) { FromFloatN(in + begin, out + begin, end - begin); });
    });
    return;
  }
  if (IsHalfType(src.dtype()) && dst.dtype() == DType::kFloat32) {
    DispatchHalf(src.dtype(), [&]<typename H>() {
      const H* in = src.raw<H>();
      float* out = dst.raw<float>();
      ParallelElements(n, [&](int64_t begin, int64_t end) { ToFloatN(in + begin, out + begin, end - begin); });
    });
    return;
  }
  Dispatch(AllTypeList{}, src.dtype(), "cast", [&]<typename From>() {
    Dispatch(AllTypeList{}, dst.dtype(), "cast", [&]<typename To>() {
      // Bools are read and written as bytes (0 or 1), so the loops vectorise.
      using FromStorage = StorageOf<From>;
      using ToStorage = StorageOf<To>;
      const FromStorage* in = src.raw<FromStorage>();
      ToStorage* out = dst.raw<ToStorage>();
      UnaryLoop(in, out, n, [](FromStorage v) { return static_cast<ToStorage>(ConvertValue<To>(v)); });
    });
  });
}

Tensor ConvertTensor(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::Empty(t.shape(), dtype, t.device());
  ConvertInto(t, out);
  return out;
}

namespace {

void Cast(KernelArgs& args) { ConvertInto(args.inputs[0], args.outputs[0]); }

void RoundToFloat16(KernelArgs& args) {
  const float* in = args.inputs[0].raw<float>();
  float* out = args.outputs[0].raw<float>();
  ParallelElements(args.inputs[0].numel(),
                   [&](int64_t begin, int64_t end) { RoundToHalfN(in + begin, out + begin, end - begin); });
}

void Copy(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if (x.nbytes() > 0) {
    const char* src = static_cast<const char*>(x.raw());
    char* dst = static_cast<char*>(y.raw());
    ParallelElements(
        static_cast<int64_t>(x.nbytes()),
        [&](int64_t begin, int64_t end) { std::memcpy(dst + begin, src + begin, end - begin); }, 4 * kGrain);
  }
}

void FillValue(Tensor& out, double value) {
  Dispatch(AllTypeList{}, out.dtype(), "fill", [&]<typename T>() {
    const T v = ConvertValue<T>(value);
    T* p = out.raw<T>();
    ParallelElements(out.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = v;
    });
  });
}

// NumPy's arange values (ops::ArangeSpec), converted to the output dtype.
void Arange(KernelArgs& args) {
  const ops::ArangeSpec spec = ops::ResolveArange(args.attrs);
  Tensor& out = args.outputs[0];
  Dispatch(AllTypeList{}, out.dtype(), "arange", [&]<typename T>() {
    T* p = out.raw<T>();
    const int64_t n = out.numel();
    if (spec.integral) {
      for (int64_t i = 0; i < n; ++i) p[i] = ConvertValue<T>(spec.start + i * spec.step);
      return;
    }
    const double delta = (spec.fstart + spec.fstep) - spec.fstart;
    for (int64_t i = 0; i < n; ++i) {
      double v = i == 0   ? spec.fstart
                 : i == 1 ? spec.fstart + spec.fstep
                          : spec.fstart + static_cast<double>(i) * delta;
      p[i] = ConvertValue<T>(v);
    }
  });
}

void OnesLike(KernelArgs& args) { FillValue(args.outputs[0], 1.0); }
void ZerosLike(KernelArgs& args) { std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes()); }
void Fill(KernelArgs& args) { FillValue(args.outputs[0], ops::AttrFloat(args.attrs, "value")); }

MSRT_REGISTER_KERNEL({.op = "cast", .impl = "vectorized", .priority = 1, .run = &Cast});
MSRT_REGISTER_KERNEL({.op = "round_to_float16", .impl = "vectorized", .priority = 1, .run = &RoundToFloat16});
MSRT_REGISTER_KERNEL({.op = "identity", .impl = "vectorized", .priority = 1, .run = &Copy});
MSRT_REGISTER_KERNEL({.op = "ones_like", .impl = "vectorized", .priority = 1, .run = &OnesLike});
MSRT_REGISTER_KERNEL({.op = "zeros_like", .impl = "vectorized", .priority = 1, .run = &ZerosLike});
MSRT_REGISTER_KERNEL({.op = "fill", .impl = "vectorized", .priority = 1, .run = &Fill});
MSRT_REGISTER_KERNEL({.op = "arange", .impl = "vectorized", .priority = 1, .run = &Arange});
// Tensors are contiguous, so these only copy.
MSRT_REGISTER_KERNEL({.op = "reshape", .impl = "vectorized", .priority = 1, .run = &Copy});
MSRT_REGISTER_KERNEL({.op = "reshape_like", .impl = "vectorized", .priority = 1, .run = &Copy});
MSRT_REGISTER_KERNEL({.op = "expand_dims", .impl = "vectorized", .priority = 1, .run = &Copy});
MSRT_REGISTER_KERNEL({.op = "squeeze", .impl = "vectorized", .priority = 1, .run = &Copy});
MSRT_REGISTER_KERNEL({.op = "flatten", .impl = "vectorized", .priority = 1, .run = &Copy});

}  // namespace
}  // namespace msrt::kernels::cpu
