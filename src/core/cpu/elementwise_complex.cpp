// Loops of the elementwise ops on complex64 / complex128 (their values: core/ops/scalar_complex.h):
// arithmetic, comparisons, parts, conj, complex(re, im), abs, sign, integer_pow, pow, the exp/log
// family, sqrt/rsqrt, the trigonometric and hyperbolic families and their inverses, and conversions to, from and between complex types. Plain loops: the fusion pass keeps complex
// values out of fused kernels.
#include "core/cpu/elementwise_impl.h"
#include "core/ops/scalar_complex.h"

namespace xjax::ew {
namespace {

namespace cx = scalar::cx;
template <class T> using C = std::complex<T>;
template <class T> constexpr bool is_complex_v = false;
template <class T> constexpr bool is_complex_v<std::complex<T>> = true;

template <class T, class R, R (*F)(C<T>)>
void unary_c(const void* const* in, void* out, int64_t n) {
  const C<T>* a = arg<C<T>>(in, 0);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = F(a[i]);
}
template <class T, class R, R (*F)(C<T>, C<T>)>
void binary_c(const void* const* in, void* out, int64_t n) {
  const C<T>* a = arg<C<T>>(in, 0);
  const C<T>* b = arg<C<T>>(in, 1);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = F(a[i], b[i]);
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

// Conversions: a real value becomes (x, 0) through the part's type; a complex one keeps its real
// part when converted to a real type (as JAX, which warns in NumPy's way at the Python level).
template <class From, class To>
void convert_c(const void* const* in, void* out, int64_t n) {
  const From* a = arg<From>(in, 0);
  To* o = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (is_complex_v<From> && is_complex_v<To>) {
      using P = typename To::value_type;
      o[i] = To(P(a[i].real()), P(a[i].imag()));
    } else if constexpr (is_complex_v<To>) {
      using P = typename To::value_type;
      o[i] = To(scalar::convert<From, P>(a[i]), P(0));
    } else if constexpr (std::is_same_v<To, bool>) {
      o[i] = a[i].real() != 0 || a[i].imag() != 0;  // nonzero, as NumPy and XLA
    } else {
      o[i] = scalar::convert<typename From::value_type, To>(a[i].real());
    }
  }
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
    case OpId::exp_: return unary_c<T, C<T>, cx::exp<T>>;
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
