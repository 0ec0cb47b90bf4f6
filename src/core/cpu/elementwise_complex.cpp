// Loops of the elementwise ops on complex64 / complex128 (their values: core/ops/scalar_complex.h):
// arithmetic, comparisons, parts, conj, complex(re, im), abs, sign, integer_pow, pow, the exp/log
// family, sqrt/rsqrt, the trigonometric and hyperbolic families and their inverses, and conversions
// to, from and between complex types. Fused kernels run these loops over their tiles too, so fused and
// unfused values have the same bits.
#include "core/cpu/elementwise_impl.h"
#include "core/ops/scalar_complex.h"

namespace xjax::ew {
namespace {

namespace cx = scalar::cx;
template <class T> using C = std::complex<T>;

// The loops run over blocks of values split into their parts (T arrays): GCC vectorises no access to
// std::complex's _Complex value, and over interleaved parts it would pair a real-part subtraction
// with an imaginary-part addition into one fused vfmaddsub (contraction off or not), so that a value
// would round differently in a vector and in the scalar tail. Split, the vector code rounds each
// operation as the scalar code does.
constexpr int64_t kBlock = 256;
template <class T>
inline void split(const T* z, T* re, T* im, int64_t m) {
  for (int64_t i = 0; i < m; ++i) re[i] = z[2 * i], im[i] = z[2 * i + 1];
}
template <class T>
inline void join(const T* re, const T* im, T* z, int64_t m) {
  for (int64_t i = 0; i < m; ++i) z[2 * i] = re[i], z[2 * i + 1] = im[i];
}

template <class T, class R, R (*F)(C<T>)>
XJAX_EW_CLONES void unary_c(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  T ar[kBlock], ai[kBlock], orr[kBlock], oi[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    split(a + 2 * s, ar, ai, m);
    if constexpr (std::is_same_v<R, C<T>>) {
      for (int64_t i = 0; i < m; ++i) {
        const C<T> r = F(cx::make(ar[i], ai[i]));
        orr[i] = r.real(), oi[i] = r.imag();
      }
      join(orr, oi, static_cast<T*>(out) + 2 * s, m);
    } else {
      R* o = static_cast<R*>(out) + s;
      for (int64_t i = 0; i < m; ++i) o[i] = F(cx::make(ar[i], ai[i]));
    }
  }
}
template <class T, class R, R (*F)(C<T>, C<T>)>
XJAX_EW_CLONES void binary_c(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  T ar[kBlock], ai[kBlock], br[kBlock], bi[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    split(a + 2 * s, ar, ai, m);
    split(b + 2 * s, br, bi, m);
    if constexpr (std::is_same_v<R, C<T>>) {
      for (int64_t i = 0; i < m; ++i) {  // (the results go where the first operand's parts were)
        const C<T> r = F(cx::make(ar[i], ai[i]), cx::make(br[i], bi[i]));
        ar[i] = r.real(), ai[i] = r.imag();
      }
      join(ar, ai, static_cast<T*>(out) + 2 * s, m);
    } else {
      R* o = static_cast<R*>(out) + s;
      for (int64_t i = 0; i < m; ++i) o[i] = F(cx::make(ar[i], ai[i]), cx::make(br[i], bi[i]));
    }
  }
}

// exp checks each block for its main range (cx::exp_main_range) and runs cx::exp_main there, which
// vectorises; cx::exp element by element elsewhere. Every element gets cx::exp's bits either way.
template <class T>
XJAX_EW_CLONES void exp_ranged(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  T re[kBlock], im[kBlock], ore[kBlock], oim[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    split(a + 2 * s, re, im, m);
    int64_t outside = 0;
    for (int64_t i = 0; i < m; ++i) outside += !cx::exp_main_range(re[i], im[i]);
    if (outside == 0) {
      for (int64_t i = 0; i < m; ++i) cx::exp_main(re[i], im[i], ore[i], oim[i]);
    } else {
      for (int64_t i = 0; i < m; ++i) {
        const C<T> r = cx::exp(cx::make(re[i], im[i]));
        ore[i] = r.real(), oim[i] = r.imag();
      }
    }
    join(ore, oim, static_cast<T*>(out) + 2 * s, m);
  }
}

template <class T>
void clamp_c(const void* const* in, void* out, int64_t n) {
  const C<T>* lo = arg<C<T>>(in, 0);
  const C<T>* x = arg<C<T>>(in, 1);
  const C<T>* hi = arg<C<T>>(in, 2);
  C<T>* o = static_cast<C<T>*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = cx::clamp(lo[i], x[i], hi[i]);
}
template <class T>
void make_complex(const void* const* in, void* out, int64_t n) {
  const T* re = arg<T>(in, 0);
  const T* im = arg<T>(in, 1);
  C<T>* o = static_cast<C<T>*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = cx::make(re[i], im[i]);
}
template <class T, int64_t kY>
void pow_const(const void* const* in, void* out, int64_t n) {
  const C<T>* a = arg<C<T>>(in, 0);
  C<T>* o = static_cast<C<T>*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = cx::integer_pow(a[i], kY);
}

template <class From, class To>
void convert_c(const void* const* in, void* out, int64_t n) {
  const From* a = arg<From>(in, 0);
  To* o = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = cx::convert<From, To>(a[i]);
}

template <class T>
ElementwiseLoop complex_op_loop(OpId op, const Attrs& attrs) {
  switch (op) {
    case OpId::add_: return binary_c<T, C<T>, cx::add<T>>;
    case OpId::sub_: return binary_c<T, C<T>, cx::sub<T>>;
    case OpId::mul_: return binary_c<T, C<T>, cx::mul<T>>;
    case OpId::div_: return binary_c<T, C<T>, cx::div<T>>;
    case OpId::eq_: return binary_c<T, bool, cx::eq<T>>;
    case OpId::ne_: return binary_c<T, bool, cx::ne<T>>;
    case OpId::max_: return binary_c<T, C<T>, cx::max<T>>;
    case OpId::min_: return binary_c<T, C<T>, cx::min<T>>;
    case OpId::clamp_: return clamp_c<T>;
    case OpId::neg_: return unary_c<T, C<T>, cx::neg<T>>;
    case OpId::conj_: return unary_c<T, C<T>, cx::conj<T>>;
    case OpId::real_: return unary_c<T, T, cx::real<T>>;
    case OpId::imag_: return unary_c<T, T, cx::imag<T>>;
    case OpId::abs_: return unary_c<T, T, cx::abs<T>>;
    case OpId::sign_: return unary_c<T, C<T>, cx::sign<T>>;
    case OpId::square_: return unary_c<T, C<T>, cx::square<T>>;
    case OpId::exp_: return exp_ranged<T>;
    case OpId::log_: return unary_c<T, C<T>, cx::log<T>>;
    case OpId::sqrt_: return unary_c<T, C<T>, cx::sqrt<T>>;
    case OpId::rsqrt_: return unary_c<T, C<T>, cx::rsqrt<T>>;
    case OpId::expm1_: return unary_c<T, C<T>, cx::expm1<T>>;
    case OpId::log1p_: return unary_c<T, C<T>, cx::log1p<T>>;
    case OpId::exp2_: return unary_c<T, C<T>, cx::exp2<T>>;
    case OpId::logistic_: return unary_c<T, C<T>, cx::logistic<T>>;
    case OpId::sin_: return unary_c<T, C<T>, cx::sin<T>>;
    case OpId::cos_: return unary_c<T, C<T>, cx::cos<T>>;
    case OpId::tan_: return unary_c<T, C<T>, cx::tan<T>>;
    case OpId::sinh_: return unary_c<T, C<T>, cx::sinh<T>>;
    case OpId::cosh_: return unary_c<T, C<T>, cx::cosh<T>>;
    case OpId::tanh_: return unary_c<T, C<T>, cx::tanh<T>>;
    case OpId::asin_: return unary_c<T, C<T>, cx::asin<T>>;
    case OpId::acos_: return unary_c<T, C<T>, cx::acos<T>>;
    case OpId::atan_: return unary_c<T, C<T>, cx::atan<T>>;
    case OpId::asinh_: return unary_c<T, C<T>, cx::asinh<T>>;
    case OpId::acosh_: return unary_c<T, C<T>, cx::acosh<T>>;
    case OpId::atanh_: return unary_c<T, C<T>, cx::atanh<T>>;
    case OpId::pow_: return binary_c<T, C<T>, cx::pow<T>>;
    case OpId::atan2_: return binary_c<T, C<T>, cx::atan2<T>>;
    case OpId::integer_pow_: {
      static constexpr ElementwiseLoop kPow[] = {pow_const<T, -4>, pow_const<T, -3>, pow_const<T, -2>,
                                                 pow_const<T, -1>, pow_const<T, 0>,  pow_const<T, 1>,
                                                 pow_const<T, 2>,  pow_const<T, 3>,  pow_const<T, 4>};
      const int64_t y = attrs.get_int("y");
      return y >= -4 && y <= 4 ? kPow[y + 4] : nullptr;  // others: the eager fallback
    }
    default: return nullptr;
  }
}

template <class From>
ElementwiseLoop convert_from(DType to) {
  if (to == DType::Complex64) return convert_c<From, C<float>>;
  if (to == DType::Complex128) return convert_c<From, C<double>>;
  return dispatch_dtype(to, [](auto tag) -> ElementwiseLoop { return convert_c<From, decltype(tag)>; });
}

}  // namespace

ElementwiseLoop complex_loop(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs) {
  if (op == OpId::convert_element_type_) {
    if (in.size() != 1) return nullptr;
    if (is_complex(in[0])) return dispatch_complex(in[0], [out](auto tag) { return convert_from<decltype(tag)>(out); });
    return dispatch_dtype(in[0], [out](auto tag) -> ElementwiseLoop {
      using From = decltype(tag);
      return out == DType::Complex64 ? convert_c<From, C<float>> : convert_c<From, C<double>>;
    });
  }
  if (op == OpId::complex_) {
    if (in.size() != 2 || in[0] != in[1]) return nullptr;
    if (in[0] == DType::Float32) return make_complex<float>;
    if (in[0] == DType::Float64) return make_complex<double>;
    return nullptr;
  }
  for (DType d : in)
    if (d != in[0] || !is_complex(d)) return nullptr;
  if (int(in.size()) != op_info(op).arity) return nullptr;
  return dispatch_complex(in[0], [&](auto tag) { return complex_op_loop<typename decltype(tag)::value_type>(op, attrs); });
}

}  // namespace xjax::ew
