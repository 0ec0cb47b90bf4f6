// Loops of the float-only elementwise ops backed by libm: exponentials, logarithms, trigonometric
// and hyperbolic functions, roots, rounding, is_finite, atan2 and nextafter.
#include <cstring>
#include <limits>

#include "core/cpu/elementwise_impl.h"
#include "core/cpu/elementwise_vecmath.h"

namespace xjax::ew {
namespace {

// One operator struct per op: f(x) for float and double.
#define XJAX_UNARY_OP(Name, expr) \
  struct Name {                   \
    template <class T>            \
    static T f(T x) {             \
      return expr;                \
    }                             \
  };
XJAX_UNARY_OP(Exp, std::exp(x))
XJAX_UNARY_OP(Exp2, std::exp2(x))
XJAX_UNARY_OP(Log, std::log(x))
XJAX_UNARY_OP(Log1p, std::log1p(x))
XJAX_UNARY_OP(Expm1, std::expm1(x))
XJAX_UNARY_OP(Tanh, std::tanh(x))
// 1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving an exact 0; no cancellation.
XJAX_UNARY_OP(Logistic, T(1) / (T(1) + std::exp(-x)))
XJAX_UNARY_OP(Sin, std::sin(x))
XJAX_UNARY_OP(Cos, std::cos(x))
XJAX_UNARY_OP(Tan, std::tan(x))
XJAX_UNARY_OP(Asin, std::asin(x))
XJAX_UNARY_OP(Acos, std::acos(x))
XJAX_UNARY_OP(Atan, std::atan(x))
XJAX_UNARY_OP(Sinh, std::sinh(x))
XJAX_UNARY_OP(Cosh, std::cosh(x))
XJAX_UNARY_OP(Asinh, std::asinh(x))
XJAX_UNARY_OP(Acosh, std::acosh(x))
XJAX_UNARY_OP(Atanh, std::atanh(x))
XJAX_UNARY_OP(Sqrt, std::sqrt(x))
XJAX_UNARY_OP(Rsqrt, T(1) / std::sqrt(x))
XJAX_UNARY_OP(Cbrt, std::cbrt(x))
XJAX_UNARY_OP(Erf, std::erf(x))
XJAX_UNARY_OP(Erfc, std::erfc(x))
XJAX_UNARY_OP(Floor, std::floor(x))
XJAX_UNARY_OP(Ceil, std::ceil(x))
XJAX_UNARY_OP(RoundAway, std::round(x))
XJAX_UNARY_OP(RoundEven, std::nearbyint(x))  // the default rounding mode: half to even
#undef XJAX_UNARY_OP

struct IsFinite {
  template <class T>
  static bool f(T x) { return std::fabs(x) < std::numeric_limits<T>::infinity(); }  // false for NaN
};
struct Atan2 {
  template <class T>
  static T f(T y, T x) { return std::atan2(y, x); }
};
struct NextAfter {
  template <class T>
  static T f(T x, T y) { return std::nextafter(x, y); }
};

template <class Op>
ElementwiseLoop vec_unary(DType dt) {
  using F = Flushed<Op>;
  return float_loop<unary_vec<float, float, F>, unary_vec<double, double, F>, 1>(dt);
}

// nextafter must step in the operand's own precision, so 16-bit floats get a loop on their bits
// (both formats are sign-magnitude, like float32).
template <class H>
void nextafter16(const void* const* in, void* out, int64_t n) {
  const H* a = arg<H>(in, 0);
  const H* b = arg<H>(in, 1);
  H* o = static_cast<H*>(out);
  for (int64_t i = 0; i < n; ++i) {
    float x = float(a[i]), y = float(b[i]);
    if (x != x || y != y) {
      o[i] = H(x + y);  // NaN
    } else if (x == y) {
      o[i] = b[i];
    } else if (x == 0) {
      o[i].bits = uint16_t((y < 0 ? 0x8000u : 0u) | 1u);  // the smallest subnormal towards y
    } else {
      bool away_from_zero = (y > x) == (x > 0);
      o[i].bits = uint16_t(away_from_zero ? a[i].bits + 1 : a[i].bits - 1);
    }
  }
}

}  // namespace

ElementwiseLoop math_loop(OpId op, DType dt, const Attrs& attrs) {
  switch (op) {
    case OpId::exp_: return vec_unary<Exp>(dt);
    case OpId::exp2_: return vec_unary<Exp2>(dt);
    case OpId::log_: return vec_unary<Log>(dt);
    case OpId::log1p_: return vec_unary<Log1p>(dt);
    case OpId::expm1_: return vec_unary<Expm1>(dt);
    case OpId::tanh_: return vec_unary<Tanh>(dt);
    case OpId::logistic_: return vec_unary<Logistic>(dt);
    case OpId::sin_: return vec_unary<Sin>(dt);
    case OpId::cos_: return vec_unary<Cos>(dt);
    case OpId::tan_: return vec_unary<Tan>(dt);
    case OpId::asin_: return vec_unary<Asin>(dt);
    case OpId::acos_: return vec_unary<Acos>(dt);
    case OpId::atan_: return vec_unary<Atan>(dt);
    case OpId::sinh_: return vec_unary<Sinh>(dt);
    case OpId::cosh_: return vec_unary<Cosh>(dt);
    case OpId::asinh_: return vec_unary<Asinh>(dt);
    case OpId::acosh_: return vec_unary<Acosh>(dt);
    case OpId::atanh_: return vec_unary<Atanh>(dt);
    case OpId::sqrt_: return vec_unary<Sqrt>(dt);
    case OpId::rsqrt_: return vec_unary<Rsqrt>(dt);
    case OpId::cbrt_: return vec_unary<Cbrt>(dt);
    case OpId::erf_: return vec_unary<Erf>(dt);
    case OpId::erfc_: return vec_unary<Erfc>(dt);
    case OpId::floor_: return vec_unary<Floor>(dt);
    case OpId::ceil_: return vec_unary<Ceil>(dt);
    case OpId::round_:
      return attrs.get_int_or("rounding_method", 0) == 0 ? vec_unary<RoundAway>(dt) : vec_unary<RoundEven>(dt);
    case OpId::is_finite_:
      return float_loop<unary<float, bool, IsFinite>, unary<double, bool, IsFinite>, 1, bool>(dt);
    case OpId::atan2_: {
      using F = Flushed<Atan2>;
      return float_loop<binary_vec<float, float, F>, binary_vec<double, double, F>, 2>(dt);
    }
    case OpId::nextafter_:
      switch (dt) {
        case DType::Float32: return binary<float, float, NextAfter>;
        case DType::Float64: return binary<double, double, NextAfter>;
        case DType::Float16: return nextafter16<float16>;
        case DType::BFloat16: return nextafter16<bfloat16>;
        default: return nullptr;
      }
    default: return nullptr;
  }
}

}  // namespace xjax::ew
