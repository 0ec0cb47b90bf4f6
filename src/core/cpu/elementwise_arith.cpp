// Loops of the numeric elementwise ops: neg, sign, abs, square, integer_pow, add, sub, mul, div,
// rem, pow, max, min (their values: core/ops/scalar_ops.h).
#include <array>
#include <utility>

#include "core/cpu/elementwise_impl.h"
#include "core/ops/scalar_complex.h"

namespace xjax::ew {
namespace {

template <class T> constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> constexpr bool kBool = std::is_same_v<T, bool>;

template <class Op>
ElementwiseLoop numeric_unary(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (kBool<T>) {
      return nullptr;
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      return via_float<T, T, 1, unary<float, float, Op>>;
    } else {
      return unary<T, T, Op>;
    }
  });
}

// kBoolOk: whether the op accepts bool operands; kVec: float loops compiled per instruction set
// (pow: our own float32 pow vectorises, ops/scalar_math.h).
template <class Op, bool kBoolOk, bool kVec = false>
ElementwiseLoop numeric_binary(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (kBool<T>) {
      if constexpr (kBoolOk) return binary<bool, bool, Op>;
      else return nullptr;
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      if constexpr (kVec) return via_float<T, T, 2, binary_vec<float, float, Op>>;
      else return via_float<T, T, 2, binary<float, float, Op>>;
    } else if constexpr (kVec && std::is_floating_point_v<T>) {
      return binary_vec<T, T, Op>;
    } else {
      return binary<T, T, Op>;
    }
  });
}

// integer_pow with a compile-time exponent: the multiplication chain unrolls and vectorises.
template <int64_t Y>
ElementwiseLoop pow_const_loop(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (kBool<T> || (Y < 0 && kInt<T>)) return nullptr;  // ints: no negative exponents
    else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return via_float<T, T, 1, unary<float, float, op::IntegerPow<Y>>>;
    else return unary<T, T, op::IntegerPow<Y>>;
  });
}

// The exponent of entry i is i - kMaxLoopPow.
using PowLoopGetter = ElementwiseLoop (*)(DType);
template <int64_t... Is>
constexpr std::array<PowLoopGetter, sizeof...(Is)> pow_table(std::integer_sequence<int64_t, Is...>) {
  return {pow_const_loop<Is - kMaxLoopPow>...};
}
constexpr auto kPowTable = pow_table(std::make_integer_sequence<int64_t, 2 * kMaxLoopPow + 1>{});

}  // namespace

ElementwiseLoop arith_loop(OpId op, DType dt, const Attrs& attrs) {
  switch (op) {
    case OpId::neg_: return numeric_unary<op::Neg>(dt);
    case OpId::sign_: return numeric_unary<op::Sign>(dt);
    case OpId::abs_: return numeric_unary<op::Abs>(dt);
    case OpId::square_: return numeric_unary<op::Square>(dt);
    case OpId::integer_pow_: {
      int64_t y = attrs.get_int("y");
      if (y < -kMaxLoopPow || y > kMaxLoopPow) return nullptr;
      return kPowTable[y + kMaxLoopPow](dt);
    }
    case OpId::add_: return numeric_binary<op::Add, true>(dt);
    case OpId::sub_: return numeric_binary<op::Sub, false>(dt);
    case OpId::mul_: return numeric_binary<op::Mul, true>(dt);
    case OpId::div_: return numeric_binary<op::Div, false>(dt);
    case OpId::rem_: return numeric_binary<op::Rem, false>(dt);
    case OpId::pow_: return numeric_binary<op::Pow, false, true>(dt);
    case OpId::max_: return numeric_binary<op::Max, true>(dt);
    case OpId::min_: return numeric_binary<op::Min, true>(dt);
    default: return nullptr;
  }
}

void integer_pow_any(DType dt, const void* in, void* out, int64_t n, int64_t y) {
  if (is_complex(dt)) {
    dispatch_complex(dt, [&](auto tag) {
      using T = decltype(tag);
      const T* a = static_cast<const T*>(in);
      T* o = static_cast<T*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = scalar::cx::integer_pow(a[i], y);
    });
    return;
  }
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    if constexpr (!kBool<T>) {
      const T* a = static_cast<const T*>(in);
      T* o = static_cast<T*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = T(scalar::integer_pow(C(a[i]), y));
    }
  });
}

}  // namespace xjax::ew
