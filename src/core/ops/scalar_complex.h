// The scalar semantics of the elementwise ops on complex64 / complex128, written once (as
// scalar_ops.h is for the real dtypes): the CPU loops (cpu/elementwise_complex.cpp) and the
// reference interpreter call these. Host C++ only for now (the CUDA generator refuses complex).
//
// Values are std::complex<T> (T float or double, NumPy's layout: re, im), but std::complex's own
// operators are never used: GCC's * and / recover infinities from NaN results in a library call
// (C99 Annex G), where XLA computes the plain formulas (the trigonometric and hyperbolic families,
// below, are the C library's). Here:
// - mul is (ac - bd) + (ad + bc)i; div is Smith's algorithm (scaled by the larger part of the
//   divisor), so it neither overflows nor underflows where the quotient is representable, and
//   divides by +0 part by part for a zero divisor;
// - abs is hypot(re, im); sign is z / |z| (0 for 0); sqrt takes the root of the larger part first;
// - exp is e^re (cos im + i sin im), e^re + 0i for a real argument; log is log|z| + i atan2(im, re) (branch cut on the negative
//   real axis, as XLA's and NumPy's);
// - eq/ne compare both parts; converting a complex number to a real type keeps its real part;
// - max/min order lexicographically, clamp by the real parts alone (both as XLA).
// The files that include this are compiled without contraction (no fused multiply-add), so the
// results do not depend on the instruction set.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>

namespace xjax::scalar::cx {

template <class T> using C = std::complex<T>;
template <class T> constexpr bool is_complex_v = false;  // for kernels templated over all dtypes
template <class T> constexpr bool is_complex_v<std::complex<T>> = true;

template <class T> inline C<T> make(T re, T im) { return C<T>(re, im); }
template <class T> inline T real(C<T> z) { return z.real(); }
template <class T> inline T imag(C<T> z) { return z.imag(); }
template <class T> inline C<T> conj(C<T> z) { return C<T>(z.real(), -z.imag()); }
template <class T> inline C<T> neg(C<T> z) { return C<T>(-z.real(), -z.imag()); }
template <class T> inline C<T> add(C<T> a, C<T> b) { return C<T>(a.real() + b.real(), a.imag() + b.imag()); }
template <class T> inline C<T> sub(C<T> a, C<T> b) { return C<T>(a.real() - b.real(), a.imag() - b.imag()); }
template <class T> inline C<T> mul(C<T> a, C<T> b) {
  return C<T>(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
template <class T> inline C<T> div(C<T> a, C<T> b) {
  const T c = b.real(), d = b.imag();
  if (c == T(0) && d == T(0)) return C<T>(a.real() / std::fabs(c), a.imag() / std::fabs(c));  // as XLA: +-inf, NaN
  if (std::fabs(c) >= std::fabs(d)) {
    const T r = d / c, den = c + d * r;
    return C<T>((a.real() + a.imag() * r) / den, (a.imag() - a.real() * r) / den);
  }
  const T r = c / d, den = c * r + d;
  return C<T>((a.real() * r + a.imag()) / den, (a.imag() * r - a.real()) / den);
}
template <class T> inline bool eq(C<T> a, C<T> b) { return a.real() == b.real() && a.imag() == b.imag(); }
template <class T> inline bool ne(C<T> a, C<T> b) { return !cx::eq(a, b); }
// max and min order lexicographically (real parts, then imaginary parts), as XLA: max(a, b) is a
// where a > b and b otherwise, so a comparison with NaN picks b.
template <class T> inline bool lex_gt(C<T> a, C<T> b) {
  return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
}
template <class T> inline C<T> max(C<T> a, C<T> b) { return cx::lex_gt(a, b) ? a : b; }
template <class T> inline C<T> min(C<T> a, C<T> b) { return cx::lex_gt(b, a) ? a : b; }
// clamp(lo, x, hi) is XLA's (recorded from JAX): it orders by the real parts alone, t = lo where
// re(lo) >= re(x) else x, then t where re(t) <= re(hi) else hi (a comparison with NaN is false).
template <class T> inline C<T> clamp(C<T> lo, C<T> x, C<T> hi) {
  const C<T> t = lo.real() >= x.real() ? lo : x;
  return t.real() <= hi.real() ? t : hi;
}
template <class T> inline T abs(C<T> z) { return std::hypot(z.real(), z.imag()); }
// log(exp(a) + exp(b)) as JAX's complex logaddexp: m + log1p(exp(a + b - 2m)) with m = max(a, b),
// its imaginary part wrapped into [-pi, pi) by XLA's rem (fmod).
template <class T> inline C<T> logaddexp(C<T> a, C<T> b);
template <class T> inline C<T> sign(C<T> z) {
  const T m = cx::abs(z);
  if (m == T(0)) return C<T>(T(0), T(0));
  return C<T>(z.real() / m, z.imag() / m);
}
template <class T> inline C<T> square(C<T> z) { return cx::mul(z, z); }
// z**y by repeated squaring (as the real integer_pow); a negative y gives 1 / z**|y|.
template <class T> inline C<T> integer_pow(C<T> z, int64_t y) {
  uint64_t e = y < 0 ? uint64_t(0) - uint64_t(y) : uint64_t(y);
  C<T> acc(T(1), T(0)), base = z;
  bool first = true;
  while (e) {
    if (e & 1) {
      acc = first ? base : cx::mul(acc, base);
      first = false;
    }
    e >>= 1;
    if (e) base = cx::mul(base, base);
  }
  return y < 0 ? div(C<T>(T(1), T(0)), acc) : acc;
}
template <class T> inline C<T> exp(C<T> z) {
  const T m = std::exp(z.real());
  if (z.imag() == T(0)) return C<T>(m, z.imag());  // real arguments stay real (exp(inf) = inf + 0i)
  return C<T>(m * std::cos(z.imag()), m * std::sin(z.imag()));
}
template <class T> inline C<T> log(C<T> z) { return C<T>(std::log(cx::abs(z)), std::atan2(z.imag(), z.real())); }
template <class T> inline C<T> sqrt(C<T> z) {
  const T x = z.real(), y = z.imag();
  if (x == T(0) && y == T(0)) return C<T>(T(0), y);
  if (std::isinf(y)) return C<T>(std::fabs(y), y);
  // t = sqrt((|x| + |z|) / 2), halved before adding so that it cannot overflow.
  const T t = std::sqrt(std::fabs(x) / T(2) + cx::abs(z) / T(2));
  if (x >= T(0)) return C<T>(t, y / (T(2) * t));
  return C<T>(std::fabs(y) / (T(2) * t), y < T(0) ? -t : t);  // -0 counts as +0 (XLA; NumPy differs)
}

template <class T> inline C<T> rsqrt(C<T> z) { return cx::div(C<T>(T(1), T(0)), cx::sqrt(z)); }
// exp(z) - 1 and log(1 + z), accurate near 0 (exp(x) cos y - 1 = expm1(x) cos y - 2 sin^2(y/2)).
template <class T> inline C<T> expm1(C<T> z) {
  const T x = z.real(), y = z.imag();
  if (y == T(0)) return C<T>(std::expm1(x), y);
  const T h = std::sin(y / T(2));
  return C<T>(std::expm1(x) * std::cos(y) - T(2) * h * h, std::exp(x) * std::sin(y));
}
template <class T> inline C<T> log1p(C<T> z) {
  const T x = z.real(), y = z.imag();
  const T m = std::fabs(x) + std::fabs(y);
  if (!(m < T(0.5))) return cx::log(C<T>(T(1) + x, y));  // (NaN included)
  return C<T>(T(0.5) * std::log1p(x * (T(2) + x) + y * y), std::atan2(y, T(1) + x));
}
template <class T> inline C<T> exp2(C<T> z) {
  const T ln2 = T(0.6931471805599453094172321214581766);
  return cx::exp(C<T>(z.real() * ln2, z.imag() * ln2));
}
template <class T> inline C<T> logistic(C<T> z) {
  return cx::div(C<T>(T(1), T(0)), cx::add(C<T>(T(1), T(0)), cx::exp(cx::neg(z))));
}
// a**b = exp(b log a); 0**b is 1 for b = 0, 0 for re(b) > 0 and im(b) = 0, NaN otherwise.
template <class T> inline C<T> pow(C<T> a, C<T> b) {
  if (a.real() == T(0) && a.imag() == T(0)) {
    if (b.real() == T(0) && b.imag() == T(0)) return C<T>(T(1), T(0));
    if (b.real() > T(0) && b.imag() == T(0)) return C<T>(T(0), T(0));
    return C<T>(std::nan(""), std::nan(""));
  }
  return cx::exp(cx::mul(b, cx::log(a)));
}
template <class T> inline C<T> logaddexp(C<T> a, C<T> b) {
  const C<T> m = cx::max(a, b);
  const C<T> delta = cx::sub(cx::add(a, b), cx::mul(m, C<T>(T(2), T(0))));
  const C<T> out = cx::add(m, cx::log1p(cx::exp(delta)));
  const T pi = T(3.14159265358979323846), two_pi = T(6.28318530717958647692);
  T wrapped = std::fmod(out.imag() + pi, two_pi);
  if (wrapped < T(0)) wrapped += two_pi;
  return C<T>(out.real(), wrapped - pi);
}
// The trigonometric and hyperbolic families and their inverses: the C library's (C99 Annex G:
// branch cuts and special values as NumPy's).
template <class T> inline C<T> sin(C<T> z) { return std::sin(z); }
template <class T> inline C<T> cos(C<T> z) { return std::cos(z); }
template <class T> inline C<T> tan(C<T> z) { return std::tan(z); }
template <class T> inline C<T> sinh(C<T> z) { return std::sinh(z); }
template <class T> inline C<T> cosh(C<T> z) { return std::cosh(z); }
template <class T> inline C<T> tanh(C<T> z) { return std::tanh(z); }
template <class T> inline C<T> asin(C<T> z) { return std::asin(z); }
template <class T> inline C<T> acos(C<T> z) { return std::acos(z); }
template <class T> inline C<T> atan(C<T> z) { return std::atan(z); }
template <class T> inline C<T> asinh(C<T> z) { return std::asinh(z); }
template <class T> inline C<T> acosh(C<T> z) { return std::acosh(z); }
template <class T> inline C<T> atanh(C<T> z) { return std::atanh(z); }

}  // namespace xjax::scalar::cx
