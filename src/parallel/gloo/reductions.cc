#include "parallel/gloo/reductions.h"

#include <complex>

#include "core/strings.h"
#include "msrt/core/errors.h"

namespace msrt::parallel::gloo_backend {

namespace {

template <ReduceOp kOp>
ReduceFunction ForOp(DType dtype) {
  switch (dtype) {
    case DType::kBool: return &ReduceBoolLoop<kOp>;
    case DType::kUInt8: return &ReduceLoop<uint8_t, kOp>;
    case DType::kInt8: return &ReduceLoop<int8_t, kOp>;
    case DType::kInt16: return &ReduceLoop<int16_t, kOp>;
    case DType::kInt32: return &ReduceLoop<int32_t, kOp>;
    case DType::kInt64: return &ReduceLoop<int64_t, kOp>;
    case DType::kFloat16: return &ReduceHalfLoop<Half, &HalfToFloat, &FloatToHalf, kOp>;
    case DType::kBFloat16: return &ReduceHalfLoop<BFloat16, &BFloat16ToFloat, &FloatToBFloat16, kOp>;
    case DType::kFloat32: return &ReduceLoop<float, kOp>;
    case DType::kFloat64: return &ReduceLoop<double, kOp>;
    case DType::kUInt16: return &ReduceLoop<uint16_t, kOp>;
    case DType::kUInt32: return &ReduceLoop<uint32_t, kOp>;
    case DType::kUInt64: return &ReduceLoop<uint64_t, kOp>;
    case DType::kComplex64:
    case DType::kComplex128:
      if constexpr (kOp == ReduceOp::kSum || kOp == ReduceOp::kProd) {
        return dtype == DType::kComplex64 ? &ReduceLoop<std::complex<float>, kOp>
                                          : &ReduceLoop<std::complex<double>, kOp>;
      } else {
        ThrowError(ErrorKind::kType, StrCat("The reduction '", ReduceOpName(kOp), "' is not defined for ",
                                            DTypeName(dtype), " (complex numbers are not ordered); sum and prod are"));
      }
  }
  MSRT_INTERNAL_ASSERT(false, "unknown dtype ", static_cast<int>(dtype));
  return nullptr;
}

}  // namespace

ReduceFunction ReductionFor(DType dtype, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ForOp<ReduceOp::kSum>(dtype);
    case ReduceOp::kMax: return ForOp<ReduceOp::kMax>(dtype);
    case ReduceOp::kMin: return ForOp<ReduceOp::kMin>(dtype);
    case ReduceOp::kProd: return ForOp<ReduceOp::kProd>(dtype);
  }
  MSRT_CHECK_VALUE(false, "unknown reduce op ", static_cast<int>(op));
  return nullptr;
}

}  // namespace msrt::parallel::gloo_backend
