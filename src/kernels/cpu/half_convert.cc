// Note [Half conversions] in half_convert.h.
#include "kernels/cpu/half_convert.h"

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_* operands, which its
// -Wmaybe-uninitialized reports from inside the header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <cpuid.h>
#include <immintrin.h>

#include <cstdlib>
#include <cstring>

namespace msrt::kernels::cpu {
namespace {

struct Features {
  bool f16c = false;
  bool avx512f = false;
};

Features Detect() {
  Features f;
  const char* env = std::getenv("MSRT_HALF_CONVERT");
  if (env != nullptr && std::string_view(env) == "scalar") return f;
  __builtin_cpu_init();
  // F16C from CPUID leaf 1 (clang's __builtin_cpu_supports has no "f16c");
  // "avx" also says the OS saves the YMM registers.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  f.f16c = f16c && __builtin_cpu_supports("avx");
  f.avx512f = __builtin_cpu_supports("avx512f");
  return f;
}

const Features& Cpu() {
  static const Features features = Detect();
  return features;
}

// ---- float16: F16C, 8 lanes ----

__attribute__((target("avx,f16c"))) void HalfToFloatF16c(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

__attribute__((target("avx,f16c"))) void FloatToHalfF16c(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = FloatToHalf(in[i]);
}

__attribute__((target("avx,f16c"))) void RoundToHalfF16c(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = HalfToFloat(FloatToHalf(in[i]));
}

__attribute__((target("avx512f"))) void RoundToHalfAvx512(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = HalfToFloat(FloatToHalf(in[i]));
}

// ---- bfloat16: AVX-512F, 16 lanes ----

__attribute__((target("avx512f"))) void BFloat16ToFloatAvx512(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(w, 16));
  }
  for (; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

// FloatToBFloat16's rounding: bits + 0x7fff + (bit 16), keeping the high
// half; NaN (|bits| > 0x7f800000) keeps its high half with the quiet bit set.
__attribute__((target("avx512f"))) void FloatToBFloat16Avx512(const float* in, BFloat16* out, int64_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i inf = _mm512_set1_epi32(0x7f800000);
  const __m512i bias = _mm512_set1_epi32(0x7fff);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i bits = _mm512_loadu_si512(in + i);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
    __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(bias, lsb)), 16);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, abs_mask), inf);
    __m512i nan_bits = _mm512_or_si512(_mm512_srli_epi32(bits, 16), quiet);
    __m512i result = _mm512_mask_mov_epi32(rounded, nan, nan_bits);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(result));
  }
  for (; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
}

}  // namespace

void HalfToFloatN(const Half* in, float* out, int64_t n) {
  if (Cpu().f16c) return HalfToFloatF16c(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

void FloatToHalfN(const float* in, Half* out, int64_t n) {
  if (Cpu().f16c) return FloatToHalfF16c(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalf(in[i]);
}

void RoundToHalfN(const float* in, float* out, int64_t n) {
  // AVX-512F's vcvtps2ph / vcvtph2ps on 16 lanes: the same IEEE conversions as F16C's.
  if (Cpu().f16c && Cpu().avx512f) return RoundToHalfAvx512(in, out, n);
  if (Cpu().f16c) return RoundToHalfF16c(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(FloatToHalf(in[i]));
}

void BFloat16ToFloatN(const BFloat16* in, float* out, int64_t n) {
  if (Cpu().avx512f) return BFloat16ToFloatAvx512(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

void FloatToBFloat16N(const float* in, BFloat16* out, int64_t n) {
  if (Cpu().avx512f) return FloatToBFloat16Avx512(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
}

std::string_view HalfConvertPath() {
  const Features& f = Cpu();
  if (f.f16c && f.avx512f) return "f16c+avx512f";
  if (f.f16c) return "f16c";
  if (f.avx512f) return "avx512f";
  return "scalar";
}

}  // namespace msrt::kernels::cpu
