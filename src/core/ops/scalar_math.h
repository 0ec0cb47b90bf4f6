// Part of the scalar op definitions (the rules are in scalar_ops.h): our own exp, exp2, expm1, tanh,
// sin, cos, float64 log, and float32 pow, tan, atan, atan2, asin, acos, sinh, cosh, erf and erfc,
// which the host computes instead of libm's (docs/architecture.md). Each is
// written once, as plain scalar C++ without branches (selects, bit manipulation, polynomials), so
// that GCC vectorises the CPU's loops over it, and the same code computes the vector lanes, the
// tail elements, the fused engine's tiles and the reference interpreter's scalars: a value's bits
// do not depend on where it sits in an array, on the array's length, on the thread split, or on
// the vector width the CPU has (libm's scalar and libmvec's vector functions differ in the last
// bits, and glibc picks FMA or plain variants by CPU). Nothing here fuses a multiply-add implicitly:
// our polynomials are plain multiplies and adds, and XLA's float32 exp (JAX's bits) calls fma
// explicitly, which rounds the same on every instruction set (hardware or libm), so that compiled
// without contraction (-ffp-contract=off, as src/core/CMakeLists.txt compiles every file that calls
// these) the AVX-512, AVX2 and baseline clones of a loop give the same bits.
//
// Under CUDA, fn:: (what the ops call) is the device's libm: generated kernels keep CUDA's math
// functions, and none of this code is compiled there.
//
// Accuracy: within about one ulp of the correctly rounded result over the whole range (the float32
// functions that compute in double almost always correctly rounded);
// tests/test_vecmath_bits.py measures it. The polynomial coefficients are our own minimax fits
// (tools/fit_vecmath.py prints them). Operands are flushed by the ops before they get here;
// subnormal operands read as zero, and results that would be subnormal may come back as
// subnormals or zeros (the ops flush them).
#ifndef XJAX_SCALAR_MATH_H
#define XJAX_SCALAR_MATH_H

#ifndef XJAX_SCALAR_PORTABLE_H
#include "core/ops/scalar_portable.h"
#endif

namespace xjax {
namespace scalar {

#ifndef XJAX_SCALAR_CUDA
namespace math {

// c0 + t (c1 + t (c2 + ...)): Horner's rule with separate multiplies and adds.
template <class T> XJAX_HD_ALWAYS_INLINE T poly(T, T c0) { return c0; }
template <class T, class... C> XJAX_HD_ALWAYS_INLINE T poly(T t, T c0, C... c) { return c0 + t * poly(t, c...); }

// |x| and x with the sign of s, on the bits.
XJAX_HD_ALWAYS_INLINE float abs_bits(float x) { return bit_cast<float>(bit_cast<u32>(x) & 0x7fffffffu); }
XJAX_HD_ALWAYS_INLINE double abs_bits(double x) { return bit_cast<double>(bit_cast<u64>(x) & 0x7fffffffffffffffull); }
XJAX_HD_ALWAYS_INLINE float with_sign_of(float x, float s) {
  return bit_cast<float>(bit_cast<u32>(x) | (bit_cast<u32>(s) & 0x80000000u));
}
XJAX_HD_ALWAYS_INLINE double with_sign_of(double x, double s) {
  return bit_cast<double>(bit_cast<u64>(x) | (bit_cast<u64>(s) & 0x8000000000000000ull));
}

// x clamped to [lo, hi]; NaN stays NaN.
template <class T> XJAX_HD_ALWAYS_INLINE T clamp_keep_nan(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }

// ---- rounding to an integer without a conversion: x + 1.5 2^23 (2^52) rounds x to the nearest
// integer k (ties to even) and holds k's two's complement bits in its low bits, for |x| < 2^22
// (2^51). No float-to-int conversion (NaN would make one undefined), and only integer operations
// of the float's own width, which every vector instruction set has.
constexpr float kRound32 = 0x1.8p23f;
constexpr double kRound64 = 0x1.8p52;
XJAX_HD_ALWAYS_INLINE u32 int_bits(float t) { return bit_cast<u32>(t) - bit_cast<u32>(kRound32); }
XJAX_HD_ALWAYS_INLINE u64 int_bits(double t) { return bit_cast<u64>(t) - bit_cast<u64>(kRound64); }

// 2^k for k in [-126, 127] ([-1022, 1023]), k as two's complement bits.
XJAX_HD_ALWAYS_INLINE float pow2(u32 k) { return bit_cast<float>((k + 127u) << 23); }
XJAX_HD_ALWAYS_INLINE double pow2(u64 k) { return bit_cast<double>((k + 1023u) << 52); }

// y 2^k for k in [-250, 254] ([-2042, 2046]) as two scalings by normal powers of two: the first
// is exact for y in [1/2, 2], the second rounds only a result that is subnormal or overflows.
XJAX_HD_ALWAYS_INLINE float scale(float y, u32 k) {
  u32 k1 = ((k + 512u) >> 1) - 256u;  // floor(k / 2)
  return y * pow2(k1) * pow2(k - k1);
}
XJAX_HD_ALWAYS_INLINE double scale(double y, u64 k) {
  u64 k1 = ((k + 4096u) >> 1) - 2048u;
  return y * pow2(k1) * pow2(k - k1);
}

// ---- e^r - 1 - r = r^2 Q(r) for |r| <= ln2/2 (tools/fit_vecmath.py exp_f32, exp_f64).
XJAX_HD_ALWAYS_INLINE float exp_q(float r) {
  return poly(r, 0x1p-1f, 0x1.555554p-3f, 0x1.5554fap-5f, 0x1.1112bap-7f, 0x1.6d3e08p-10f, 0x1.9ec944p-13f);
}
XJAX_HD_ALWAYS_INLINE double exp_q(double r) {
  return poly(r, 0x1.0000000000009p-1, 0x1.5555555555566p-3, 0x1.55555555501b1p-5, 0x1.1111111108e8ep-7,
              0x1.6c16c187400e6p-10, 0x1.a01a01e4c41efp-13, 0x1.a0198e7fa709fp-16, 0x1.71dd5d7b87135p-19,
              0x1.28ba46a44b9cfp-22, 0x1.b087de0901d68p-26);
}

// x = k ln2 + r with k = round(x / ln2): ln2 in two parts, the first with few enough bits that
// k times it is exact (k has at most 8 (11) bits here), so x - k ln2_hi is exact too.
struct Reduced32 {
  float hi, lo;  // r = hi - lo
  u32 k;
};
struct Reduced64 {
  double hi, lo;
  u64 k;
};
XJAX_HD_ALWAYS_INLINE Reduced32 reduce_ln2(float x) {
  float t = x * 0x1.715476p+0f + kRound32;
  float kf = t - kRound32;
  return {x - kf * 0x1.62e4p-1f, kf * 0x1.7f7d1cp-20f, int_bits(t)};
}
XJAX_HD_ALWAYS_INLINE Reduced64 reduce_ln2(double x) {
  double t = x * 0x1.71547652b82fep+0 + kRound64;
  double kf = t - kRound64;
  return {x - kf * 0x1.62e42fefa38p-1, kf * 0x1.ef35793c7673p-45, int_bits(t)};
}

// float32 e^x is XLA's (Cephes' expf with every multiply-add fused), so that JAX's bits come out:
// n = floor(x log2(e) + 1/2), r = x - n ln2 (ln2 in two parts), e^r = 1 + (r + r^2 P(r)), times
// 2^n. exp32_reduced computes e^r and n (as two's complement bits); below -88 the result is
// subnormal (flushed), above 89 it overflows: x is clamped into that range, where 2^n splits into
// two normal factors.
struct Exp32 {
  float mantissa;  // e^r, in [1/sqrt(2), sqrt(2)]
  u32 n;
};
XJAX_HD_ALWAYS_INLINE Exp32 exp32_reduced(float x) {
  float k = libm::floor(libm::fma(x, 0x1.715476p+0f, 0.5f));
  k = k > 127.0f ? 127.0f : k;  // (XLA's: 2^n stays finite, e^r takes the rest up to the overflow)
  float r = libm::fma(k, -0.693359375f, x);
  r = libm::fma(k, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = libm::fma(p, r, 1.3981999507e-3f);
  p = libm::fma(p, r, 8.3334519073e-3f);
  p = libm::fma(p, r, 4.1665795894e-2f);
  p = libm::fma(p, r, 1.6666665459e-1f);
  p = libm::fma(p, r, 5.0000001201e-1f);
  return {libm::fma(p, r * r, r) + 1.0f, int_bits(k + kRound32)};
}
XJAX_HD_ALWAYS_INLINE float exp(float x) {
  Exp32 e = exp32_reduced(clamp_keep_nan(x, -88.0f, 89.0f));
  return scale(e.mantissa, e.n);
}
// float64 e^x. Below -746 the result is 0 or subnormal, above 710 it overflows: x is clamped into
// that range so that 2^k splits into two normal factors.
XJAX_HD_ALWAYS_INLINE double exp(double x) {
  Reduced64 d = reduce_ln2(clamp_keep_nan(x, -746.0, 710.0));
  double r = d.hi - d.lo;
  return scale(1.0 + (r + r * r * exp_q(r)), d.k);
}

// e^x on its main range, [-87, 88] ([-708, 709]), where the result is normal: no clamp, one scaling
// by 2^n. There it is exp(x) bit for bit (the same r and polynomial; both scalings are exact; and
// a subnormal operand gives 1 with or without the ops' flushing). Loops run it over blocks whose
// operands all lie in the range (exp_main_range); tanh, sinh, cosh and erf call it with arguments
// in the range.
XJAX_HD_ALWAYS_INLINE float exp_main(float x) {
  Exp32 e = exp32_reduced(x);
  return e.mantissa * pow2(e.n);
}
XJAX_HD_ALWAYS_INLINE double exp_main(double x) {
  Reduced64 d = reduce_ln2(x);
  double r = d.hi - d.lo;
  return (1.0 + (r + r * r * exp_q(r))) * pow2(d.k);
}
XJAX_HD_ALWAYS_INLINE bool exp_main_range(float x) { return x >= -87.0f && x <= 88.0f; }  // NaN: out
XJAX_HD_ALWAYS_INLINE bool exp_main_range(double x) { return x >= -708.0 && x <= 709.0; }

// e^x - 1 = 2^k e^r - 1 = (2^k - 1 + 2^k r) + 2^k (e^r - 1 - r): the first sum is exact where the
// result is a difference (small k), which keeps the polynomial's rounding from being amplified;
// c (what rounding r lost) is added to the tail. As (2^(k-1) - 1/2 + ...) 2 so that 2^(k-1) stays
// finite up to the overflow threshold; for k = 0 the sum r + tail itself (no halving: a tiny x
// stays x). Below -30 (-60), -1.
XJAX_HD_ALWAYS_INLINE float expm1(float x) {
  Reduced32 d = reduce_ln2(clamp_keep_nan(x, -30.0f, 89.0f));
  float r = d.hi - d.lo;
  float c = (d.hi - r) - d.lo;
  float tail = r * r * exp_q(r) + (c + c * r);
  float s = pow2(d.k - 1u);
  float y = (((s - 0.5f) + s * r) + s * tail) * 2.0f;
  y = d.k == 0u ? r + tail : y;
  return x == 0.0f ? x : y;  // -0 stays -0
}
XJAX_HD_ALWAYS_INLINE double expm1(double x) {
  Reduced64 d = reduce_ln2(clamp_keep_nan(x, -60.0, 710.0));
  double r = d.hi - d.lo;
  double c = (d.hi - r) - d.lo;
  double tail = r * r * exp_q(r) + (c + c * r);
  double s = pow2(d.k - 1u);
  double y = (((s - 0.5) + s * r) + s * tail) * 2.0;
  y = d.k == 0u ? r + tail : y;
  return x == 0.0 ? x : y;
}

// 2^x = 2^k 2^f, k = round(x), f = x - k exact; 2^f = 1 + f P(f) (exp2_f32, exp2_f64).
XJAX_HD_ALWAYS_INLINE float exp2(float x) {
  float xc = clamp_keep_nan(x, -152.0f, 129.0f);
  float t = xc + kRound32;
  float f = xc - (t - kRound32);
  float p = poly(f, 0x1.62e432p-1f, 0x1.ebfbe6p-3f, 0x1.c6ad6cp-5f, 0x1.3b2446p-7f, 0x1.5fe266p-10f, 0x1.48ebd8p-13f);
  return scale(1.0f + f * p, int_bits(t));
}
XJAX_HD_ALWAYS_INLINE double exp2(double x) {
  double xc = clamp_keep_nan(x, -1076.0, 1025.0);
  double t = xc + kRound64;
  double f = xc - (t - kRound64);
  double p = poly(f, 0x1.62e42fefa39efp-1, 0x1.ebfbdff82c58ep-3, 0x1.c6b08d704a136p-5, 0x1.3b2ab6fba5077p-7,
                  0x1.5d87fe7890119p-10, 0x1.430912f7bd5a5p-13, 0x1.ffcbfcc707915p-17, 0x1.62c026cb4111bp-20,
                  0x1.b524445dd9574p-24, 0x1.e4b1c8e3c99cdp-28, 0x1.eac8700510ef5p-32, 0x1.021beb12d42fbp-35);
  return scale(1.0 + f * p, int_bits(t));
}

// ---- log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f);
// log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + z T(z)), z = s^2 (log_f64), summed so that the
// largest terms come last.
XJAX_HD_ALWAYS_INLINE double log_t(double z) {
  return poly(z, 0x1.5555555555555p-1, 0x1.9999999999ea6p-2, 0x1.249249241e45fp-2, 0x1.c71c72682b959p-3,
              0x1.745cd97f4258ep-3, 0x1.3b21781dcfa09p-3, 0x1.0f4ae7a0980d4p-3, 0x1.10045fee8e659p-3);
}
// log(x) for finite x > 0 (normal): e, and the parts of log(m).
struct LogParts {
  double e, f, s, hfsq, tail;  // log m = f - (hfsq - s (hfsq + tail))
};
XJAX_HD_ALWAYS_INLINE LogParts log_parts(double x) {
  const u64 kSqrtHalf = 0x3fe6a09e667f3bcdull;
  u64 t = bit_cast<u64>(x) + (0x3ff0000000000000ull - kSqrtHalf);  // the exponent field: e + 1023
  double e = bit_cast<double>((t >> 52) | 0x4330000000000000ull) - (0x1p52 + 1023.0);
  double m = bit_cast<double>((t & 0x000fffffffffffffull) + kSqrtHalf);
  double f = m - 1.0;
  double s = f / (2.0 + f);
  double z = s * s;
  return {e, f, s, 0.5 * f * f, z * log_t(z)};
}
XJAX_HD_ALWAYS_INLINE double log(double x) {
  LogParts p = log_parts(x);
  double y = p.e * 0x1.62e42fefa38p-1 - ((p.hfsq - (p.s * (p.hfsq + p.tail) + p.e * 0x1.ef35793c7673p-45)) - p.f);
  y = x == infinity<double>() ? x : y;
  // Zero and subnormals (zero to DAZ) give -inf, negative numbers NaN.
  y = x < min_normal<double>() ? (x > -min_normal<double>() ? -infinity<double>() : quiet_nan<double>()) : y;
  return x != x ? x : y;
}

// ---- tanh. float32 as XLA's CPU backend computes it, so that JAX's values (and derivatives, which
// JAX builds from tanh's result) come out bit for bit: x clamped to +-7.99881172, then
// x P(x^2) / Q(x^2) with both polynomials evaluated by fused multiply-adds, and x itself below
// |x| = 0.0004. double: odd, on |x| then x's sign: |x| + |x|^3 P(x^2) below 0.55, else
// 1 - 2 / (e^2|x| + 1) (where 2 / (e^2|x| + 1) <= 1/2: no cancellation).
XJAX_HD_ALWAYS_INLINE float tanh(float x) {
  const float xc = clamp_keep_nan(x, -7.99881172180175781f, 7.99881172180175781f);
  const float t = xc * xc;
  float p = -2.76076847742355e-16f;
  p = libm::fma(t, p, 2.00018790482477e-13f);
  p = libm::fma(t, p, -8.60467152213735e-11f);
  p = libm::fma(t, p, 5.12229709037114e-08f);
  p = libm::fma(t, p, 1.48572235717979e-05f);
  p = libm::fma(t, p, 6.37261928875436e-04f);
  p = libm::fma(t, p, 4.89352455891786e-03f);
  float q = 1.19825839466702e-06f;
  q = libm::fma(t, q, 1.18534705686654e-04f);
  q = libm::fma(t, q, 2.26843463243900e-03f);
  q = libm::fma(t, q, 4.89352518554385e-03f);
  const float r = xc * p / q;
  return abs_bits(x) < 0.0004f ? x : r;
}
XJAX_HD_ALWAYS_INLINE double tanh(double x) {
  double ax = abs_bits(x);
  double t = x * x;
  double small =
      ax + ax * t * poly(t, -0x1.555555555549ep-2, 0x1.11111111029bep-3, -0x1.ba1ba1adfed71p-5, 0x1.664f45f7fcd53p-6,
                         -0x1.226de50ee36bp-7, 0x1.d6c74b670354ep-9, -0x1.7d00bcbf6eecap-10, 0x1.2ff4eaa964cdap-11,
                         -0x1.bb39ca0dc47e7p-13, 0x1.b230f74047a77p-15);
  double large = 1.0 - 2.0 / (exp_main(2.0 * clamp_keep_nan(ax, 0.0, 20.0)) + 1.0);
  return with_sign_of(ax < 0.55 ? small : large, x);
}

// ---- pow(x, y) in float32: e^(y log|x|) computed in double (y log|x| has 53 bits where the
// result needs 24, so it is almost always correctly rounded), then C99's special cases.
XJAX_HD_ALWAYS_INLINE float pow(float x, float y) {
  float ax = abs_bits(x), ay = abs_bits(y);
  double l = log(double(ax));  // -inf at 0, inf at inf
  float g = float(exp(double(y) * l));
  // y an integer (every float from 2^23 up is), an odd one (none from 2^24 up).
  float t = ay + 0x1p23f;
  bool y_int = ay >= 0x1p23f || (t - 0x1p23f) == ay;
  bool y_odd = y_int && ay < 0x1p24f && ((bit_cast<u32>(ay < 0x1p23f ? t : ay) & 1u) != 0);
  float r = y_odd ? with_sign_of(g, x) : g;               // a negative base (-0 and -inf too)
  r = (x < 0.0f && x > -infinity<float>() && !y_int) ? quiet_nan<float>() : r;
  r = (x == 1.0f || y == 0.0f || (x == -1.0f && ay == infinity<float>())) ? 1.0f : r;
  return r;
}

// ---- sin and cos: x = k pi/2 + r with |r| <= pi/4 (a little more), then +-sin r or +-cos r by
// the quadrant k mod 4 (cos x = sin(x + pi/2): quadrant k + 1). Our code covers the main range,
// |x| <= 2^18 (float32) and 2^20 (float64), where k has at most 20 bits: pi/2 in parts of 33 bits
// (k times each is exact) and a last rounded one. Beyond it (and for +-inf), libm's scalar
// function: sin_main and cos_main are the main-range code, for loops that check a block's range
// first (sincos_main_range) and vectorise it; sin and cos pick per element.
XJAX_HD_ALWAYS_INLINE bool sincos_main_range(float x) { return !(abs_bits(x) > 0x1p18f); }  // NaN: in
XJAX_HD_ALWAYS_INLINE bool sincos_main_range(double x) { return !(abs_bits(x) > 0x1p20); }

// float32, in double: the reduction's error is below 2^-80 of r, the polynomials' 2^-37 (the
// float result is almost always correctly rounded).
XJAX_HD_ALWAYS_INLINE float sincos_main_f32(float x, u64 quadrant_shift) {
  double xd = x;
  double t = xd * 0x1.45f306dc9c883p-1 + kRound64;  // x 2/pi
  double k = t - kRound64;
  double r = ((xd - k * 0x1.921fb544p+0) - k * 0x1.0b4611a6p-34) - k * 0x1.3198a2e037073p-69;
  double z = r * r;
  double sin_r = r + r * z * poly(z, -0x1.5555554c68a6p-3, 0x1.11110863b4714p-7, -0x1.a00f79c445489p-13,
                                  0x1.6cd0a845999d4p-19);
  double cos_r = (1.0 - 0.5 * z) + z * z * poly(z, 0x1.55555552c00f3p-5, -0x1.6c16bb8c7f7b6p-10,
                                                0x1.a012bd7da1c3bp-16, -0x1.2473b41bfc45cp-22);
  u64 q = int_bits(t) + quadrant_shift;
  double y = (q & 1u) ? cos_r : sin_r;
  return float((q & 2u) ? -y : y);
}
XJAX_HD_ALWAYS_INLINE float sin_main(float x) {
  float y = sincos_main_f32(x, 0u);
  return x == 0.0f ? x : y;  // -0 stays -0
}
XJAX_HD_ALWAYS_INLINE float cos_main(float x) { return sincos_main_f32(x, 1u); }

// a + b = s + e exactly (Knuth's two-sum).
XJAX_HD_ALWAYS_INLINE double two_sum(double a, double b, double& e) {
  double s = a + b;
  double bb = s - a;
  e = (a - (s - bb)) + (b - bb);
  return s;
}

// float64: r as r_hi + r_lo (to about 2^-100 of r even where x is close to a multiple of pi/2:
// two-sums keep what the subtractions round off); sin(r_hi + r_lo) = sin r_hi + r_lo cos r_hi and
// cos(r_hi + r_lo) = cos r_hi - r_lo sin r_hi to first order (sin_f64, cos_f64).
XJAX_HD_ALWAYS_INLINE double sincos_main_f64(double x, u64 quadrant_shift) {
  double t = x * 0x1.45f306dc9c883p-1 + kRound64;
  double k = t - kRound64;
  double t1 = x - k * 0x1.921fb544p+0;  // exact
  double e2, ea, e3;
  double t2 = two_sum(t1, -(k * 0x1.0b4611a6p-34), e2);
  double a = two_sum(e2, -(k * 0x1.3198a2ep-69), ea);
  double r = two_sum(t2, a, e3);
  double r_lo = e3 + (ea - k * 0x1.b839a252049c1p-104);
  double z = r * r;
  double sin_r = r + (r_lo - 0.5 * z * r_lo +
                      r * z * poly(z, -0x1.5555555555548p-3, 0x1.111111110f763p-7, -0x1.a01a019befe13p-13,
                                   0x1.71de355b4879bp-19, -0x1.ae5e50816639ep-26, 0x1.5d8cd73e4a98fp-33));
  double hz = 0.5 * z;
  double w = 1.0 - hz;
  double cos_r = w + (((1.0 - w) - hz) + (z * z * poly(z, 0x1.5555555555553p-5, -0x1.6c16c16c15e87p-10,
                                                          0x1.a01a019dc89d3p-16, -0x1.27e4f8bab10ccp-22,
                                                          0x1.1eea573eedc82p-29, -0x1.8fe0f4acf0b32p-37) -
                                                   r * r_lo));
  u64 q = int_bits(t) + quadrant_shift;
  double y = (q & 1u) ? cos_r : sin_r;
  return (q & 2u) ? -y : y;
}
XJAX_HD_ALWAYS_INLINE double sin_main(double x) {
  double y = sincos_main_f64(x, 0u);
  return x == 0.0 ? x : y;
}
XJAX_HD_ALWAYS_INLINE double cos_main(double x) { return sincos_main_f64(x, 1u); }

// tan = sin r / cos r, or -cos r / sin r in odd quadrants (float32, in double).
XJAX_HD_ALWAYS_INLINE float tan_main(float x) {
  double xd = x;
  double t = xd * 0x1.45f306dc9c883p-1 + kRound64;
  double k = t - kRound64;
  double r = ((xd - k * 0x1.921fb544p+0) - k * 0x1.0b4611a6p-34) - k * 0x1.3198a2e037073p-69;
  double z = r * r;
  double sin_r = r + r * z * poly(z, -0x1.5555554c68a6p-3, 0x1.11110863b4714p-7, -0x1.a00f79c445489p-13,
                                  0x1.6cd0a845999d4p-19);
  double cos_r = (1.0 - 0.5 * z) + z * z * poly(z, 0x1.55555552c00f3p-5, -0x1.6c16bb8c7f7b6p-10,
                                                0x1.a012bd7da1c3bp-16, -0x1.2473b41bfc45cp-22);
  bool odd = (int_bits(t) & 1u) != 0;
  float y = float(odd ? -cos_r / sin_r : sin_r / cos_r);
  return x == 0.0f ? x : y;
}

template <class T> XJAX_HD_ALWAYS_INLINE T sin(T x) { return sincos_main_range(x) ? sin_main(x) : libm::sin(x); }
template <class T> XJAX_HD_ALWAYS_INLINE T cos(T x) { return sincos_main_range(x) ? cos_main(x) : libm::cos(x); }
XJAX_HD_ALWAYS_INLINE float tan(float x) { return sincos_main_range(x) ? tan_main(x) : libm::tan(x); }

// ---- float32 functions computed in double, where 53 bits leave room for the rounding to 24:
// almost always correctly rounded.

// atan2(y, x): on |y| and |x|, n / d = min / max in [0, 1]; above tan(pi/8) as
// pi/4 + atan((n - d) / (n + d)) (n - d and n + d are exact), so that the polynomial's argument v
// stays within tan(pi/8): atan v = v + v^3 A(v^2) (atan_f32). Then the octant: pi/2 - a where |y|
// was the larger, pi - a for a negative x (-0 too), y's sign. Both zero: 0 or pi; both infinite:
// pi/4 or 3pi/4 (as n = d = 1).
XJAX_HD_ALWAYS_INLINE double atan2_f32(double y, double x) {
  const double kPi = 0x1.921fb54442d18p+1, kPio2 = 0x1.921fb54442d18p+0, kPio4 = 0x1.921fb54442d18p-1;
  double ay = abs_bits(y), ax = abs_bits(x);
  bool swap = ay > ax;
  double n = swap ? ax : ay, d = swap ? ay : ax;
  bool both_inf = n == infinity<double>();
  n = both_inf ? 1.0 : n;
  d = both_inf ? 1.0 : d;
  bool big = n > 0x1.a827999fcef32p-2 * d;  // tan(pi/8)
  double v = big ? (n - d) / (n + d) : n / d;
  v = d == 0.0 ? 0.0 : v;
  double z = v * v;
  double a = (big ? kPio4 : 0.0) + (v + v * z * poly(z, -0x1.5555554ed798ep-2, 0x1.999991f46bb1fp-3,
                                                      -0x1.2490c1c1dfc52p-3, 0x1.c6d1bb4caae2ep-4,
                                                      -0x1.70885c7742d12p-4, 0x1.1eb79a0ff5dd9p-4,
                                                      -0x1.39224be0f4f0cp-5));
  a = swap ? kPio2 - a : a;
  a = (bit_cast<u64>(x) >> 63) != 0 ? kPi - a : a;
  a = with_sign_of(a, y);
  return (x != x || y != y) ? x + y : a;
}
XJAX_HD_ALWAYS_INLINE float atan2(float y, float x) { return float(atan2_f32(double(y), double(x))); }
XJAX_HD_ALWAYS_INLINE float atan(float x) { return float(atan2_f32(double(x), 1.0)); }
// asin x = atan2(x, sqrt(1 - x^2)), acos x = atan2(sqrt(1 - x^2), x), 1 - x^2 as (1 - x)(1 + x)
// (both exact in double); |x| > 1 gives the square root of a negative number: NaN.
XJAX_HD_ALWAYS_INLINE float asin(float x) {
  double xd = x;
  return float(atan2_f32(xd, libm::sqrt((1.0 - xd) * (1.0 + xd))));
}
XJAX_HD_ALWAYS_INLINE float acos(float x) {
  double xd = x;
  return float(atan2_f32(libm::sqrt((1.0 - xd) * (1.0 + xd)), xd));
}

// sinh |x| = (E + E / (E + 1)) / 2 with E = e^|x| - 1 (no cancellation near 0), x's sign;
// cosh x = (e^|x| + e^-|x|) / 2. Beyond 100 both overflow float32 anyway.
XJAX_HD_ALWAYS_INLINE float sinh(float x) {
  double a = clamp_keep_nan(double(abs_bits(x)), 0.0, 100.0);
  double e = expm1(a);
  return float(with_sign_of(0.5 * (e + e / (e + 1.0)), double(x)));
}
XJAX_HD_ALWAYS_INLINE float cosh(float x) {
  double e = exp_main(clamp_keep_nan(double(abs_bits(x)), 0.0, 100.0));
  return float(0.5 * (e + 1.0 / e));
}

// erf and erfc: erf x = x P(x^2) below |x| = 1 (erf_f32); beyond, erfc |x| = e^-x^2 B(|x| - 1.75) up
// to 2.5 and e^-x^2 C(1/x^2) / |x| up to 10.1 (erfc of more is below float32's range), one
// polynomial with each lane's coefficients (erfc_b_f32, erfc_c_f32); erf = 1 - erfc there, and
// erfc = 1 - erf below 1, 2 - erfc |x| for negative x. x^2 is exact in double.
XJAX_HD_ALWAYS_INLINE double erfc_tail_f32(double ax) {
  double a = clamp_keep_nan(ax, 1.0, 10.1);
  bool b = a < 2.5;
  double inv = 1.0 / a;
  double v = b ? a - 1.75 : inv * inv;
  auto c = [b](double cb, double cc) { return b ? cb : cc; };
  double p = c(-0x1.b9baccd0c1314p-19, 0.0);
  p = p * v + c(0x1.84fa9fac6029dp-17, 0.0);
  p = p * v + c(-0x1.1991d1f67432ap-15, -0x1.747d2de0d765cp+8);
  p = p * v + c(0x1.c737b139b69p-14, 0x1.79d4433a6bd7fp+8);
  p = p * v + c(-0x1.6841f2a26b1fbp-12, -0x1.69b4ba795753p+7);
  p = p * v + c(0x1.107f00cff0a6dp-10, 0x1.c7fb83b1d3234p+5);
  p = p * v + c(-0x1.8bf718f88bc02p-9, -0x1.cfc0d548d45b4p+3);
  p = p * v + c(0x1.1364393ff95e7p-7, 0x1.cdbc2824f8412p+1);
  p = p * v + c(-0x1.6cb52f4a077a1p-6, -0x1.0e1b44fbda57fp+0);
  p = p * v + c(0x1.c8d0cfe8e382ap-5, 0x1.b13f7bb3ceb5dp-2);
  p = p * v + c(-0x1.0c3d538527d86p-3, -0x1.20dd5653c707dp-2);
  p = p * v + c(0x1.23cfc2f19f3c3p-2, 0x1.20dd74f555433p-1);
  return exp_main(-(a * a)) * (b ? p : p * inv);
}
XJAX_HD_ALWAYS_INLINE double erf_small_f32(double x) {
  return x * poly(x * x, 0x1.20dd750428ca2p+0, -0x1.812746adef687p-2, 0x1.ce2f20ac05373p-4, -0x1.b82cbb8c9182bp-6,
                  0x1.565895c4877f8p-8, -0x1.bfe211b13b98ep-11, 0x1.f585903c65bcep-14, -0x1.d2daf492584d2p-17,
                  0x1.1c8791ebeb0b2p-20);
}
XJAX_HD_ALWAYS_INLINE float erf(float x) {
  double xd = x, ax = abs_bits(xd);
  double large = with_sign_of(1.0 - erfc_tail_f32(ax), xd);
  return float(ax < 1.0 ? erf_small_f32(xd) : large);
}
XJAX_HD_ALWAYS_INLINE float erfc(float x) {
  double xd = x, ax = abs_bits(xd);
  double tail = erfc_tail_f32(ax);
  double large = xd < 0.0 ? 2.0 - tail : tail;
  return float(ax < 1.0 ? 1.0 - erf_small_f32(xd) : large);
}

}  // namespace math
#endif  // !XJAX_SCALAR_CUDA

// ---- what the ops call: these functions on the host, the device's libm under CUDA.
namespace fn {
#ifdef XJAX_SCALAR_CUDA
#define XJAX_SCALAR_FN(name, type, params, args) \
  XJAX_HD_ALWAYS_INLINE type name params { return libm::name args; }
#else
#define XJAX_SCALAR_FN(name, type, params, args) \
  XJAX_HD_ALWAYS_INLINE type name params { return math::name args; }
#endif
XJAX_SCALAR_FN(exp, float, (float x), (x)) XJAX_SCALAR_FN(exp, double, (double x), (x))
XJAX_SCALAR_FN(exp2, float, (float x), (x)) XJAX_SCALAR_FN(exp2, double, (double x), (x))
XJAX_SCALAR_FN(expm1, float, (float x), (x)) XJAX_SCALAR_FN(expm1, double, (double x), (x))
XJAX_SCALAR_FN(tanh, float, (float x), (x)) XJAX_SCALAR_FN(tanh, double, (double x), (x))
XJAX_SCALAR_FN(log, double, (double x), (x))
XJAX_SCALAR_FN(pow, float, (float x, float y), (x, y))
XJAX_SCALAR_FN(sin, float, (float x), (x)) XJAX_SCALAR_FN(sin, double, (double x), (x))
XJAX_SCALAR_FN(cos, float, (float x), (x)) XJAX_SCALAR_FN(cos, double, (double x), (x))
XJAX_SCALAR_FN(tan, float, (float x), (x)) XJAX_SCALAR_FN(atan, float, (float x), (x))
XJAX_SCALAR_FN(atan2, float, (float y, float x), (y, x)) XJAX_SCALAR_FN(asin, float, (float x), (x))
XJAX_SCALAR_FN(acos, float, (float x), (x)) XJAX_SCALAR_FN(sinh, float, (float x), (x))
XJAX_SCALAR_FN(cosh, float, (float x), (x)) XJAX_SCALAR_FN(erf, float, (float x), (x))
XJAX_SCALAR_FN(erfc, float, (float x), (x))
#undef XJAX_SCALAR_FN
// float64: libm's (one scalar call per element).
#define XJAX_SCALAR_LIBM_FN(name) \
  XJAX_HD_ALWAYS_INLINE double name(double x) { return libm::name(x); }
XJAX_SCALAR_LIBM_FN(tan) XJAX_SCALAR_LIBM_FN(atan) XJAX_SCALAR_LIBM_FN(asin) XJAX_SCALAR_LIBM_FN(acos)
XJAX_SCALAR_LIBM_FN(sinh) XJAX_SCALAR_LIBM_FN(cosh) XJAX_SCALAR_LIBM_FN(erf) XJAX_SCALAR_LIBM_FN(erfc)
#undef XJAX_SCALAR_LIBM_FN
XJAX_HD_ALWAYS_INLINE double atan2(double y, double x) { return libm::atan2(y, x); }
// The main-range forms of exp, sin, cos and tan (see above): what exp, sin, cos and tan compute
// wherever exp_main_range / sincos_main_range holds. Under CUDA, libm's functions and the whole
// range.
#ifdef XJAX_SCALAR_CUDA
template <class T> XJAX_HD_ALWAYS_INLINE T exp_main(T x) { return libm::exp(x); }
template <class T> XJAX_HD_ALWAYS_INLINE bool exp_main_range(T) { return true; }
template <class T> XJAX_HD_ALWAYS_INLINE T sin_main(T x) { return libm::sin(x); }
template <class T> XJAX_HD_ALWAYS_INLINE T cos_main(T x) { return libm::cos(x); }
XJAX_HD_ALWAYS_INLINE float tan_main(float x) { return libm::tan(x); }
template <class T> XJAX_HD_ALWAYS_INLINE bool sincos_main_range(T) { return true; }
#else
using math::cos_main;
using math::exp_main;
using math::exp_main_range;
using math::sin_main;
using math::sincos_main_range;
using math::tan_main;
#endif
// float64 pow stays libm's (one scalar call per element: the same bits wherever the element is).
XJAX_HD_ALWAYS_INLINE double pow(double x, double y) { return libm::pow(x, y); }
}  // namespace fn

}  // namespace scalar
}  // namespace xjax

#endif  // XJAX_SCALAR_MATH_H
