// Vectorised conversions between float32 and the half types (float16,
// bfloat16): what the cast kernel and the float32 detour of half-typed
// kernels run on whole blocks of elements.
//
// Note [Half conversions]
// Each conversion gives the same bits as the scalar one in core/dtype.cc
// (FloatToHalf, FloatToBFloat16, ...), which also converts the tails of the
// vector loops: round to nearest even, overflow to infinity, subnormals
// kept, NaN stays NaN (a float16 NaN may keep more of its payload). float16 uses F16C
// (vcvtps2ph / vcvtph2ps, IEEE conversions with those rules); bfloat16 uses
// AVX-512F integer arithmetic on the float32 bits (the rounding of
// FloatToBFloat16, 16 lanes at once) rather than AVX-512 BF16's
// vcvtneps2bf16, which treats subnormal inputs as zero and so differs from
// the scalar conversion. The instruction set is chosen at run time from the
// CPU's features (the library may be built without -march=native);
// MSRT_HALF_CONVERT=scalar in the environment (read once) forces the scalar
// loops, which is how the tests run both paths.
#pragma once

#include <cstdint>
#include <string_view>

#include "msrt/core/dtype.h"

namespace msrt::kernels::cpu {

void HalfToFloatN(const Half* in, float* out, int64_t n);
void FloatToHalfN(const float* in, Half* out, int64_t n);
void BFloat16ToFloatN(const BFloat16* in, float* out, int64_t n);
void FloatToBFloat16N(const float* in, BFloat16* out, int64_t n);
/// out[i] = HalfToFloat(FloatToHalf(in[i])): float32 rounded to the nearest
/// float16 value, kept in float32 (Note [float16 held in float32] in
/// compiler/half_in_float32.h); `in` may be `out`.
void RoundToHalfN(const float* in, float* out, int64_t n);

/// Which conversion loops run: "f16c+avx512f", "f16c", "avx512f" or
/// "scalar" (Note [Half conversions]).
std::string_view HalfConvertPath();

/// ToFloatN / FromFloatN by element type (Half or BFloat16).
inline void ToFloatN(const Half* in, float* out, int64_t n) { HalfToFloatN(in, out, n); }
inline void ToFloatN(const BFloat16* in, float* out, int64_t n) { BFloat16ToFloatN(in, out, n); }
inline void FromFloatN(const float* in, Half* out, int64_t n) { FloatToHalfN(in, out, n); }
inline void FromFloatN(const float* in, BFloat16* out, int64_t n) { FloatToBFloat16N(in, out, n); }

}  // namespace msrt::kernels::cpu
