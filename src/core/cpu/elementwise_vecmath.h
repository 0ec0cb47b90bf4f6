// Declares glibc's libm functions as having SIMD variants (libmvec), so that loops compiled with
// XJAX_EW_CLONES call _ZGV*_expf etc. instead of one scalar call per element. glibc's own headers
// declare them only under -ffast-math, which we never use (NaN/Inf must stay exact); libmvec
// handles NaN/Inf itself, within 4 ulp of the scalar results. Define XJAX_NO_LIBMVEC to build
// without it (scalar libm calls; e.g. where a wheel may not depend on libmvec.so.1).
#pragma once
#include <cmath>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) && \
    defined(__GLIBC_PREREQ) && !defined(XJAX_NO_LIBMVEC)
#if __GLIBC_PREREQ(2, 22)
#define XJAX_VEC_DECL(ret, name, ...) \
  extern "C" ret name(__VA_ARGS__) noexcept __attribute__((simd("notinbranch")));
XJAX_VEC_DECL(float, expf, float) XJAX_VEC_DECL(double, exp, double)
XJAX_VEC_DECL(float, logf, float) XJAX_VEC_DECL(double, log, double)
XJAX_VEC_DECL(float, sinf, float) XJAX_VEC_DECL(double, sin, double)
XJAX_VEC_DECL(float, cosf, float) XJAX_VEC_DECL(double, cos, double)
XJAX_VEC_DECL(float, powf, float, float) XJAX_VEC_DECL(double, pow, double, double)
#if __GLIBC_PREREQ(2, 35)
XJAX_VEC_DECL(float, exp2f, float) XJAX_VEC_DECL(double, exp2, double)
XJAX_VEC_DECL(float, expm1f, float) XJAX_VEC_DECL(double, expm1, double)
XJAX_VEC_DECL(float, log1pf, float) XJAX_VEC_DECL(double, log1p, double)
XJAX_VEC_DECL(float, tanhf, float) XJAX_VEC_DECL(double, tanh, double)
XJAX_VEC_DECL(float, tanf, float) XJAX_VEC_DECL(double, tan, double)
XJAX_VEC_DECL(float, asinf, float) XJAX_VEC_DECL(double, asin, double)
XJAX_VEC_DECL(float, acosf, float) XJAX_VEC_DECL(double, acos, double)
XJAX_VEC_DECL(float, atanf, float) XJAX_VEC_DECL(double, atan, double)
XJAX_VEC_DECL(float, sinhf, float) XJAX_VEC_DECL(double, sinh, double)
XJAX_VEC_DECL(float, coshf, float) XJAX_VEC_DECL(double, cosh, double)
XJAX_VEC_DECL(float, asinhf, float) XJAX_VEC_DECL(double, asinh, double)
XJAX_VEC_DECL(float, acoshf, float) XJAX_VEC_DECL(double, acosh, double)
XJAX_VEC_DECL(float, atanhf, float) XJAX_VEC_DECL(double, atanh, double)
XJAX_VEC_DECL(float, cbrtf, float) XJAX_VEC_DECL(double, cbrt, double)
XJAX_VEC_DECL(float, erff, float) XJAX_VEC_DECL(double, erf, double)
XJAX_VEC_DECL(float, erfcf, float) XJAX_VEC_DECL(double, erfc, double)
XJAX_VEC_DECL(float, atan2f, float, float) XJAX_VEC_DECL(double, atan2, double, double)
#endif
#undef XJAX_VEC_DECL
#endif
#endif
