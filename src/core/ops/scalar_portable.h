// The portability layer under the scalar op definitions (scalar_ops.h): compiles as host C++17,
// under nvcc and under NVRTC. Under CUDA it includes nothing (NVRTC has no C++ standard library):
// the few type traits and integer types needed are written here, and math goes through the C
// functions that exist on both sides (expf/exp, log1pf/log1p, ...) behind float/double overloads.
// Also the float16/bfloat16 storage types with their round-to-nearest-even conversions, written
// once (the CPU's F16C array path gives the same bits; tests/test_scalar_ops.py checks it).
//
// Self-contained: the CUDA generator prepends this file's text, then scalar_ops.h's, to generated
// sources (scalar_source() in scalar_names.h), so nothing here may include a project header.
#ifndef XJAX_SCALAR_PORTABLE_H
#define XJAX_SCALAR_PORTABLE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define XJAX_SCALAR_CUDA 1
#define XJAX_HD __host__ __device__
#else
#include <math.h>
#include <stdint.h>
#define XJAX_HD
#endif

// For the few long functions that loops must inline (a call would lose the caller's instruction
// set: FMA in the CPU's target clones).
#if defined(XJAX_SCALAR_CUDA)
#define XJAX_HD_ALWAYS_INLINE __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define XJAX_HD_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define XJAX_HD_ALWAYS_INLINE inline
#endif

// Device code of nvcc and all of NVRTC's code (__CUDA_ARCH__ is defined in both): CUDA intrinsics.
#if defined(__CUDA_ARCH__)
#define XJAX_SCALAR_DEVICE_CODE 1
#endif

namespace xjax {
namespace scalar {

// ---- integer types: <stdint.h>'s on the host (so that int64_t loops instantiate these
// templates), the built-in types of the same widths under CUDA.
#ifdef XJAX_SCALAR_CUDA
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
#else
typedef ::int8_t i8;
typedef ::int16_t i16;
typedef ::int32_t i32;
typedef ::int64_t i64;
typedef ::uint8_t u8;
typedef ::uint16_t u16;
typedef ::uint32_t u32;
typedef ::uint64_t u64;
#endif

// A 16-byte element as bits (complex128), for kernels that only move elements: trivially default
// constructible (so it may live in __shared__ arrays), and made from an integer fill as u64s are.
struct u128 {
  u64 lo, hi;
  u128() = default;
  XJAX_HD u128(u64 v) : lo(v), hi(0) {}
};

// ---- type traits
template <class A, class B> struct same_type { static constexpr bool value = false; };
template <class A> struct same_type<A, A> { static constexpr bool value = true; };
template <class A, class B> constexpr bool is_same_v = same_type<A, B>::value;

template <bool C, class A, class B> struct pick_type { typedef A type; };
template <class A, class B> struct pick_type<false, A, B> { typedef B type; };
template <bool C, class A, class B> using conditional_t = typename pick_type<C, A, B>::type;

enum class Kind { Bool, Signed, Unsigned, Float, Half };

// Every type an elementwise op computes in; anything else fails to compile (no primary template).
template <class T> struct traits;
#define XJAX_SCALAR_TRAITS(T, K, B, S, U)   \
  template <> struct traits<T> {            \
    static constexpr Kind kind = Kind::K;   \
    static constexpr int bits = B;          \
    typedef S signed_type;                  \
    typedef U unsigned_type;                \
  };
XJAX_SCALAR_TRAITS(bool, Bool, 8, i8, u8)
XJAX_SCALAR_TRAITS(i8, Signed, 8, i8, u8)
XJAX_SCALAR_TRAITS(i16, Signed, 16, i16, u16)
XJAX_SCALAR_TRAITS(i32, Signed, 32, i32, u32)
XJAX_SCALAR_TRAITS(i64, Signed, 64, i64, u64)
XJAX_SCALAR_TRAITS(u8, Unsigned, 8, i8, u8)
XJAX_SCALAR_TRAITS(u16, Unsigned, 16, i16, u16)
XJAX_SCALAR_TRAITS(u32, Unsigned, 32, i32, u32)
XJAX_SCALAR_TRAITS(u64, Unsigned, 64, i64, u64)
XJAX_SCALAR_TRAITS(float, Float, 32, i32, u32)
XJAX_SCALAR_TRAITS(double, Float, 64, i64, u64)
#undef XJAX_SCALAR_TRAITS

template <class T> constexpr bool is_bool_v = traits<T>::kind == Kind::Bool;
template <class T> constexpr bool is_signed_v = traits<T>::kind == Kind::Signed;
template <class T> constexpr bool is_unsigned_v = traits<T>::kind == Kind::Unsigned;
template <class T> constexpr bool is_int_v = is_signed_v<T> || is_unsigned_v<T>;  // bool excluded
template <class T> constexpr bool is_float_v = traits<T>::kind == Kind::Float;
template <class T> using unsigned_t = typename traits<T>::unsigned_type;
template <class T> using signed_t = typename traits<T>::signed_type;

// The largest and smallest values of an integer type.
template <class T> XJAX_HD constexpr T int_max() {
  return is_signed_v<T> ? T(unsigned_t<T>(~unsigned_t<T>(0)) >> 1) : T(~T(0));
}
template <class T> XJAX_HD constexpr T int_min() { return is_signed_v<T> ? T(-int_max<T>() - 1) : T(0); }

// ---- bit casts between same-size types
template <class To, class From>
XJAX_HD inline To bit_cast(From x) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast: sizes differ");
#ifdef XJAX_SCALAR_DEVICE_CODE
  if constexpr (is_same_v<From, float> && sizeof(To) == 4) return To(__float_as_uint(x));
  else if constexpr (is_same_v<To, float>) return __uint_as_float(u32(x));
  else if constexpr (is_same_v<From, double>) return To(__double_as_longlong(x));
  else if constexpr (is_same_v<To, double>) return __longlong_as_double(i64(x));
  else return To(x);  // integers of one width: a conversion is the bit pattern
#else
  To to;
  __builtin_memcpy(&to, &x, sizeof(To));
  return to;
#endif
}

// ---- float constants
template <class T> XJAX_HD inline T infinity() {
  if constexpr (is_same_v<T, float>) return bit_cast<float>(u32(0x7f800000u));
  else return bit_cast<double>(u64(0x7ff0000000000000ull));
}
template <class T> XJAX_HD inline T quiet_nan() {
  if constexpr (is_same_v<T, float>) return bit_cast<float>(u32(0x7fc00000u));
  else return bit_cast<double>(u64(0x7ff8000000000000ull));
}
// The smallest normal number: magnitudes below it are subnormal.
template <class T> XJAX_HD constexpr T min_normal() {
  if constexpr (is_same_v<T, float>) return 1.17549435082228750797e-38f;
  else return 2.22507385850720138309e-308;
}

// ---- math: the C functions of the host's libm and of CUDA, as float/double overloads
namespace libm {
#define XJAX_SCALAR_LIBM1(name)                                  \
  XJAX_HD inline float name(float x) { return ::name##f(x); }    \
  XJAX_HD inline double name(double x) { return ::name(x); }
#define XJAX_SCALAR_LIBM2(name)                                                  \
  XJAX_HD inline float name(float x, float y) { return ::name##f(x, y); }        \
  XJAX_HD inline double name(double x, double y) { return ::name(x, y); }
XJAX_SCALAR_LIBM1(fabs) XJAX_SCALAR_LIBM1(sqrt) XJAX_SCALAR_LIBM1(cbrt)
XJAX_SCALAR_LIBM1(exp) XJAX_SCALAR_LIBM1(exp2) XJAX_SCALAR_LIBM1(expm1)
XJAX_SCALAR_LIBM1(log) XJAX_SCALAR_LIBM1(log1p)
XJAX_SCALAR_LIBM1(sin) XJAX_SCALAR_LIBM1(cos) XJAX_SCALAR_LIBM1(tan)
XJAX_SCALAR_LIBM1(asin) XJAX_SCALAR_LIBM1(acos) XJAX_SCALAR_LIBM1(atan)
XJAX_SCALAR_LIBM1(sinh) XJAX_SCALAR_LIBM1(cosh) XJAX_SCALAR_LIBM1(tanh)
XJAX_SCALAR_LIBM1(asinh) XJAX_SCALAR_LIBM1(acosh) XJAX_SCALAR_LIBM1(atanh)
XJAX_SCALAR_LIBM1(erf) XJAX_SCALAR_LIBM1(erfc)
XJAX_SCALAR_LIBM1(floor) XJAX_SCALAR_LIBM1(ceil) XJAX_SCALAR_LIBM1(round) XJAX_SCALAR_LIBM1(nearbyint)
XJAX_SCALAR_LIBM2(pow) XJAX_SCALAR_LIBM2(fmod) XJAX_SCALAR_LIBM2(atan2) XJAX_SCALAR_LIBM2(nextafter)
XJAX_SCALAR_LIBM2(copysign) XJAX_SCALAR_LIBM2(hypot)
#undef XJAX_SCALAR_LIBM1
#undef XJAX_SCALAR_LIBM2
XJAX_HD inline float fma(float a, float b, float c) { return ::fmaf(a, b, c); }
XJAX_HD inline double fma(double a, double b, double c) { return ::fma(a, b, c); }
}  // namespace libm

// ---- bit counting on 64 bits
XJAX_HD inline int popcount64(u64 x) {
#ifdef XJAX_SCALAR_DEVICE_CODE
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}
// Leading zeros of a nonzero x.
XJAX_HD inline int clz64(u64 x) {
#ifdef XJAX_SCALAR_DEVICE_CODE
  return __clzll(i64(x));
#else
  return __builtin_clzll(x);
#endif
}

// ---- subnormals
// A float32/float64 subnormal as the signed zero that flush-to-zero makes of it (see scalar_ops.h
// for where flushing applies).
template <class T>
XJAX_HD inline T flush_subnormal(T x) {
  return libm::fabs(x) < min_normal<T>() ? libm::copysign(T(0), x) : x;
}

// ---- float16 / bfloat16 <-> float32, round to nearest even. NaNs stay NaN with the top of their
// payload, quieted (as F16C does both ways; bfloat16 -> float32 is exact). Integer operations
// only: no float environment reaches them (FTZ/DAZ included).
XJAX_HD inline u16 float16_bits(float f) {
  u32 x = bit_cast<u32>(f);
  u32 sign = (x >> 16) & 0x8000u;
  u32 a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return u16(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a >= 0x477ff000u) return u16(sign | 0x7c00u);                        // rounds past 65504: inf
  if (a >= 0x38800000u) {                                                  // normal: rebias, round
    a += 0xc8000fffu + ((a >> 13) & 1u);  // exponent -112 (mod 2^32), + half an ulp - 1 + odd
    return u16(sign | (a >> 13));
  }
  if (a < 0x33000000u) return u16(sign);  // at most 2^-25: rounds to zero (a tie goes to even 0)
  // Subnormal result: the 24-bit significand shifted right by 14..24 bits, rounded to even; a
  // carry out reaches the exponent field, which is the right encoding of 2^-14.
  u32 shift = 126u - (a >> 23);
  u32 m = (a & 0x7fffffu) | 0x800000u;
  u32 q = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  q += (rest > half || (rest == half && (q & 1u))) ? 1u : 0u;
  return u16(sign | q);
}

XJAX_HD inline float float16_value(u16 h) {
  u32 sign = u32(h & 0x8000u) << 16;
  u32 e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31) return bit_cast<float>(sign | (m ? 0x7fc00000u : 0x7f800000u) | (m << 13));  // inf; NaN quieted
  if (e != 0) return bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return bit_cast<float>(sign);
  // Subnormal m * 2^-24: normalise the significand (integers only: DAZ cannot touch it).
  int shift = clz64(u64(m)) - 53;  // moves the top set bit of m to bit 10
  m = (m << shift) & 0x3ffu;
  return bit_cast<float>(sign | (u32(113 - shift) << 23) | (m << 13));
}

XJAX_HD inline u16 bfloat16_bits(float f) {
  u32 u = bit_cast<u32>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return u16((u >> 16) | 0x40u);  // NaN, quieted
  return u16((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

XJAX_HD inline float bfloat16_value(u16 h) { return bit_cast<float>(u32(h) << 16); }

}  // namespace scalar

// The 16-bit float storage types: bits in memory, arithmetic in float32 (scalar_ops.h).
struct float16 {
  scalar::u16 bits;
  float16() = default;
  XJAX_HD explicit float16(float f) : bits(scalar::float16_bits(f)) {}
  XJAX_HD operator float() const { return scalar::float16_value(bits); }
};
struct bfloat16 {
  scalar::u16 bits;
  bfloat16() = default;
  XJAX_HD explicit bfloat16(float f) : bits(scalar::bfloat16_bits(f)) {}
  XJAX_HD operator float() const { return scalar::bfloat16_value(bits); }
};

namespace scalar {
template <> struct traits<float16> {
  static constexpr Kind kind = Kind::Half;
  static constexpr int bits = 16;
  typedef i16 signed_type;
  typedef u16 unsigned_type;
};
template <> struct traits<bfloat16> : traits<float16> {};
template <class S> constexpr bool is_half_v = traits<S>::kind == Kind::Half;

// The type a dtype's values are computed in: float for the 16-bit formats, else the type itself.
template <class S> struct compute_of { typedef S type; };
template <> struct compute_of<float16> { typedef float type; };
template <> struct compute_of<bfloat16> { typedef float type; };
template <class S> using compute_t = typename compute_of<S>::type;

// Loading a stored value into its compute type, storing one back (16-bit formats round).
template <class S> XJAX_HD inline compute_t<S> to_compute(S s) { return compute_t<S>(s); }
template <class S> XJAX_HD inline S to_storage(compute_t<S> c) { return S(c); }
// A compute value rounded to the precision of storage type S (identity but for 16-bit formats).
template <class S> XJAX_HD inline compute_t<S> round_to(compute_t<S> c) {
  if constexpr (is_half_v<S>) return compute_t<S>(S(c));
  else return c;
}
}  // namespace scalar
}  // namespace xjax

#endif  // XJAX_SCALAR_PORTABLE_H
