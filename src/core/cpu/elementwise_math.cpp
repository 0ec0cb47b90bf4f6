// Loops of the float-only elementwise ops: exponentials, float64 log, trigonometric and
// hyperbolic functions, roots, rounding, is_finite, atan2 and nextafter (their values:
// core/ops/scalar_ops.h). Those computed by our own code (ops/scalar_math.h: exp, tanh, sin, the
// float32 erf, atan2, ...) and by instructions (sqrt, floor, ...) are compiled per instruction set
// and vectorise; the others call libm's scalar function once per element (never its vector
// variants, libmvec, whose last bits differ from the scalar ones: an element's value would depend
// on whether it fell in a full vector or in the loop's tail).
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

// Vectorised loops (our own code or instructions), compiled per instruction set.
template <class Op>
ElementwiseLoop vec_unary(DType dt) {
  return float_loop<unary_vec<float, float, Op>, unary_vec<double, double, Op>, 1>(dt);
}
// Main-range code over blocks that lie in the range, the whole function elsewhere (exp, logistic:
// vectorised either way; sin, cos: libm's per element beyond our range).
template <class Op>
ElementwiseLoop ranged_unary(DType dt) {
  return float_loop<unary_ranged<float, Op>, unary_ranged<double, Op>, 1>(dt);
}
// float32 computed by our own code (vectorised), float64 by libm per element.
template <class Op>
ElementwiseLoop own32_unary(DType dt) {
  return float_loop<unary_vec<float, float, Op>, unary<double, double, Op>, 1>(dt);
}
// One scalar libm call per element.
template <class Op>
ElementwiseLoop libm_unary(DType dt) {
  return float_loop<unary<float, float, Op>, unary<double, double, Op>, 1>(dt);
}

// nextafter steps in the operand's own precision: 16-bit floats get a loop over their bits.
template <class H>
void nextafter16(const void* const* in, void* out, int64_t n) {
  const H* a = arg<H>(in, 0);
  const H* b = arg<H>(in, 1);
  H* o = static_cast<H*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::nextafter(a[i], b[i]);
}

}  // namespace

ElementwiseLoop math_loop(OpId op, DType dt, const Attrs& attrs) {
  switch (op) {
    case OpId::exp_: return ranged_unary<op::ExpRanged>(dt);
    case OpId::exp2_: return vec_unary<op::Exp2>(dt);
    case OpId::log_: return dt == DType::Float64 ? unary_vec<double, double, op::Log> : nullptr;  // else xla_log_loop
    case OpId::expm1_: return vec_unary<op::Expm1>(dt);
    case OpId::tanh_: return vec_unary<op::Tanh>(dt);
    case OpId::logistic_: return ranged_unary<op::LogisticRanged>(dt);
    case OpId::sin_: return ranged_unary<op::SinRanged>(dt);
    case OpId::cos_: return ranged_unary<op::CosRanged>(dt);
    case OpId::tan_: return float_loop<unary_ranged<float, op::TanRanged>, unary<double, double, op::Tan>, 1>(dt);
    case OpId::asin_: return own32_unary<op::Asin>(dt);
    case OpId::acos_: return own32_unary<op::Acos>(dt);
    case OpId::atan_: return own32_unary<op::Atan>(dt);
    case OpId::sinh_: return own32_unary<op::Sinh>(dt);
    case OpId::cosh_: return own32_unary<op::Cosh>(dt);
    case OpId::asinh_: return libm_unary<op::Asinh>(dt);
    case OpId::acosh_: return libm_unary<op::Acosh>(dt);
    case OpId::atanh_: return libm_unary<op::Atanh>(dt);
    case OpId::sqrt_: return vec_unary<op::Sqrt>(dt);
    case OpId::rsqrt_: return vec_unary<op::Rsqrt>(dt);
    case OpId::cbrt_: return libm_unary<op::Cbrt>(dt);
    case OpId::erf_: return own32_unary<op::Erf>(dt);
    case OpId::erfc_: return own32_unary<op::Erfc>(dt);
    case OpId::floor_: return vec_unary<op::Floor>(dt);
    case OpId::ceil_: return vec_unary<op::Ceil>(dt);
    case OpId::round_:
      return attrs.get_int_or("rounding_method", 0) == 0 ? vec_unary<op::Round<0>>(dt) : vec_unary<op::Round<1>>(dt);
    case OpId::is_finite_:
      return float_loop<unary<float, bool, op::IsFinite>, unary<double, bool, op::IsFinite>, 1, bool>(dt);
    case OpId::atan2_: return float_loop<binary_vec<float, float, op::Atan2>, binary<double, double, op::Atan2>, 2>(dt);
    case OpId::nextafter_:
      switch (dt) {
        case DType::Float32: return binary<float, float, op::NextAfter>;
        case DType::Float64: return binary<double, double, op::NextAfter>;
        case DType::Float16: return nextafter16<float16>;
        case DType::BFloat16: return nextafter16<bfloat16>;
        default: return nullptr;
      }
    default: return nullptr;
  }
}

}  // namespace xjax::ew
