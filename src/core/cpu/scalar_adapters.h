// Operator structs over the scalar op definitions (core/ops/scalar_ops.h), the form the CPU loop
// templates take (Op::f(x...), inlined into each loop): the loops add only iteration, dispatch,
// 16-bit conversions and instruction-set clones; every value they compute comes from there.
#pragma once
#include <cstdint>

#include "core/ops/scalar_convert.h"
#include "core/ops/scalar_ops.h"
#include "core/ops/scalar_xla_math.h"

namespace xjax::ew::op {

// Always inlined: a call would also lose the loop's instruction set (target clones).
#define XJAX_EW_OP(Name, fn)                                                                   \
  struct Name {                                                                                \
    template <class... T> [[gnu::always_inline]] static auto f(T... x) { return scalar::fn(x...); } \
  };
XJAX_EW_OP(Neg, neg) XJAX_EW_OP(Sign, sign) XJAX_EW_OP(Abs, abs) XJAX_EW_OP(Square, square)
XJAX_EW_OP(Add, add) XJAX_EW_OP(Sub, sub) XJAX_EW_OP(Mul, mul) XJAX_EW_OP(Div, div) XJAX_EW_OP(Rem, rem)
XJAX_EW_OP(Pow, pow) XJAX_EW_OP(Max, max) XJAX_EW_OP(Min, min) XJAX_EW_OP(Clamp, clamp) XJAX_EW_OP(Fma, fma)
XJAX_EW_OP(Exp, exp) XJAX_EW_OP(Exp2, exp2) XJAX_EW_OP(Expm1, expm1) XJAX_EW_OP(Log, log) XJAX_EW_OP(Log1p, log1p)
XJAX_EW_OP(Tanh, tanh) XJAX_EW_OP(Logistic, logistic) XJAX_EW_OP(Sin, sin) XJAX_EW_OP(Cos, cos) XJAX_EW_OP(Tan, tan)
XJAX_EW_OP(Asin, asin) XJAX_EW_OP(Acos, acos) XJAX_EW_OP(Atan, atan) XJAX_EW_OP(Sinh, sinh) XJAX_EW_OP(Cosh, cosh)
XJAX_EW_OP(Asinh, asinh) XJAX_EW_OP(Acosh, acosh) XJAX_EW_OP(Atanh, atanh) XJAX_EW_OP(Sqrt, sqrt)
XJAX_EW_OP(Rsqrt, rsqrt) XJAX_EW_OP(Cbrt, cbrt) XJAX_EW_OP(Erf, erf) XJAX_EW_OP(Erfc, erfc)
XJAX_EW_OP(ErfInv, erf_inv) XJAX_EW_OP(Floor, floor) XJAX_EW_OP(Ceil, ceil) XJAX_EW_OP(IsFinite, is_finite)
XJAX_EW_OP(Atan2, atan2) XJAX_EW_OP(NextAfter, nextafter)
XJAX_EW_OP(Eq, eq) XJAX_EW_OP(Ne, ne) XJAX_EW_OP(Lt, lt) XJAX_EW_OP(Le, le) XJAX_EW_OP(Gt, gt) XJAX_EW_OP(Ge, ge)
XJAX_EW_OP(And, bitwise_and) XJAX_EW_OP(Or, bitwise_or) XJAX_EW_OP(Xor, bitwise_xor) XJAX_EW_OP(Not, bitwise_not)
XJAX_EW_OP(ShiftLeft, shift_left) XJAX_EW_OP(ShiftRightLogical, shift_right_logical)
XJAX_EW_OP(ShiftRightArithmetic, shift_right_arithmetic) XJAX_EW_OP(PopCount, population_count)
XJAX_EW_OP(Clz, clz)
#undef XJAX_EW_OP

// Functions with a main-range form (unary_ranged): exp and logistic (their code without the
// handling of extremes), sin, cos and tan (our code, where libm's takes over beyond the range).
#define XJAX_EW_RANGED_OP(Name, fn)                                                                  \
  struct Name##Ranged {                                                                              \
    template <class T> [[gnu::always_inline]] static T f(T x) { return scalar::fn(x); }              \
    template <class T> [[gnu::always_inline]] static T main(T x) { return scalar::fn##_main(x); }    \
    template <class T> [[gnu::always_inline]] static bool in_main_range(T x) {                      \
      return scalar::fn##_main_range(x);                                                             \
    }                                                                                                \
  };
XJAX_EW_RANGED_OP(Sin, sin) XJAX_EW_RANGED_OP(Cos, cos) XJAX_EW_RANGED_OP(Tan, tan) XJAX_EW_RANGED_OP(Exp, exp)
XJAX_EW_RANGED_OP(Logistic, logistic) XJAX_EW_RANGED_OP(ErfInv, erf_inv)
#undef XJAX_EW_RANGED_OP

// Ops with an attribute, fixed per loop so that it folds into the loop's code.
template <int kMethod>
struct Round {
  template <class T> [[gnu::always_inline]] static T f(T x) { return scalar::round(x, kMethod); }
};
template <int64_t kY>
struct IntegerPow {
  template <class T> [[gnu::always_inline]] static T f(T x) { return scalar::integer_pow(x, kY); }
};

}  // namespace xjax::ew::op
