// The scalar semantics of the elementwise ops on complex64 / complex128, written once (as
// scalar_ops.h is for the real dtypes): the CPU loops (cpu/elementwise_complex.cpp, which fused
// kernels run too), the reference interpreter and generated CUDA kernels compute these. The text
// is the last part of scalar_source() (scalar_names.h), so it compiles as host C++17, under nvcc
// and under NVRTC: the real functions it needs are the real ops' own definitions (scalar::exp,
// scalar::sin, scalar::log, ...: ours on the host, the device's libm under CUDA).
//
// Values are C<T> (T float or double, NumPy's layout: re, im): std::complex on the host, a plain
// struct of the same layout under CUDA. std::complex's own operators are never used: GCC's * and /
// recover infinities from NaN results in a library call (C99 Annex G), where XLA computes the plain
// formulas (the trigonometric and hyperbolic families, below, are the C library's, host only). Here:
// - mul is (ac - bd) + (ad + bc)i; div is Smith's algorithm (scaled by the larger part of the
//   divisor), so it neither overflows nor underflows where the quotient is representable, with
//   XLA's infinities and zeros where one side is zero or infinite (div_recovered);
// - abs is hypot(re, im); sign is z / |z| (0 for 0); sqrt takes the root of the larger part first;
// - exp is e^re (cos im + i sin im), e^re + 0i for a real argument; log is log|z| + i atan2(im, re) (branch cut on the negative
//   real axis, as XLA's and NumPy's);
// - eq/ne compare both parts; converting a complex number to a real type keeps its real part;
// - max/min order lexicographically, clamp by the real parts alone (both as XLA); atan2 is XLA's
//   -i log((x + i y) / sqrt(x^2 + y^2)).
// The files that include this are compiled without contraction (no fused multiply-add), so the
// results do not depend on the instruction set.
#ifndef XJAX_SCALAR_COMPLEX_H
#define XJAX_SCALAR_COMPLEX_H

#ifndef XJAX_SCALAR_OPS_H
#include "core/ops/scalar_ops.h"
#endif
#ifndef XJAX_SCALAR_XLA_MATH_H
#include "core/ops/scalar_xla_math.h"
#endif
#ifndef XJAX_SCALAR_CONVERT_H
#include "core/ops/scalar_convert.h"
#endif
#ifndef XJAX_SCALAR_CUDA
#include <complex>
#endif

// (In the real ops' namespace, whose flushing mode it shares: see XJAX_SCALAR_OPS_BEGIN.)
XJAX_SCALAR_OPS_BEGIN
namespace cx {

#ifdef XJAX_SCALAR_CUDA
template <class T> struct alignas(2 * sizeof(T)) complex {
  T re, im;
  XJAX_HD complex(T r = T(0), T i = T(0)) : re(r), im(i) {}
  XJAX_HD T real() const { return re; }
  XJAX_HD T imag() const { return im; }
};
template <class T> using C = complex<T>;
#else
template <class T> using C = std::complex<T>;
#endif

// part<C<T>>::type is T; is_complex<X> says whether X is a C<T>.
template <class X> struct part { typedef X type; static constexpr bool complex = false; };
template <class T> struct part<C<T>> { typedef T type; static constexpr bool complex = true; };
template <class X> constexpr bool is_complex = part<X>::complex;
template <class X> constexpr bool is_complex_v = is_complex<X>;  // (the name kernels over all dtypes use)

template <class T> XJAX_HD inline C<T> make(T re, T im) { return C<T>(re, im); }
template <class T> XJAX_HD inline T real(C<T> z) { return z.real(); }
template <class T> XJAX_HD inline T imag(C<T> z) { return z.imag(); }
template <class T> XJAX_HD inline C<T> conj(C<T> z) { return C<T>(z.real(), -z.imag()); }
template <class T> XJAX_HD inline C<T> neg(C<T> z) { return C<T>(-z.real(), -z.imag()); }
template <class T> XJAX_HD inline C<T> add(C<T> a, C<T> b) { return C<T>(a.real() + b.real(), a.imag() + b.imag()); }
template <class T> XJAX_HD inline C<T> sub(C<T> a, C<T> b) { return C<T>(a.real() - b.real(), a.imag() - b.imag()); }
template <class T> XJAX_HD inline C<T> mul(C<T> a, C<T> b) {
  return C<T>(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
// Where Smith's quotient q of a / b is NaN in both parts but one side is infinite and the other
// finite, the quotient is an infinity or a zero (as XLA's division gives): each infinite part
// counts as +-1 and each finite part of that side as +-0, and the formula a * conj(b) is scaled by
// infinity (a infinite) or by zero (b infinite).
template <class T> XJAX_HD inline T div_unit(T x) {
  return libm::copysign(libm::fabs(x) == infinity<T>() ? T(1) : T(0), x);
}
template <class T> XJAX_HD inline bool has_infinity(C<T> z) {
  return libm::fabs(z.real()) == infinity<T>() || libm::fabs(z.imag()) == infinity<T>();
}
template <class T> XJAX_HD inline C<T> div_recovered(C<T> a, C<T> b, C<T> q) {
  if (!(q.real() != q.real() && q.imag() != q.imag())) return q;
  const bool a_finite = scalar::is_finite(a.real()) && scalar::is_finite(a.imag());
  const bool b_finite = scalar::is_finite(b.real()) && scalar::is_finite(b.imag());
  if (b_finite && cx::has_infinity(a)) {
    const T ar = cx::div_unit(a.real()), ai = cx::div_unit(a.imag()), c = b.real(), d = b.imag();
    return C<T>(infinity<T>() * (ar * c + ai * d), infinity<T>() * (ai * c - ar * d));
  }
  if (a_finite && cx::has_infinity(b)) {
    const T c = cx::div_unit(b.real()), d = cx::div_unit(b.imag());
    return C<T>(T(0) * (a.real() * c + a.imag() * d), T(0) * (a.imag() * c - a.real() * d));
  }
  return q;
}
template <class T> XJAX_HD inline C<T> div(C<T> a, C<T> b) {
  const T c = b.real(), d = b.imag();
  if (c == T(0) && d == T(0)) {  // as XLA: each part times an infinity of c's sign (+-inf, NaN)
    const T scale = libm::copysign(infinity<T>(), c);
    return C<T>(a.real() * scale, a.imag() * scale);
  }
  if (libm::fabs(c) >= libm::fabs(d)) {
    const T r = d / c, den = c + d * r;
    return div_recovered(a, b, C<T>((a.real() + a.imag() * r) / den, (a.imag() - a.real() * r) / den));
  }
  const T r = c / d, den = c * r + d;
  return div_recovered(a, b, C<T>((a.real() * r + a.imag()) / den, (a.imag() * r - a.real()) / den));
}
template <class T> XJAX_HD inline bool eq(C<T> a, C<T> b) { return a.real() == b.real() && a.imag() == b.imag(); }
template <class T> XJAX_HD inline bool ne(C<T> a, C<T> b) { return !cx::eq(a, b); }
// convert_element_type with a complex side (From and To are storage types): a real value becomes
// (x, 0) through the part's type; a complex value keeps its real part when converted to a real type
// (as JAX, which warns in NumPy's way at the Python level) and is nonzero as bool (as NumPy, XLA).
template <class From, class To> XJAX_HD inline To convert(From x) {
  if constexpr (is_complex<From> && is_complex<To>) {
    typedef typename part<To>::type P;
    return To(P(x.real()), P(x.imag()));
  } else if constexpr (is_complex<To>) {
    typedef typename part<To>::type P;
    return To(scalar::convert<From, P>(x), P(0));
  } else if constexpr (is_same_v<To, bool>) {
    return x.real() != 0 || x.imag() != 0;
  } else {
    return scalar::convert<typename part<From>::type, To>(x.real());
  }
}
// max and min order lexicographically (real parts, then imaginary parts), as XLA: max(a, b) is a
// where a > b and b otherwise, so a comparison with NaN picks b.
template <class T> XJAX_HD inline bool lex_gt(C<T> a, C<T> b) {
  return a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
}
template <class T> XJAX_HD inline C<T> max(C<T> a, C<T> b) { return cx::lex_gt(a, b) ? a : b; }
template <class T> XJAX_HD inline C<T> min(C<T> a, C<T> b) { return cx::lex_gt(b, a) ? a : b; }
// clamp(lo, x, hi) is XLA's (recorded from JAX): it orders by the real parts alone, t = lo where
// re(lo) >= re(x) else x, then t where re(t) <= re(hi) else hi (a comparison with NaN is false).
template <class T> XJAX_HD inline C<T> clamp(C<T> lo, C<T> x, C<T> hi) {
  const C<T> t = lo.real() >= x.real() ? lo : x;
  return t.real() <= hi.real() ? t : hi;
}
template <class T> XJAX_HD inline T abs(C<T> z) { return libm::hypot(z.real(), z.imag()); }
// log(exp(a) + exp(b)) as JAX's complex logaddexp: m + log1p(exp(a + b - 2m)) with m = max(a, b),
// its imaginary part wrapped into [-pi, pi) by XLA's rem (fmod).
template <class T> XJAX_HD inline C<T> logaddexp(C<T> a, C<T> b);
template <class T> XJAX_HD inline C<T> sign(C<T> z) {
  const T m = cx::abs(z);
  if (m == T(0)) return C<T>(T(0), T(0));
  return C<T>(z.real() / m, z.imag() / m);
}
template <class T> XJAX_HD inline C<T> square(C<T> z) { return cx::mul(z, z); }
// z**y by repeated squaring (as the real integer_pow); a negative y gives 1 / z**|y|.
template <class T> XJAX_HD inline C<T> integer_pow(C<T> z, i64 y) {
  u64 e = y < 0 ? u64(0) - u64(y) : u64(y);
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
template <class T> XJAX_HD inline C<T> exp(C<T> z) {
  const T m = scalar::exp(z.real());
  if (z.imag() == T(0)) return C<T>(m, z.imag());  // real arguments stay real (exp(inf) = inf + 0i)
  return C<T>(m * scalar::cos(z.imag()), m * scalar::sin(z.imag()));
}
// exp where the real part is in exp's main range and the imaginary part in sin's and cos's (the
// real ops' main-range forms, scalar_ops.h): exp's bits there, for loops that check a block's range
// first. On parts (x + iy -> re + i im): GCC vectorises no loop over std::complex values. Not an op.
template <class T> XJAX_HD_ALWAYS_INLINE bool exp_main_range(T x, T y) {
  return scalar::exp_main_range(x) && scalar::sincos_main_range(y);
}
template <class T> XJAX_HD_ALWAYS_INLINE void exp_main(T x, T y, T& re, T& im) {
  const T m = scalar::exp_main(x);
  re = y == T(0) ? m : m * scalar::cos_main(y);
  im = y == T(0) ? y : m * scalar::sin_main(y);
}
template <class T> XJAX_HD inline C<T> log(C<T> z) {
  return C<T>(scalar::log(cx::abs(z)), scalar::atan2(z.imag(), z.real()));
}
template <class T> XJAX_HD inline C<T> sqrt(C<T> z) {
  const T x = z.real(), y = z.imag();
  if (x == T(0) && y == T(0)) return C<T>(T(0), y);
  if (libm::fabs(y) == infinity<T>()) return C<T>(libm::fabs(y), y);
  // t = sqrt((|x| + |z|) / 2), halved before adding so that it cannot overflow.
  const T t = libm::sqrt(libm::fabs(x) / T(2) + cx::abs(z) / T(2));
  if (x >= T(0)) return C<T>(t, y / (T(2) * t));
  return C<T>(libm::fabs(y) / (T(2) * t), y < T(0) ? -t : t);  // -0 counts as +0 (XLA; NumPy differs)
}

template <class T> XJAX_HD inline C<T> rsqrt(C<T> z) { return cx::div(C<T>(T(1), T(0)), cx::sqrt(z)); }
// exp(z) - 1 and log(1 + z), accurate near 0 (exp(x) cos y - 1 = expm1(x) cos y - 2 sin^2(y/2)).
template <class T> XJAX_HD inline C<T> expm1(C<T> z) {
  const T x = z.real(), y = z.imag();
  if (y == T(0)) return C<T>(scalar::expm1(x), y);
  const T h = scalar::sin(y / T(2));
  return C<T>(scalar::expm1(x) * scalar::cos(y) - T(2) * h * h, scalar::exp(x) * scalar::sin(y));
}
template <class T> XJAX_HD inline C<T> log1p(C<T> z) {
  const T x = z.real(), y = z.imag();
  const T m = libm::fabs(x) + libm::fabs(y);
  if (!(m < T(0.5))) return cx::log(C<T>(T(1) + x, y));  // (NaN included)
  return C<T>(T(0.5) * scalar::log1p(x * (T(2) + x) + y * y), scalar::atan2(y, T(1) + x));
}
template <class T> XJAX_HD inline C<T> exp2(C<T> z) {
  const T ln2 = T(0.6931471805599453094172321214581766);
  return cx::exp(C<T>(z.real() * ln2, z.imag() * ln2));
}
template <class T> XJAX_HD inline C<T> logistic(C<T> z) {
  return cx::div(C<T>(T(1), T(0)), cx::add(C<T>(T(1), T(0)), cx::exp(cx::neg(z))));
}
// a**b = exp(b log a); 0**b is 1 for b = 0, 0 for re(b) > 0 and im(b) = 0, NaN otherwise.
template <class T> XJAX_HD inline C<T> pow(C<T> a, C<T> b) {
  if (a.real() == T(0) && a.imag() == T(0)) {
    if (b.real() == T(0) && b.imag() == T(0)) return C<T>(T(1), T(0));
    if (b.real() > T(0) && b.imag() == T(0)) return C<T>(T(0), T(0));
    return C<T>(quiet_nan<T>(), quiet_nan<T>());
  }
  return cx::exp(cx::mul(b, cx::log(a)));
}
template <class T> XJAX_HD inline C<T> logaddexp(C<T> a, C<T> b) {
  const C<T> m = cx::max(a, b);
  const C<T> delta = cx::sub(cx::add(a, b), cx::mul(m, C<T>(T(2), T(0))));
  const C<T> out = cx::add(m, cx::log1p(cx::exp(delta)));
  const T pi = T(3.14159265358979323846), two_pi = T(6.28318530717958647692);
  T wrapped = libm::fmod(out.imag() + pi, two_pi);
  if (wrapped < T(0)) wrapped += two_pi;
  return C<T>(out.real(), wrapped - pi);
}
// atan2(y, x) as XLA defines it for complex operands: -i log((x + i y) / sqrt(x^2 + y^2)), with this
// file's own mul, div, sqrt and log (so atan2(0, 0) is NaN, as in JAX).
// The products by i and -i are complex products too, as XLA forms them (signed zeros included).
template <class T> XJAX_HD inline C<T> atan2(C<T> y, C<T> x) {
  const C<T> x_plus_iy = cx::add(x, cx::mul(C<T>(T(0), T(1)), y));
  const C<T> l = cx::log(cx::div(x_plus_iy, cx::sqrt(cx::add(cx::mul(x, x), cx::mul(y, y)))));
  return cx::mul(C<T>(T(0), T(-1)), l);
}
// The trigonometric and hyperbolic families and their inverses: the C library's (C99 Annex G:
// branch cuts and special values as NumPy's); not in generated CUDA (its generator refuses them).
#ifndef XJAX_SCALAR_CUDA
template <class T> XJAX_HD inline C<T> sin(C<T> z) { return std::sin(z); }
template <class T> XJAX_HD inline C<T> cos(C<T> z) { return std::cos(z); }
template <class T> XJAX_HD inline C<T> tan(C<T> z) { return std::tan(z); }
template <class T> XJAX_HD inline C<T> sinh(C<T> z) { return std::sinh(z); }
template <class T> XJAX_HD inline C<T> cosh(C<T> z) { return std::cosh(z); }
template <class T> XJAX_HD inline C<T> tanh(C<T> z) { return std::tanh(z); }
template <class T> XJAX_HD inline C<T> asin(C<T> z) { return std::asin(z); }
template <class T> XJAX_HD inline C<T> acos(C<T> z) { return std::acos(z); }
template <class T> XJAX_HD inline C<T> atan(C<T> z) { return std::atan(z); }
template <class T> XJAX_HD inline C<T> asinh(C<T> z) { return std::asinh(z); }
template <class T> XJAX_HD inline C<T> acosh(C<T> z) { return std::acosh(z); }
template <class T> XJAX_HD inline C<T> atanh(C<T> z) { return std::atanh(z); }

#endif  // !XJAX_SCALAR_CUDA

}  // namespace cx
XJAX_SCALAR_OPS_END

namespace xjax {
namespace scalar {
// A complex value's traits, as far as the generic ops that take one ask (select_n: is it unsigned?).
template <class T> struct traits<cx::C<T>> {
  static constexpr Kind kind = Kind::Float;
  static constexpr int bits = 2 * traits<T>::bits;
};
}  // namespace scalar
}  // namespace xjax

#endif  // XJAX_SCALAR_COMPLEX_H
