// float16/bfloat16 <-> float32 over arrays: the bridge every 16-bit float loop goes through.
// float16 uses the F16C instructions when the CPU has them (checked once), else the scalar
// conversions of core/ops/scalar_portable.h; both round to nearest even, to the same bits.
#include <cstring>

#include "core/cpu/elementwise_impl.h"

#if defined(__GNUC__) && defined(XJAX_ARCH_X86_64)  // (core/arch.h, through elementwise_impl.h)
#include <immintrin.h>
#define XJAX_HAVE_F16C_PATH 1
#endif

namespace xjax::ew {
namespace {

#ifdef XJAX_HAVE_F16C_PATH
bool cpu_has_f16c() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}

__attribute__((target("avx2,f16c"))) void to_float_f16c(const float16* a, float* o, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))));
  for (; i < n; ++i) o[i] = float(a[i]);
}

__attribute__((target("avx2,f16c"))) void from_float_f16c(const float* a, float16* o, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) o[i] = float16(a[i]);
}
#endif

}  // namespace

void to_float(const float16* a, float* o, int64_t n) {
#ifdef XJAX_HAVE_F16C_PATH
  if (cpu_has_f16c()) return to_float_f16c(a, o, n);
#endif
  for (int64_t i = 0; i < n; ++i) o[i] = float(a[i]);
}

void from_float(const float* a, float16* o, int64_t n) {
#ifdef XJAX_HAVE_F16C_PATH
  if (cpu_has_f16c()) return from_float_f16c(a, o, n);
#endif
  for (int64_t i = 0; i < n; ++i) o[i] = float16(a[i]);
}

// bfloat16 is the top half of a float32: the scalar conversions (shifts and integer rounding)
// vectorise as plain loops.
XJAX_EW_CLONES void to_float(const bfloat16* a, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = float(a[i]);
}

XJAX_EW_CLONES void from_float(const float* a, bfloat16* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = bfloat16(a[i]);
}

}  // namespace xjax::ew
