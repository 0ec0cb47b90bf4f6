// The float8 formats' conversions (ml_dtypes' float8_e4m3fn and float8_e5m2), the one definition
// the CPU kernels, constant folding and the reference interpreter share. Integer operations only,
// so no float environment (FTZ/DAZ) reaches them.
//
// e4m3fn: 4 exponent bits (bias 7), 3 mantissa bits, no infinities; 0x7f/0xff are its NaNs and its
//   largest value is 448. Rounding past it (and infinities) gives NaN, as ml_dtypes and JAX do.
// e5m2: 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like: infinities and NaNs (quieted: 0x7e).
// Both round to nearest even, directly from the source value (a float64 holds every float32,
// float16 and bfloat16 exactly, so one rounding from double serves them all).
#ifndef XJAX_SCALAR_FLOAT8_H
#define XJAX_SCALAR_FLOAT8_H

#include "core/ops/scalar_portable.h"

namespace xjax {
namespace scalar {

struct Float8Format {
  int mbits;        // mantissa bits
  int bias;         // exponent bias
  bool finite;      // no infinities (the "fn" formats): overflow and infinities become NaN
  u8 max_finite;    // the largest finite code (sign bit clear)
  u8 nan;           // the NaN a conversion gives (sign bit clear)
};
inline constexpr Float8Format kE4M3FN = {3, 7, true, 0x7e, 0x7f};
inline constexpr Float8Format kE5M2 = {2, 15, false, 0x7b, 0x7e};

// The code of x rounded to nearest even.
XJAX_HD inline u8 float8_bits(double x, Float8Format f) {
  u64 b = bit_cast<u64>(x);
  u8 sign = u8((b >> 56) & 0x80u);
  u64 a = b & 0x7fffffffffffffffull;
  if (a > 0x7ff0000000000000ull) return u8(sign | f.nan);
  u8 overflow = u8(sign | (f.finite ? f.nan : u8(f.max_finite + 1)));  // e5m2: max + 1 is infinity
  if (a == 0x7ff0000000000000ull) return overflow;
  int e = int(a >> 52) - 1023;                   // x's exponent (double subnormals: far below)
  if (a < 0x0010000000000000ull) return sign;    // a double subnormal or zero
  if (e > 16) return overflow;                   // past both formats' range
  const int emin = 1 - f.bias;                   // the smallest normal exponent
  int k = e > emin ? e : emin;                   // the exponent of the result's quantum
  int shift = 52 - e + (k - f.mbits) ;           // x / 2^(k - mbits) = m >> shift, shift >= 49
  if (shift > 62) return sign;                   // below half the smallest subnormal
  u64 m = (a & 0x000fffffffffffffull) | 0x0010000000000000ull;
  u64 q = m >> shift, rest = m & ((u64(1) << shift) - 1u), half = u64(1) << (shift - 1);
  q += (rest > half || (rest == half && (q & 1u))) ? 1u : 0u;
  // A normal result is (2^mbits + fraction) at exponent k: adding the exponent field over the
  // implicit bit gives the code, and a carry out of the mantissa lands in the exponent (as it
  // does from the largest subnormal to the smallest normal).
  u64 code = (u64(k - emin) << f.mbits) + q;
  if (code > f.max_finite) return overflow;
  return u8(sign | u8(code));
}

// The same from a float32 (what every widened op converts back), written so that the loops
// vectorise it: normal results round the mantissa with integer adds; subnormal ones add C, the
// power of two whose ulp is the smallest subnormal, so the (round-to-nearest-even) float addition
// rounds |x| to a whole number of subnormals, read from the bits of the sum. (DAZ can only turn a
// float32 subnormal into 0 there, which rounds to 0 either way.) tests/cpp/test_float8.cpp checks
// it against float8_bits(double) over float32's bit patterns.
XJAX_HD inline u8 float8_bits(float x, Float8Format f) {
  const u32 b = bit_cast<u32>(x);
  const u32 sign = (b >> 24) & 0x80u;
  const u32 a = b & 0x7fffffffu;
  const u32 nan = sign | f.nan, overflow = sign | (f.finite ? f.nan : u32(f.max_finite + 1));
  const int shift = 23 - f.mbits;
  const u32 min_normal = u32(127 + 1 - f.bias) << 23;  // 2^(1 - bias)
  const u32 r = a + ((1u << (shift - 1)) - 1u) + ((a >> shift) & 1u);  // to nearest even
  const u32 normal = (r >> shift) - (u32(127 - f.bias) << f.mbits);      // rebiased (a carry reaches it)
  const float c = bit_cast<float>(u32(127 + 1 - f.bias - f.mbits + 23) << 23);
  const u32 sub = bit_cast<u32>(bit_cast<float>(a) + c) - bit_cast<u32>(c);
  u32 code = a >= min_normal ? normal : sub;
  code = code > f.max_finite ? overflow : (sign | code);  // infinities too: past the largest code
  return u8(a > 0x7f800000u ? nan : code);
}

// The exact float value of a code (NaNs: the quiet NaN with the code's sign, as ml_dtypes gives).
XJAX_HD inline float float8_value(u8 c, Float8Format f) {
  u32 sign = u32(c & 0x80u) << 24;
  u32 a = c & 0x7fu;
  if (a > f.max_finite) {
    if (!f.finite && a == u32(f.max_finite + 1)) return bit_cast<float>(sign | 0x7f800000u);
    return bit_cast<float>(sign | 0x7fc00000u);
  }
  u32 e = a >> f.mbits, m = a & ((1u << f.mbits) - 1u);
  if (e == 0) {  // subnormal m * 2^(1 - bias - mbits): an exact float32 product of a power of two
    float scale = bit_cast<float>(u32(127 + 1 - f.bias - f.mbits) << 23);
    return bit_cast<float>(sign | bit_cast<u32>(float(int(m)) * scale));
  }
  return bit_cast<float>(sign | ((e + 127u - u32(f.bias)) << 23) | (m << (23 - f.mbits)));
}

}  // namespace scalar
}  // namespace xjax

#endif  // XJAX_SCALAR_FLOAT8_H
