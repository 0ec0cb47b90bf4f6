// Instantiates every scalar op (src/core/ops/scalar_ops.h and companions) for every type it
// accepts, as CUDA kernels (nvcc -x cu) or host functions (a C++ compiler). Compiled by
// tests/test_scalar_ops.py after the headers' text (scalar_source(), then scalar_special_source()
// for the special functions), with no include path: it
// proves the text is self-contained and that host C++, nvcc and NVRTC accept it.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define XJAX_ENTRY extern "C" __global__
#else
#define XJAX_ENTRY
#endif

namespace s = xjax::scalar;
using xjax::bfloat16;
using xjax::float16;

// Ops every dtype takes (bool included).
template <class T>
XJAX_HD void any_ops(const T* a, T* o, bool* c, const s::i32* w) {
  o[0] = s::add(a[0], a[1]);
  o[1] = s::mul(a[0], a[1]);
  o[2] = s::max(a[0], a[1]);
  o[3] = s::min(a[0], a[1]);
  o[4] = s::clamp(a[0], a[1], a[2]);
  o[5] = s::copy(a[0]);
  o[6] = s::select_n(c[0], a[0], a[1]);
  o[7] = s::select_n(w[0], a[0], a[1], a[2]);
  o[8] = s::select_n(w[1], a[0]);
  o[9] = a[s::select_case(w[2], 3)];
  c[1] = s::eq(a[0], a[1]);
  c[2] = s::ne(a[0], a[1]);
  c[3] = s::lt(a[0], a[1]);
  c[4] = s::le(a[0], a[1]);
  c[5] = s::gt(a[0], a[1]);
  c[6] = s::ge(a[0], a[1]);
}

// Numeric (not bool).
template <class T>
XJAX_HD void numeric_ops(const T* a, T* o) {
  o[0] = s::neg(a[0]);
  o[1] = s::sign(a[0]);
  o[2] = s::abs(a[0]);
  o[3] = s::square(a[0]);
  o[4] = s::sub(a[0], a[1]);
  o[5] = s::div(a[0], a[1]);
  o[6] = s::rem(a[0], a[1]);
  o[7] = s::pow(a[0], a[1]);
  o[8] = s::integer_pow(a[0], 3);
  o[9] = s::integer_pow(a[0], 0);
}

template <class T>
XJAX_HD void bit_ops(const T* a, T* o) {
  o[0] = s::bitwise_and(a[0], a[1]);
  o[1] = s::bitwise_or(a[0], a[1]);
  o[2] = s::bitwise_xor(a[0], a[1]);
  o[3] = s::bitwise_not(a[0]);
}

template <class T>
XJAX_HD void int_ops(const T* a, T* o) {
  o[0] = s::shift_left(a[0], a[1]);
  o[1] = s::shift_right_logical(a[0], a[1]);
  o[2] = s::shift_right_arithmetic(a[0], a[1]);
  o[3] = s::population_count(a[0]);
  o[4] = s::clz(a[0]);
}

template <class T>
XJAX_HD void float_ops(const T* a, T* o, bool* c) {
  T x = a[0], y = a[1];
  int k = 0;
  o[k++] = s::exp(x); o[k++] = s::exp2(x); o[k++] = s::expm1(x); o[k++] = s::log(x); o[k++] = s::log1p(x);
  o[k++] = s::tanh(x); o[k++] = s::logistic(x); o[k++] = s::sin(x); o[k++] = s::cos(x); o[k++] = s::tan(x);
  o[k++] = s::asin(x); o[k++] = s::acos(x); o[k++] = s::atan(x); o[k++] = s::sinh(x); o[k++] = s::cosh(x);
  o[k++] = s::asinh(x); o[k++] = s::acosh(x); o[k++] = s::atanh(x); o[k++] = s::sqrt(x); o[k++] = s::rsqrt(x);
  o[k++] = s::cbrt(x); o[k++] = s::erf(x); o[k++] = s::erfc(x); o[k++] = s::erf_inv(x); o[k++] = s::floor(x);
  o[k++] = s::ceil(x); o[k++] = s::round(x, 0); o[k++] = s::round(x, 1); o[k++] = s::atan2(x, y);
  o[k++] = s::nextafter(x, y); o[k++] = s::fma(x, y, a[2]); o[k++] = s::integer_pow(x, -2);
  o[k++] = s::lgamma(x); o[k++] = s::digamma(x); o[k++] = s::bessel_i0e(x); o[k++] = s::bessel_i1e(x);
  o[k++] = s::igamma(x, y); o[k++] = s::igammac(x, y); o[k++] = s::igamma_grad_a(x, y);
  o[k++] = s::polygamma(x, y); o[k++] = s::zeta(x, y); o[k++] = s::regularized_incomplete_beta(x, y, a[2]);
  c[0] = s::is_finite(x);
}

// The 16-bit formats: arithmetic in float, rounded after each op; nextafter on their own bits.
template <class H>
XJAX_HD void half_ops(const H* a, H* o) {
  float x = s::to_compute(a[0]), y = s::to_compute(a[1]);
  o[0] = s::to_storage<H>(s::round_to<H>(s::add(x, y)));
  o[1] = s::nextafter(a[0], a[1]);
}

#define XJAX_TYPES(X)                                                                                   \
  X(bool) X(s::i8) X(s::i16) X(s::i32) X(s::i64) X(s::u8) X(s::u16) X(s::u32) X(s::u64) X(float16) \
  X(bfloat16) X(float) X(double)

// convert from one type to all 13.
template <class From>
XJAX_HD void convert_from(const From* a, char* out) {
  int k = 0;
#define XJAX_CONVERT_TO(To)                                  \
  {                                                          \
    To r = s::convert<From, To>(a[0]);                       \
    for (unsigned b = 0; b < sizeof(To); ++b) out[k++] = reinterpret_cast<const char*>(&r)[b]; \
  }
  XJAX_TYPES(XJAX_CONVERT_TO)
#undef XJAX_CONVERT_TO
}

#define XJAX_CONVERT_KERNEL(T) \
  XJAX_ENTRY void convert_##T(const T* a, char* out) { convert_from<T>(a, out); }
namespace k {
using i8 = s::i8; using i16 = s::i16; using i32 = s::i32; using i64 = s::i64;
using u8 = s::u8; using u16 = s::u16; using u32 = s::u32; using u64 = s::u64;
}  // namespace k
using namespace k;

#define XJAX_KERNELS_ANY(T) \
  XJAX_ENTRY void any_##T(const T* a, T* o, bool* c, const i32* w) { any_ops<T>(a, o, c, w); }
#define XJAX_KERNELS_INT(T)                                                   \
  XJAX_ENTRY void numeric_##T(const T* a, T* o) { numeric_ops<T>(a, o); }   \
  XJAX_ENTRY void bits_##T(const T* a, T* o) { bit_ops<T>(a, o); }          \
  XJAX_ENTRY void int_##T(const T* a, T* o) { int_ops<T>(a, o); }
#define XJAX_KERNELS_FLOAT(T)                                                 \
  XJAX_ENTRY void numeric_##T(const T* a, T* o) { numeric_ops<T>(a, o); }   \
  XJAX_ENTRY void float_##T(const T* a, T* o, bool* c) { float_ops<T>(a, o, c); }

XJAX_KERNELS_ANY(bool) XJAX_KERNELS_ANY(i8) XJAX_KERNELS_ANY(i16) XJAX_KERNELS_ANY(i32) XJAX_KERNELS_ANY(i64)
XJAX_KERNELS_ANY(u8) XJAX_KERNELS_ANY(u16) XJAX_KERNELS_ANY(u32) XJAX_KERNELS_ANY(u64)
XJAX_KERNELS_ANY(float) XJAX_KERNELS_ANY(double)
XJAX_ENTRY void bits_bool(const bool* a, bool* o) { bit_ops<bool>(a, o); }
XJAX_KERNELS_INT(i8) XJAX_KERNELS_INT(i16) XJAX_KERNELS_INT(i32) XJAX_KERNELS_INT(i64)
XJAX_KERNELS_INT(u8) XJAX_KERNELS_INT(u16) XJAX_KERNELS_INT(u32) XJAX_KERNELS_INT(u64)
XJAX_KERNELS_FLOAT(float) XJAX_KERNELS_FLOAT(double)
XJAX_ENTRY void half_float16(const float16* a, float16* o) { half_ops<float16>(a, o); }
XJAX_ENTRY void half_bfloat16(const bfloat16* a, bfloat16* o) { half_ops<bfloat16>(a, o); }

XJAX_CONVERT_KERNEL(bool) XJAX_CONVERT_KERNEL(i8) XJAX_CONVERT_KERNEL(i16) XJAX_CONVERT_KERNEL(i32)
XJAX_CONVERT_KERNEL(i64) XJAX_CONVERT_KERNEL(u8) XJAX_CONVERT_KERNEL(u16) XJAX_CONVERT_KERNEL(u32)
XJAX_CONVERT_KERNEL(u64) XJAX_CONVERT_KERNEL(float16) XJAX_CONVERT_KERNEL(bfloat16) XJAX_CONVERT_KERNEL(float)
XJAX_CONVERT_KERNEL(double)

// bitcast between the types of each width.
XJAX_ENTRY void bitcasts(const void* in, char* out) {
  const char* p = static_cast<const char*>(in);
  bool b = s::bitcast<bool, bool>(*reinterpret_cast<const bool*>(p));
  out[0] = char(b);
  u16 h = s::bitcast<float16, u16>(s::bitcast<bfloat16, float16>(s::bitcast<i16, bfloat16>(s::i16(p[1]))));
  u32 f = s::bitcast<float, u32>(s::bitcast<i32, float>(s::i32(p[2])));
  u64 d = s::bitcast<double, u64>(s::bitcast<i64, double>(s::i64(p[3])));
  u8 c = s::bitcast<s::i8, u8>(s::i8(p[4]));
  out[1] = char(h + f + d + c);
}

XJAX_ENTRY void threefry(const u32* k, s::u64* o) { o[0] = s::threefry2x32(k[0], k[1], k[2], k[3]); }
