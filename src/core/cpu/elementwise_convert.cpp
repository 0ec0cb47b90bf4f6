// Loops of convert_element_type (all 13x13 dtype pairs) and copy.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

template <class T> constexpr bool kHalf = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
template <class T> constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// float -> int as JAX on CPU: NaN -> 0, out-of-range values saturate, the rest truncate.
template <class To, class C>
To float_to_int(C x) {
  constexpr C lo = C(std::numeric_limits<To>::min());                      // 0 or -2^k: exact
  constexpr C hi = C(std::numeric_limits<To>::max() / 2 + 1) * C(2);      // max + 1 = 2^k: exact
  if (x != x) return To(0);
  if (x <= lo) return std::numeric_limits<To>::min();
  if (x >= hi) return std::numeric_limits<To>::max();
  return To(x);
}

// Round-to-odd float64 -> float32: truncate, then set the last bit if anything was dropped. A
// second rounding of this value to float16/bfloat16 then equals one direct rounding (float32
// keeps more than two extra bits), which a plain float64 -> float32 -> float16 would not.
float narrow_odd(double d) {
  float f = float(d);
  if (double(f) != d && d == d) {
    if (std::fabs(double(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u |= 1u;
    std::memcpy(&f, &u, 4);
  }
  return f;
}

// Integer -> float32 rounded to odd (for the same reason), exact for up to 24 significant bits.
template <class I>
float int_to_float_odd(I x) {
  bool neg = false;
  uint64_t m = uint64_t(x);
  if constexpr (std::is_signed_v<I>) {
    neg = x < 0;
    if (neg) m = uint64_t(0) - m;
  }
  int width = m ? 64 - __builtin_clzll(m) : 0;
  float f;
  if (width > 24) {
    int shift = width - 24;
    uint64_t sticky = (m & ((uint64_t(1) << shift) - 1)) != 0;
    f = std::ldexp(float((m >> shift) | sticky), shift);
  } else {
    f = float(m);
  }
  return neg ? -f : f;
}

template <class From, class To>
To convert_value(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kHalf<From>) return (x.bits & 0x7fffu) != 0;  // a bfloat16 subnormal is true, as in JAX
    else return x != From(0);  // NaN -> true
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (kHalf<To>) return To(x ? 1.0f : 0.0f);
    else return To(x ? 1 : 0);
  } else if constexpr (kInt<To>) {
    if constexpr (kHalf<From>) return float_to_int<To>(float(x));
    else if constexpr (std::is_floating_point_v<From>) return float_to_int<To>(x);
    else return To(x);  // two's-complement wrap (defined in GCC/Clang, C++20)
  } else if constexpr (kHalf<To>) {
    if constexpr (std::is_same_v<From, double>) return To(narrow_odd(x));
    else if constexpr (kInt<From>) return To(int_to_float_odd(x));
    else return To(float(x));  // float32 or the other 16-bit format: exact in float
  } else {  // To is float32 or float64: one hardware rounding, to nearest even
    if constexpr (kHalf<From>) return To(float(x));
    else return To(x);
  }
}

template <class From, class To>
void convert(const void* const* in, void* out, int64_t n) {
  // bool is read as its byte (0 or 1): GCC does not vectorise loads of bool.
  using Load = std::conditional_t<std::is_same_v<From, bool>, uint8_t, From>;
  const Load* a = arg<Load>(in, 0);
  To* o = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = convert_value<Load, To>(a[i]);
}

// 16-bit floats <-> float32 go through the (F16C) array conversions.
template <class H>
void half_to_float(const void* const* in, void* out, int64_t n) {
  to_float(arg<H>(in, 0), static_cast<float*>(out), n);
}
template <class H>
void float_to_half(const void* const* in, void* out, int64_t n) {
  from_float(arg<float>(in, 0), static_cast<H*>(out), n);
}

template <size_t kSize>
void copy_bytes(const void* const* in, void* out, int64_t n) {
  if (out != in[0]) std::memmove(out, in[0], size_t(n) * kSize);
}

}  // namespace

ElementwiseLoop convert_loop(DType from, DType to) {
  if (from == to) {
    switch (itemsize(from)) {
      case 1: return copy_bytes<1>;
      case 2: return copy_bytes<2>;
      case 4: return copy_bytes<4>;
      default: return copy_bytes<8>;
    }
  }
  if (to == DType::Float32 && from == DType::Float16) return half_to_float<float16>;
  if (to == DType::Float32 && from == DType::BFloat16) return half_to_float<bfloat16>;
  if (from == DType::Float32 && to == DType::Float16) return float_to_half<float16>;
  if (from == DType::Float32 && to == DType::BFloat16) return float_to_half<bfloat16>;
  return dispatch_dtype(from, [to](auto from_tag) -> ElementwiseLoop {
    using From = decltype(from_tag);
    return dispatch_dtype(to, [](auto to_tag) -> ElementwiseLoop {
      using To = decltype(to_tag);
      return convert<From, To>;
    });
  });
}

}  // namespace xjax::ew
