// Part of scalar_ops.h (the rules are there): convert_element_type and bitcast_convert_type, on
// storage types (bool, the integers, float16, bfloat16, float, double): convert<From, To>(x),
// bitcast<From, To>(x).
//
// Conversions as JAX on CPU: float -> int truncates, NaN -> 0, out-of-range values saturate;
// int -> int wraps; any -> bool is x != 0 (NaN: true; a 16-bit format tests its bits, so a
// bfloat16 subnormal is true); float64 and integers reach the 16-bit formats with one rounding
// (through float32 rounded to odd), not two.
#ifndef XJAX_SCALAR_CONVERT_H
#define XJAX_SCALAR_CONVERT_H

#ifndef XJAX_SCALAR_OPS_H
#include "core/ops/scalar_ops.h"
#endif

XJAX_SCALAR_OPS_BEGIN

// float -> integer: NaN -> 0, saturating, truncating. The bounds -2^k (or 0) and 2^k = max + 1
// are exact in C.
template <class To, class C>
XJAX_HD inline To float_to_int(C x) {
  const C lo = C(int_min<To>());
  const C hi = C(int_max<To>() / 2 + 1) * C(2);
  if (x != x) return To(0);
  if (x <= lo) return int_min<To>();
  if (x >= hi) return int_max<To>();
  return To(x);
}

// Round-to-odd float64 -> float32: truncate, then set the last bit if anything was dropped. A
// second rounding of this value to float16/bfloat16 then equals one direct rounding (float32
// keeps more than two extra bits), which a plain float64 -> float32 -> float16 would not.
XJAX_HD inline float narrow_odd(double d) {
  float f = ftz(float(ftz(d)));
  if (double(f) != d && d == d) {
    u32 u = bit_cast<u32>(f);
    if (libm::fabs(double(f)) > libm::fabs(d)) u -= 1;  // one step towards zero (f is not 0 here)
    f = bit_cast<float>(u32(u | 1u));
  }
  return f;
}

// Integer -> float32 rounded to odd (for the same reason), exact for up to 24 significant bits.
template <class I>
XJAX_HD inline float int_to_float_odd(I x) {
  bool negative = false;
  u64 m = u64(x);
  if constexpr (is_signed_v<I>) {
    negative = x < 0;
    if (negative) m = u64(0) - m;
  }
  int width = m ? 64 - clz64(m) : 0;
  float f;
  if (width > 24) {
    int shift = width - 24;
    u64 sticky = (m & ((u64(1) << shift) - 1)) != 0;
    f = float((m >> shift) | sticky) * bit_cast<float>(u32(127 + shift) << 23);  // exact: a power of 2
  } else {
    f = float(m);
  }
  return negative ? -f : f;
}

template <class From, class To>
XJAX_HD inline To convert(From x) {
  if constexpr (is_same_v<From, To>) {
    return x;
  } else if constexpr (is_bool_v<To>) {
    if constexpr (is_half_v<From>) return (x.bits & 0x7fffu) != 0;
    else return ftz(x) != From(0);
  } else if constexpr (is_bool_v<From>) {
    if constexpr (is_half_v<To>) return To(x ? 1.0f : 0.0f);
    else return To(x ? 1 : 0);
  } else if constexpr (is_int_v<To>) {
    if constexpr (is_half_v<From>) return float_to_int<To>(float(x));
    else if constexpr (is_float_v<From>) return float_to_int<To>(x);
    else return To(x);  // two's-complement wrap (defined in GCC, Clang and nvcc; C++20)
  } else if constexpr (is_half_v<To>) {
    if constexpr (is_same_v<From, double>) return To(narrow_odd(x));
    else if constexpr (is_int_v<From>) return To(int_to_float_odd(x));
    else return To(float(x));  // float32 or the other 16-bit format: exact in float
  } else if constexpr (is_half_v<From>) {  // to float32 (exact, not flushed) or float64
    if constexpr (is_same_v<To, float>) return float(x);
    else return To(ftz(float(x)));
  } else if constexpr (is_int_v<From>) {
    return To(x);  // one rounding, to nearest even
  } else {         // float32 <-> float64
    return ftz(To(ftz(x)));
  }
}

// The bits of one type read as another of the same width (bool only to bool).
template <int N> struct bits_of_size;
template <> struct bits_of_size<1> { typedef u8 type; };
template <> struct bits_of_size<2> { typedef u16 type; };
template <> struct bits_of_size<4> { typedef u32 type; };
template <> struct bits_of_size<8> { typedef u64 type; };

template <class From, class To>
XJAX_HD inline To bitcast(From x) {
  static_assert(sizeof(From) == sizeof(To), "bitcast: widths differ");
  static_assert(is_same_v<From, bool> == is_same_v<To, bool>, "bitcast: bool only to bool");
  typedef typename bits_of_size<sizeof(From)>::type U;
  U u;
  if constexpr (is_half_v<From>) u = x.bits;
  else if constexpr (is_float_v<From>) u = bit_cast<U>(x);
  else u = U(x);
  if constexpr (is_half_v<To>) {
    To r;
    r.bits = u;
    return r;
  } else if constexpr (is_float_v<To>) {
    return bit_cast<To>(u);
  } else {
    return To(u);
  }
}

XJAX_SCALAR_OPS_END

#endif  // XJAX_SCALAR_CONVERT_H
