// Loops of the bit-level elementwise ops: bitwise and/or/xor/not (logical on bool), shifts,
// population_count and clz (their values: core/ops/scalar_ops.h).
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

// bool bitwise_not on the bool's byte (0 or 1): GCC does not vectorise loads of bool.
struct NotBool {
  static uint8_t f(uint8_t a) { return uint8_t(a ^ 1u); }  // = scalar::bitwise_not<bool>
};

template <class T> constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Loops of an op over integer dtypes (and bool when kBoolOk).
template <class Op, int Arity, bool kBoolOk>
ElementwiseLoop int_loop(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (kInt<T> || (kBoolOk && std::is_same_v<T, bool>)) {
      if constexpr (Arity == 1) return unary<T, T, Op>;
      else return binary<T, T, Op>;
    } else {
      return nullptr;
    }
  });
}

}  // namespace

ElementwiseLoop bits_loop(OpId op, DType dt) {
  switch (op) {
    case OpId::bitwise_and_: return int_loop<op::And, 2, true>(dt);
    case OpId::bitwise_or_: return int_loop<op::Or, 2, true>(dt);
    case OpId::bitwise_xor_: return int_loop<op::Xor, 2, true>(dt);
    case OpId::bitwise_not_: return dt == DType::Bool ? unary<uint8_t, uint8_t, NotBool> : int_loop<op::Not, 1, false>(dt);
    case OpId::shift_left_: return int_loop<op::ShiftLeft, 2, false>(dt);
    case OpId::shift_right_logical_: return int_loop<op::ShiftRightLogical, 2, false>(dt);
    case OpId::shift_right_arithmetic_: return int_loop<op::ShiftRightArithmetic, 2, false>(dt);
    case OpId::population_count_: return int_loop<op::PopCount, 1, false>(dt);
    case OpId::clz_: return int_loop<op::Clz, 1, false>(dt);
    default: return nullptr;
  }
}

}  // namespace xjax::ew
