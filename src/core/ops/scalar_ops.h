// The scalar semantics of every elementwise op, written once: one function template per op, named
// as the op (add, exp, shift_left, ...), over the type the op computes in. The CPU loops
// (src/core/cpu/elementwise_*.cpp, fused_loops.cpp) and the reference interpreter
// (src/core/reference/scalar.cpp) call these; the CUDA generator prepends this text to generated
// kernels and calls them by the names scalar_names.h gives. Host C++17, nvcc and NVRTC compile it
// (scalar_portable.h). Companions hold the rest: scalar_math.h (our own exp, tanh, pow, ..., which
// the host computes instead of libm's, fn::), scalar_xla_math.h (log, log1p, erf_inv) and
// scalar_convert.h (convert, bitcast); scalar_source() gives the five files as one text. Another,
// scalar_special.h, holds the special functions (lgamma, digamma, igamma, zeta, Bessel, betainc),
// portable too: its text (scalar_special_source()) goes only into the sources that call one.
//
// The rules, once:
// - Types. T is bool, an integer type, float or double. float16 and bfloat16 compute in float32
//   and round to their format after EACH op (round_to<S>; the CPU rounds each step's tile): a
//   chain of two ops rounds twice, as JAX does. Only nextafter, convert and bitcast see the
//   16-bit formats themselves.
// - Integers wrap around (two's complement, arithmetic done in unsigned) and never trap:
//   x / 0 = -1 (unsigned: all ones), x % 0 = x, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0, as XLA.
//   abs(INT_MIN) = INT_MIN. pow with a negative integer exponent: 1 for base 1, +-1 for base -1,
//   else 0.
// - bool: add = or, mul = and, max = or, min = and; bitwise ops are the logical ones.
// - Shifts by an amount outside [0, bits) (negative ones included) shift every bit out: 0 for
//   shift_left and shift_right_logical, the sign bit everywhere for shift_right_arithmetic (which
//   shifts the bit pattern, so unsigned operands shift in their top bit too).
// - NaN: max, min and clamp return NaN when any operand is NaN; comparisons with NaN are false
//   but ne. Otherwise IEEE.
// - Subnormals: float32/float64 subnormal operands read as zero and subnormal results become
//   zero (DAZ/FTZ), as JAX on CPU. Hardware arithmetic (+ - * /, comparisons, conversions) gets
//   this from the CPU's environment (float_env.h sets it around kernels), so here it is ftz(),
//   an identity unless XJAX_SCALAR_SOFT_FTZ is defined (for targets without such a mode: CUDA
//   float64; float32 compiled without -ftz=true). Functions computed by libm or by our own bit
//   code (exp, sin, pow, sqrt, log, erf_inv, ...) flush operands and result explicitly, in every
//   mode. Ops that move bits (neg, abs, copy, max, min, clamp, select_n, nextafter, bitcast)
//   return an operand's bits unflushed; max/min/clamp decide on flushed values. rem is libm's
//   fmod in that environment: a subnormal divisor reads as 0, a smaller dividend comes back as
//   it is. float16's subnormals are normal numbers in float32: they stay.
// - A NaN result's sign and payload are unspecified (compilers order a NaN's operands freely).
// - Conversions (scalar_convert.h): float -> int truncates, saturates, NaN -> 0.
// - Multiply-adds: float32 exp, log, log1p and erf_inv are XLA's algorithms, bit for bit where the
//   caller compiles without contraction (GCC -ffp-contract=off; nvcc --fmad=false); every fused
//   multiply-add they need is an explicit fma. Our own functions (scalar_math.h) fuse none: compiled
//   without contraction they give the same bits on every instruction set.
// - Transcendental functions on the host: one definition per function, whatever the position of an
//   element or the vector width: ours (scalar_math.h) or one scalar libm call, never libmvec.
#ifndef XJAX_SCALAR_OPS_H
#define XJAX_SCALAR_OPS_H

#ifndef XJAX_SCALAR_PORTABLE_H
#include "core/ops/scalar_portable.h"
#endif
#ifndef XJAX_SCALAR_MATH_H
#include "core/ops/scalar_math.h"
#endif

// The op definitions' namespace, opened and closed by this header and its companions. The two
// flushing modes are different functions (no ODR clash when both are linked into one program).
#ifdef XJAX_SCALAR_SOFT_FTZ
#define XJAX_SCALAR_OPS_BEGIN namespace xjax { namespace scalar { inline namespace soft_ftz {
#else
#define XJAX_SCALAR_OPS_BEGIN namespace xjax { namespace scalar { inline namespace hw_ftz {
#endif
#define XJAX_SCALAR_OPS_END }}}

XJAX_SCALAR_OPS_BEGIN

// DAZ/FTZ of hardware arithmetic (see the rules above).
template <class T> XJAX_HD inline T ftz(T x) {
#ifdef XJAX_SCALAR_SOFT_FTZ
  if constexpr (is_float_v<T>) return flush_subnormal(x);
#endif
  return x;
}

// ---- integer helpers: arithmetic in an unsigned type at least as wide as `unsigned` (narrower
// ones would promote to int, where overflow is undefined).
template <class T> using wide_t = conditional_t<(traits<T>::bits < 32), u32, unsigned_t<T>>;
template <class T> XJAX_HD inline T wrap_add(T a, T b) { return T(wide_t<T>(a) + wide_t<T>(b)); }
template <class T> XJAX_HD inline T wrap_sub(T a, T b) { return T(wide_t<T>(a) - wide_t<T>(b)); }
template <class T> XJAX_HD inline T wrap_mul(T a, T b) { return T(wide_t<T>(a) * wide_t<T>(b)); }
template <class T> XJAX_HD inline T wrap_neg(T a) { return T(wide_t<T>(0) - wide_t<T>(a)); }

// x**e by repeated squaring, multiplying in the same order as JAX's integer_pow lowering.
template <class T> XJAX_HD inline T times(T a, T b) {
  if constexpr (is_int_v<T>) return wrap_mul(a, b);
  else return T(a * b);
}
template <class T>
XJAX_HD inline T power_by_squaring(T x, u64 e) {
  if (e == 0) return T(1);
  T acc = x;
  bool first = true;
  for (;;) {
    if (e & 1) {
      acc = first ? x : times(acc, x);
      first = false;
    }
    e >>= 1;
    if (!e) return acc;
    x = times(x, x);
  }
}

// ---- arithmetic
template <class T> XJAX_HD inline T neg(T x) {
  if constexpr (is_int_v<T>) return wrap_neg(x);
  else return -x;
}
template <class T> XJAX_HD inline T sign(T x) {
  if constexpr (is_unsigned_v<T>) return T(x != 0);
  else if constexpr (is_int_v<T>) return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
  else {
    x = ftz(x);
    return x > 0 ? T(1) : (x < 0 ? T(-1) : x * T(0));  // +-0 and NaN stay; a subnormal gives +-0
  }
}
template <class T> XJAX_HD inline T abs(T x) {
  if constexpr (is_unsigned_v<T>) return x;
  else if constexpr (is_int_v<T>) return x < 0 ? wrap_neg(x) : x;
  else return libm::fabs(x);
}
template <class T> XJAX_HD inline T square(T x) {
  if constexpr (is_int_v<T>) return wrap_mul(x, x);
  else return ftz(T(ftz(x) * ftz(x)));
}
template <class T> XJAX_HD inline T add(T a, T b) {
  if constexpr (is_bool_v<T>) return T(a | b);
  else if constexpr (is_int_v<T>) return wrap_add(a, b);
  else return ftz(T(ftz(a) + ftz(b)));
}
template <class T> XJAX_HD inline T sub(T a, T b) {
  if constexpr (is_int_v<T>) return wrap_sub(a, b);
  else return ftz(T(ftz(a) - ftz(b)));
}
template <class T> XJAX_HD inline T mul(T a, T b) {
  if constexpr (is_bool_v<T>) return T(a & b);
  else if constexpr (is_int_v<T>) return wrap_mul(a, b);
  else return ftz(T(ftz(a) * ftz(b)));
}
// Integer division truncates.
template <class T> XJAX_HD inline T div(T a, T b) {
  if constexpr (is_unsigned_v<T>) return b == 0 ? T(~T(0)) : T(a / b);
  else if constexpr (is_int_v<T>) return b == 0 ? T(-1) : (b == T(-1) ? wrap_neg(a) : T(a / b));
  else return ftz(T(ftz(a) / ftz(b)));
}
// The remainder has the dividend's sign (C's %, fmod). Floats: libm's fmod in the kernels'
// environment, as JAX on CPU: a subnormal divisor reads as 0 (NaN), a smaller dividend comes back
// as it is, subnormal or not.
template <class T> XJAX_HD inline T rem(T a, T b) {
  if constexpr (is_unsigned_v<T>) return b == 0 ? a : T(a % b);
  else if constexpr (is_int_v<T>) return b == 0 ? a : (b == T(-1) ? T(0) : T(a % b));
  else return libm::fmod(a, ftz(b));
}
template <class T> XJAX_HD_ALWAYS_INLINE T pow(T a, T b) {
  if constexpr (is_unsigned_v<T>) {
    return power_by_squaring(a, u64(b));
  } else if constexpr (is_int_v<T>) {
    if (b < 0) return a == 1 ? T(1) : (a == T(-1) ? T((b & 1) ? -1 : 1) : T(0));
    return power_by_squaring(a, u64(b));
  } else {
    return flush_subnormal(fn::pow(flush_subnormal(a), flush_subnormal(b)));
  }
}
// integer_pow(x, y): y is the op's attribute; a negative y (floats only) gives 1 / x**|y|.
template <class T> XJAX_HD inline T integer_pow(T x, i64 y) {
  if constexpr (is_float_v<T>) {
    x = ftz(x);
    if (y < 0) return ftz(T(T(1) / power_by_squaring(x, u64(0) - u64(y))));
    return ftz(power_by_squaring(x, u64(y)));
  } else {
    return power_by_squaring(x, u64(y));
  }
}
template <class T> XJAX_HD inline T max(T a, T b) {
  if constexpr (is_bool_v<T>) return T(a | b);
  else if constexpr (is_int_v<T>) return a > b ? a : b;
  else {
    T fa = ftz(a), fb = ftz(b);
    return fa != fa ? a : (fb > fa || fb != fb ? b : a);
  }
}
template <class T> XJAX_HD inline T min(T a, T b) {
  if constexpr (is_bool_v<T>) return T(a & b);
  else if constexpr (is_int_v<T>) return a < b ? a : b;
  else {
    T fa = ftz(a), fb = ftz(b);
    return fa != fa ? a : (fb < fa || fb != fb ? b : a);
  }
}
// clamp(lo, x, hi) = min(max(x, lo), hi).
template <class T> XJAX_HD inline T clamp(T lo, T x, T hi) { return min(max(x, lo), hi); }
// a * b + c rounded once (16-bit formats: once in float32, then to the format).
template <class T> XJAX_HD inline T fma(T a, T b, T c) { return ftz(libm::fma(ftz(a), ftz(b), ftz(c))); }
template <class T> XJAX_HD inline T copy(T x) { return x; }

// ---- float functions computed by libm or by our own code (fn::, scalar_math.h), flushed
// explicitly. Always inlined: a call would lose the loop's instruction set (and vectorisation).
#define XJAX_SCALAR_FLUSHED(name, expr)                        \
  template <class T> XJAX_HD_ALWAYS_INLINE T name(T x) {       \
    static_assert(is_float_v<T>, #name " takes float types");  \
    x = flush_subnormal(x);                                    \
    return flush_subnormal(T(expr));                           \
  }
XJAX_SCALAR_FLUSHED(exp, fn::exp(x))
XJAX_SCALAR_FLUSHED(exp2, fn::exp2(x))
XJAX_SCALAR_FLUSHED(expm1, fn::expm1(x))
XJAX_SCALAR_FLUSHED(tanh, fn::tanh(x))
// 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving an exact 0; no cancellation.
XJAX_SCALAR_FLUSHED(logistic, T(1) / (T(1) + fn::exp(-x)))
// exp and logistic over their main ranges (scalar_math.h's exp_main), for loops that check a
// block's range first: there they equal exp and logistic bit for bit, and flushing operands or
// results changes nothing (results are normal; a subnormal operand gives what zero gives). Not ops.
template <class T> XJAX_HD_ALWAYS_INLINE T exp_main(T x) { return fn::exp_main(x); }
template <class T> XJAX_HD_ALWAYS_INLINE bool exp_main_range(T x) { return fn::exp_main_range(x); }
template <class T> XJAX_HD_ALWAYS_INLINE T logistic_main(T x) { return T(1) / (T(1) + fn::exp_main(-x)); }
template <class T> XJAX_HD_ALWAYS_INLINE bool logistic_main_range(T x) {
  return fn::exp_main_range(x) && fn::exp_main_range(-x);  // [-87, 87]: e^-x in range, result normal
}
// sin and cos: our own code over a main range, libm's beyond it (scalar_math.h); sin_main and
// cos_main are the same functions for operands in that range (main_range), for loops that check a
// block's range first and then run code that vectorises. Not ops of their own.
XJAX_SCALAR_FLUSHED(sin, fn::sin(x))
XJAX_SCALAR_FLUSHED(cos, fn::cos(x))
XJAX_SCALAR_FLUSHED(sin_main, fn::sin_main(x))
XJAX_SCALAR_FLUSHED(cos_main, fn::cos_main(x))
XJAX_SCALAR_FLUSHED(tan_main, fn::tan_main(x))  // float32 only
template <class T> XJAX_HD_ALWAYS_INLINE bool sincos_main_range(T x) { return fn::sincos_main_range(x); }
template <class T> XJAX_HD_ALWAYS_INLINE bool sin_main_range(T x) { return fn::sincos_main_range(x); }
template <class T> XJAX_HD_ALWAYS_INLINE bool cos_main_range(T x) { return fn::sincos_main_range(x); }
template <class T> XJAX_HD_ALWAYS_INLINE bool tan_main_range(T x) { return fn::sincos_main_range(x); }
XJAX_SCALAR_FLUSHED(tan, fn::tan(x))
XJAX_SCALAR_FLUSHED(asin, fn::asin(x))
XJAX_SCALAR_FLUSHED(acos, fn::acos(x))
XJAX_SCALAR_FLUSHED(atan, fn::atan(x))
XJAX_SCALAR_FLUSHED(sinh, fn::sinh(x))
XJAX_SCALAR_FLUSHED(cosh, fn::cosh(x))
XJAX_SCALAR_FLUSHED(asinh, libm::asinh(x))
XJAX_SCALAR_FLUSHED(acosh, libm::acosh(x))
XJAX_SCALAR_FLUSHED(atanh, libm::atanh(x))
XJAX_SCALAR_FLUSHED(sqrt, libm::sqrt(x))
XJAX_SCALAR_FLUSHED(rsqrt, T(1) / libm::sqrt(x))
XJAX_SCALAR_FLUSHED(cbrt, libm::cbrt(x))
XJAX_SCALAR_FLUSHED(erf, fn::erf(x))
XJAX_SCALAR_FLUSHED(erfc, fn::erfc(x))
XJAX_SCALAR_FLUSHED(floor, libm::floor(x))
XJAX_SCALAR_FLUSHED(ceil, libm::ceil(x))
#undef XJAX_SCALAR_FLUSHED

// round(x, method): method 0 rounds half away from zero, 1 half to even (nearbyint in the default
// rounding mode), as lax.round's rounding_method.
template <class T> XJAX_HD inline T round(T x, int method) {
  x = flush_subnormal(x);
  return flush_subnormal(method == 0 ? libm::round(x) : libm::nearbyint(x));
}
template <class T> XJAX_HD inline bool is_finite(T x) { return libm::fabs(x) < infinity<T>(); }  // NaN: false
template <class T> XJAX_HD_ALWAYS_INLINE T atan2(T y, T x) {
  return flush_subnormal(fn::atan2(flush_subnormal(y), flush_subnormal(x)));
}
// log(exp(a) + exp(b)) without overflow, the larger one factored out: cumlogsumexp's step (not an op
// of its own; it computes in the scan's environment, unflushed, as the CPU scan always has).
template <class T> XJAX_HD inline T logaddexp(T a, T b) {
  if (a != a || b != b) return a + b;
  if (a == b) return a + T(0.69314718055994530942);  // also two equal infinities
  const T m = a > b ? a : b, lo = a > b ? b : a;
  return m + libm::log1p(libm::exp(lo - m));
}
// The next representable value after x towards y, in the operand's own format.
template <class T> XJAX_HD inline T nextafter(T x, T y) { return libm::nextafter(x, y); }
// The 16-bit formats step on their bits (both are sign-magnitude, like float32).
template <class H> XJAX_HD inline H nextafter_half(H a, H b) {
  float x = float(a), y = float(b);
  H r;
  if (x != x || y != y) return H(x + y);  // NaN
  if (x == y) return b;
  if (x == 0) r.bits = u16((y < 0 ? 0x8000u : 0u) | 1u);  // the smallest subnormal towards y
  else r.bits = u16(((y > x) == (x > 0)) ? a.bits + 1 : a.bits - 1);  // away from zero: +1
  return r;
}
XJAX_HD inline float16 nextafter(float16 x, float16 y) { return nextafter_half(x, y); }
XJAX_HD inline bfloat16 nextafter(bfloat16 x, bfloat16 y) { return nextafter_half(x, y); }

// ---- comparisons (bool results)
template <class T> XJAX_HD inline bool eq(T a, T b) { return ftz(a) == ftz(b); }
template <class T> XJAX_HD inline bool ne(T a, T b) { return ftz(a) != ftz(b); }
template <class T> XJAX_HD inline bool lt(T a, T b) { return ftz(a) < ftz(b); }
template <class T> XJAX_HD inline bool le(T a, T b) { return ftz(a) <= ftz(b); }
template <class T> XJAX_HD inline bool gt(T a, T b) { return ftz(a) > ftz(b); }
template <class T> XJAX_HD inline bool ge(T a, T b) { return ftz(a) >= ftz(b); }

// ---- bits (bool: logical)
template <class T> XJAX_HD inline T bitwise_and(T a, T b) { return T(a & b); }
template <class T> XJAX_HD inline T bitwise_or(T a, T b) { return T(a | b); }
template <class T> XJAX_HD inline T bitwise_xor(T a, T b) { return T(a ^ b); }
template <class T> XJAX_HD inline T bitwise_not(T x) {
  if constexpr (is_bool_v<T>) return !x;
  else return T(~x);
}
template <class T> XJAX_HD inline T shift_left(T a, T b) {
  return unsigned_t<T>(b) >= unsigned_t<T>(traits<T>::bits) ? T(0) : T(wide_t<T>(a) << unsigned_t<T>(b));
}
template <class T> XJAX_HD inline T shift_right_logical(T a, T b) {
  typedef unsigned_t<T> U;
  return U(b) >= U(traits<T>::bits) ? T(0) : T(U(a) >> U(b));
}
template <class T> XJAX_HD inline T shift_right_arithmetic(T a, T b) {
  typedef unsigned_t<T> U;
  U amount = U(b) >= U(traits<T>::bits) ? U(traits<T>::bits - 1) : U(b);
  return T(signed_t<T>(a) >> amount);  // >> of a negative value is arithmetic (GCC, Clang, nvcc)
}
template <class T> XJAX_HD inline T population_count(T x) { return T(popcount64(u64(unsigned_t<T>(x)))); }
template <class T> XJAX_HD inline T clz(T x) {
  u64 u = u64(unsigned_t<T>(x));
  return u == 0 ? T(traits<T>::bits) : T(clz64(u) - (64 - traits<T>::bits));
}

// ---- selection
// select_n(which, c0, c1, ...): case `which` (bool or int32), the nearest case when outside
// [0, n): a chain of "which >= k" tests, which compiles to blends. (Chains of three or more on
// unsigned integers, the CPU's element-size loops, are written as masks: GCC vectorises those
// best, and a plain select for two cases.)
template <class T> XJAX_HD inline T select_if(bool c, T a, T b, bool masks) {
  if constexpr (is_unsigned_v<T>) {
    if (!masks) return c ? a : b;
    T mask = T(T(0) - T(c));
    return T((a & mask) | (b & T(~mask)));
  } else {
    return c ? a : b;
  }
}
template <class T> XJAX_HD inline T select_chain(i32, int, bool, T v) { return v; }
template <class T, class... Ts> XJAX_HD inline T select_chain(i32 which, int k, bool masks, T v, T next, Ts... rest) {
  return select_chain(which, k + 1, masks, select_if(which >= k, next, v, masks), rest...);
}
template <class W, class T, class... Ts> XJAX_HD inline T select_n(W which, T c0, Ts... cases) {
  if constexpr (is_bool_v<W>) return select_if(which, cases..., c0, false);  // one more case
  else return select_chain(i32(which), 1, sizeof...(Ts) > 1, c0, cases...);
}
// The same rule as an index, for callers with a runtime number of cases.
XJAX_HD inline int select_case(i64 which, int num_cases) {
  return which < 0 ? 0 : (which >= num_cases ? num_cases - 1 : int(which));
}

// ---- random bits: threefry2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011), the Threefry-2x32 block cipher with 20 rounds as JAX uses it. Encrypts the counter
// (x0, x1) under the key (k0, k1). threefry2x32_lanes encrypts N counters under one key in place
// (x0[j], x1[j] become the result words), round by round across the N lanes: a loop over blocks of
// many lanes keeps several vectors' rounds in flight, where one vector's chain of dependent
// rounds would leave the CPU waiting (1.3x to 1.4x faster on AVX2 and AVX-512).
XJAX_HD inline u32 rotl32(u32 v, unsigned r) { return (v << r) | (v >> (32u - r)); }
#define XJAX_THREEFRY_ROUND(r)     \
  for (int j = 0; j < N; ++j) {    \
    x0[j] += x1[j];                \
    x1[j] = rotl32(x1[j], r);      \
    x1[j] ^= x0[j];                \
  }
#define XJAX_THREEFRY_INJECT(a, b) \
  for (int j = 0; j < N; ++j) {    \
    x0[j] += a;                    \
    x1[j] += b;                    \
  }
template <int N>
XJAX_HD_ALWAYS_INLINE void threefry2x32_lanes(u32 k0, u32 k1, u32 (&x0)[N], u32 (&x1)[N]) {
  const u32 k2 = k0 ^ k1 ^ 0x1BD11BDAu;  // the key schedule's parity word
  XJAX_THREEFRY_INJECT(k0, k1)
  XJAX_THREEFRY_ROUND(13) XJAX_THREEFRY_ROUND(15) XJAX_THREEFRY_ROUND(26) XJAX_THREEFRY_ROUND(6)
  XJAX_THREEFRY_INJECT(k1, k2 + 1u)
  XJAX_THREEFRY_ROUND(17) XJAX_THREEFRY_ROUND(29) XJAX_THREEFRY_ROUND(16) XJAX_THREEFRY_ROUND(24)
  XJAX_THREEFRY_INJECT(k2, k0 + 2u)
  XJAX_THREEFRY_ROUND(13) XJAX_THREEFRY_ROUND(15) XJAX_THREEFRY_ROUND(26) XJAX_THREEFRY_ROUND(6)
  XJAX_THREEFRY_INJECT(k0, k1 + 3u)
  XJAX_THREEFRY_ROUND(17) XJAX_THREEFRY_ROUND(29) XJAX_THREEFRY_ROUND(16) XJAX_THREEFRY_ROUND(24)
  XJAX_THREEFRY_INJECT(k1, k2 + 4u)
  XJAX_THREEFRY_ROUND(13) XJAX_THREEFRY_ROUND(15) XJAX_THREEFRY_ROUND(26) XJAX_THREEFRY_ROUND(6)
  XJAX_THREEFRY_INJECT(k2, k0 + 5u)
}
#undef XJAX_THREEFRY_ROUND
#undef XJAX_THREEFRY_INJECT
// The op's value: both result words packed as (y0 << 32) | y1.
XJAX_HD inline u64 threefry2x32(u32 k0, u32 k1, u32 x0, u32 x1) {
  u32 y0[1] = {x0}, y1[1] = {x1};
  threefry2x32_lanes(k0, k1, y0, y1);
  return (u64(y0[0]) << 32) | y1[0];
}


// ---- the catalogue of the ops above that are one call on compute values, with the types each
// accepts (its domain): X(name, Domain). The reference interpreter and the generator-facing
// table (scalar_names.h) are built from these lists; log, log1p and erf_inv are in
// scalar_xla_math.h, the special functions have lists of their own in scalar_special.h. Ops of other forms: integer_pow(x, y), round(x, method), is_finite (bool
// result), select_n, nextafter on the 16-bit formats, convert, bitcast and threefry2x32.
enum class Domain { Any, Numeric, Float, Int, IntOrBool };
template <Domain D, class T>
constexpr bool in_domain = D == Domain::Any || (D == Domain::Numeric && !is_bool_v<T>) ||
                           (D == Domain::Float && is_float_v<T>) || (D == Domain::Int && is_int_v<T>) ||
                           (D == Domain::IntOrBool && (is_int_v<T> || is_bool_v<T>));

#define XJAX_SCALAR_UNARY_OPS(X)                                                                  \
  X(neg, Numeric) X(sign, Numeric) X(abs, Numeric) X(square, Numeric) X(copy, Any)              \
  X(exp, Float) X(exp2, Float) X(expm1, Float) X(log, Float) X(log1p, Float) X(tanh, Float)      \
  X(logistic, Float) X(sin, Float) X(cos, Float) X(tan, Float) X(asin, Float) X(acos, Float)     \
  X(atan, Float) X(sinh, Float) X(cosh, Float) X(asinh, Float) X(acosh, Float) X(atanh, Float)  \
  X(sqrt, Float) X(rsqrt, Float) X(cbrt, Float) X(erf, Float) X(erfc, Float) X(erf_inv, Float)  \
  X(floor, Float) X(ceil, Float) X(bitwise_not, IntOrBool) X(population_count, Int) X(clz, Int)
#define XJAX_SCALAR_BINARY_OPS(X)                                                                 \
  X(add, Any) X(sub, Numeric) X(mul, Any) X(div, Numeric) X(rem, Numeric) X(pow, Numeric)        \
  X(max, Any) X(min, Any) X(atan2, Float) X(nextafter, Float) X(bitwise_and, IntOrBool)          \
  X(bitwise_or, IntOrBool) X(bitwise_xor, IntOrBool) X(shift_left, Int)                          \
  X(shift_right_logical, Int) X(shift_right_arithmetic, Int)
#define XJAX_SCALAR_COMPARE_OPS(X) X(eq, Any) X(ne, Any) X(lt, Any) X(le, Any) X(gt, Any) X(ge, Any)
#define XJAX_SCALAR_TERNARY_OPS(X) X(clamp, Any) X(fma, Float)

XJAX_SCALAR_OPS_END

#endif  // XJAX_SCALAR_OPS_H
