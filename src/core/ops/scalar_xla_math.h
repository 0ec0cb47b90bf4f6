// Part of scalar_ops.h (the rules are there): log, log1p and erf_inv, which follow XLA's own
// algorithms so that JAX's bits come out. float32 erf_inv is XLA's ErfInv32 (Giles, "Approximating
// the erfinv function", on w = -log1p(-y^2)), on XLA's float32 log1p and log (Cephes rational and
// polynomial); random.normal draws through it. float64 erf_inv is ErfInv64 on XLA's float64 log1p;
// float64 log is libm's. Multiply-adds are fused exactly where XLA fuses them (explicit fma):
// compile callers without contraction (-ffp-contract=off, nvcc --fmad=false) for JAX's bits.
#ifndef XJAX_SCALAR_XLA_MATH_H
#define XJAX_SCALAR_XLA_MATH_H

#ifndef XJAX_SCALAR_OPS_H
#include "core/ops/scalar_ops.h"
#endif

XJAX_SCALAR_OPS_BEGIN

// p = c0; p = fma(p, x, c_i) for each further coefficient.
template <class T> XJAX_HD_ALWAYS_INLINE T horner_fma(T, T p) { return p; }
template <class T, class... C> XJAX_HD_ALWAYS_INLINE T horner_fma(T x, T p, T c, C... rest) {
  return horner_fma(x, libm::fma(p, x, c), rest...);
}

// XLA's float32 log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a degree-8 polynomial.
// Branch-free (selects), so that loops over it vectorise.
XJAX_HD_ALWAYS_INLINE float log_xla(float x) {
  const float inf = infinity<float>();
  float xc = x > 1.17549435e-38f ? x : 1.17549435e-38f;  // NaN and small values: fixed up below
  u32 u = bit_cast<u32>(xc);
  float e = float(i32(u >> 23) - 0x7e);
  float m = bit_cast<float>(u32((u & 0x807fffffu) | 0x3f000000u));  // in [0.5, 1)
  bool below = m < 0.707106781186547524f;
  float add = below ? m : 0.0f;
  m = m - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  m = m + add;
  float x2 = m * m, x3 = x2 * m;
  float y = libm::fma(m, 7.0376836292E-2f, -1.1514610310E-1f);
  float y1 = libm::fma(m, -1.2420140846E-1f, 1.4249322787E-1f);
  float y2 = libm::fma(m, 2.0000714765E-1f, -2.4999993993E-1f);
  y = libm::fma(y, m, 1.1676998740E-1f);
  y1 = libm::fma(y1, m, -1.6668057665E-1f);
  y2 = libm::fma(y2, m, 3.3333331174E-1f);
  y = libm::fma(y, x3, y1);
  y = libm::fma(y, x3, y2);
  y = libm::fma(y, x3, e * -2.12194440e-4f);
  m = m - 0.5f * x2;
  m = m + y;
  m = m + e * 0.693359375f;
  m = x == 0.0f ? -inf : m;
  m = x == inf ? inf : m;
  return x >= 0.0f ? m : quiet_nan<float>();
}

// XLA's float32 log1p: a Cephes rational for |x| < sqrt(2) - 1 (log1p_xla_near0), else
// log(1 + x). (XLA's Horner sums start from 0 * x + c0: the same value, c0.) Loops that give each
// element only its own formula (erf_inv's) pick by log1p_xla_is_near0.
XJAX_HD_ALWAYS_INLINE bool log1p_xla_is_near0(float x) { return libm::fabs(x) < 0.41421356237309504880f; }
XJAX_HD_ALWAYS_INLINE float log1p_xla_near0(float x) {
  float xs = x * x;
  float num = horner_fma(x, 4.5270000862445199635215E-5f, 4.9854102823193375972212E-1f, 6.5787325942061044846969E0f,
                         2.9911919328553073277375E1f, 6.0949667980987787057556E1f, 5.7112963590585538103336E1f,
                         2.0039553499201281259648E1f);
  float den = horner_fma(x, 1.0f, 1.5062909083469192043167E1f, 8.3047565967967209469434E1f,
                         2.2176239823732856465394E2f, 3.0909872225312059774938E2f, 2.1642788614495947685003E2f,
                         6.0118660497603843919306E1f);
  return x + libm::fma(-0.5f, xs, (x * xs) * (num / den));
}
XJAX_HD_ALWAYS_INLINE float log1p_xla_far(float x) { return log_xla(x + 1.0f); }
XJAX_HD_ALWAYS_INLINE float log1p_xla(float x) {
  float large = log1p_xla_far(x);
  float small = log1p_xla_near0(x);
  return log1p_xla_is_near0(x) ? small : large;
}

// XLA's float64 log1p: the same Cephes rational near 0, else libm's log(1 + x).
XJAX_HD_ALWAYS_INLINE double log1p_xla(double x) {
  if (!(libm::fabs(x) < 0.41421356237309504880)) return libm::log(x + 1.0);
  double xs = x * x;
  double num = horner_fma(x, 4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
                          2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
                          2.0039553499201281259648E1);
  double den = horner_fma(x, 1.0, 1.5062909083469192043167E1, 8.3047565967967209469434E1, 2.2176239823732856465394E2,
                          3.0909872225312059774938E2, 2.1642788614495947685003E2, 6.0118660497603843919306E1);
  return x + libm::fma(-0.5, xs, (x * xs) * (num / den));
}

// float32 erf_inv: w = -log1p(-y^2), then one polynomial in w - 2.5 below 5 (|y| < 0.99662),
// another in sqrt(w) - 3 above (the tail).
XJAX_HD_ALWAYS_INLINE float erf_inv_log1p_arg(float x) { return -x * x; }
XJAX_HD_ALWAYS_INLINE float erf_inv_w(float y) { return -log1p_xla(erf_inv_log1p_arg(y)); }
XJAX_HD_ALWAYS_INLINE float erf_inv_central(float t) {
  return horner_fma(t, 2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
                    -0.00125372503f, -0.00417768164f, 0.246640727f, 1.50140941f);
}
XJAX_HD_ALWAYS_INLINE float erf_inv_tail(float t) {
  return horner_fma(t, -0.000200214257f, 0.000100950558f, 0.00134934322f, -0.00367342844f, 0.00573950773f,
                    -0.0076224613f, 0.00943887047f, 1.00167406f, 2.83297682f);
}
XJAX_HD_ALWAYS_INLINE float erf_inv_xla(float y) {
  float w = erf_inv_w(y);
  bool lt = w < 5.0f;
  float t = lt ? w - 2.5f : libm::sqrt(w) - 3.0f;
  float p = lt ? erf_inv_central(t) : erf_inv_tail(t);
  return libm::fabs(y) == 1.0f ? y * infinity<float>() : p * y;
}

XJAX_HD_ALWAYS_INLINE double erf_inv_xla(double y) {
  double w = -log1p_xla(-y * y);
  double p;
  if (w < 6.25) {
    p = horner_fma(w - 3.125, -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
                   1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
                   6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
                   2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                   1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
                   4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                   0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
                   0.24015818242558961693, 1.6536545626831027356);
  } else if (w < 16.0) {
    p = horner_fma(libm::sqrt(w) - 3.25, 2.2137376921775787049e-09, 9.0756561938885390979e-08,
                   -2.7517406297064545428e-07, 1.8239629214389227755e-08, 1.5027403968909827627e-06,
                   -4.013867526981545969e-06, 2.9234449089955446044e-06, 1.2475304481671778723e-05,
                   -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05,
                   -0.0003550375203628474796, 0.00095328937973738049703, -0.0016882755560235047313,
                   0.0024914420961078508066, -0.0037512085075692412107, 0.005370914553590063617,
                   1.0052589676941592334, 3.0838856104922207635);
  } else {
    p = horner_fma(libm::sqrt(w) - 5.0, -2.7109920616438573243e-11, -2.5556418169965252055e-10,
                   1.5076572693500548083e-09, -3.7894654401267369937e-09, 7.6157012080783393804e-09,
                   -1.4960026627149240478e-08, 2.9147953450901080826e-08, -6.7711997758452339498e-08,
                   2.2900482228026654717e-07, -9.9298272942317002539e-07, 4.5260625972231537039e-06,
                   -1.9681778105531670567e-05, 7.5995277030017761139e-05, -0.00021503011930044477347,
                   -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221);
  }
  return libm::fabs(y) == 1.0 ? y * infinity<double>() : p * y;
}

// The ops. log<double> is our own (scalar_math.h; libm's under CUDA), within an ulp of XLA's.
template <class T> XJAX_HD_ALWAYS_INLINE T log(T x) {
  static_assert(is_float_v<T>, "log takes float types");
  x = flush_subnormal(x);
  if constexpr (is_same_v<T, float>) return flush_subnormal(log_xla(x));
  else return flush_subnormal(fn::log(x));
}
template <class T> XJAX_HD_ALWAYS_INLINE T log1p(T x) {
  static_assert(is_float_v<T>, "log1p takes float types");
  return flush_subnormal(log1p_xla(flush_subnormal(x)));
}
template <class T> XJAX_HD_ALWAYS_INLINE T erf_inv(T x) {
  static_assert(is_float_v<T>, "erf_inv takes float types");
  return flush_subnormal(erf_inv_xla(flush_subnormal(x)));
}
// float32 erf_inv's main range and its code there, without the tail's square root and polynomial,
// for loops that check a block's range first: |x| <= 0.996 has w < 4.9 (far from 5 for rounding
// to cross); NaN is out. erf_inv_main_of finishes it from x flushed and l = log1p_xla(-x * x), for
// loops that compute l apart.
XJAX_HD_ALWAYS_INLINE bool erf_inv_main_range(float x) { return libm::fabs(x) <= 0.996f; }
XJAX_HD_ALWAYS_INLINE float erf_inv_main_of(float x, float l) { return flush_subnormal(erf_inv_central(-l - 2.5f) * x); }
XJAX_HD_ALWAYS_INLINE float erf_inv_main(float x) {
  x = flush_subnormal(x);
  return erf_inv_main_of(x, log1p_xla(erf_inv_log1p_arg(x)));
}

XJAX_SCALAR_OPS_END

#endif  // XJAX_SCALAR_XLA_MATH_H
