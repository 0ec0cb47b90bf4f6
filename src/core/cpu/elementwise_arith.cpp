// Loops of the numeric elementwise ops: neg, sign, abs, square, integer_pow, add, sub, mul, div,
// rem, pow, max, min. Integers wrap around and never trap; bool add/mul/max/min are or/and/or/and.
#include <array>
#include <utility>

#include "core/cpu/elementwise_impl.h"
#include "core/cpu/elementwise_vecmath.h"

namespace xjax::ew {
namespace {

template <class T> constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T> constexpr bool kBool = std::is_same_v<T, bool>;

struct Neg {
  template <class T> static T f(T x) {
    if constexpr (kInt<T>) return wrap_neg(x);
    else return -x;
  }
};
struct Sign {
  template <class T> static T f(T x) {
    if constexpr (std::is_unsigned_v<T>) return T(x != 0);
    else if constexpr (kInt<T>) return x > 0 ? T(1) : (x < 0 ? T(-1) : T(0));
    else return x > 0 ? T(1) : (x < 0 ? T(-1) : x * T(0));  // +-0 and NaN stay; a flushed subnormal gives +-0
  }
};
struct Abs {
  template <class T> static T f(T x) {
    if constexpr (std::is_unsigned_v<T>) return x;
    else if constexpr (kInt<T>) return x < 0 ? wrap_neg(x) : x;  // abs(INT_MIN) = INT_MIN
    else return std::fabs(x);
  }
};
struct Square {
  template <class T> static T f(T x) {
    if constexpr (kInt<T>) return wrap_mul(x, x);
    else return x * x;
  }
};
struct Add {
  template <class T> static T f(T a, T b) {
    if constexpr (kBool<T>) return a | b;
    else if constexpr (kInt<T>) return wrap_add(a, b);
    else return a + b;
  }
};
struct Sub {
  template <class T> static T f(T a, T b) {
    if constexpr (kInt<T>) return wrap_sub(a, b);
    else return a - b;
  }
};
struct Mul {
  template <class T> static T f(T a, T b) {
    if constexpr (kBool<T>) return a & b;
    else if constexpr (kInt<T>) return wrap_mul(a, b);
    else return a * b;
  }
};
// Integer division truncates; x/0 and the overflowing INT_MIN/-1 give defined values (as XLA).
struct Div {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_unsigned_v<T>) return b == 0 ? T(~T(0)) : T(a / b);
    else if constexpr (kInt<T>) return b == 0 ? T(-1) : (b == -1 ? wrap_neg(a) : T(a / b));
    else return a / b;
  }
};
struct Rem {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_unsigned_v<T>) return b == 0 ? a : T(a % b);
    else if constexpr (kInt<T>) return b == 0 ? a : (b == -1 ? T(0) : T(a % b));
    else return std::fmod(a, b);
  }
};
struct LibmPow {
  template <class T> static T f(T a, T b) { return std::pow(a, b); }
};
struct Pow {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_unsigned_v<T>) {
      return power_by_squaring(a, uint64_t(b));
    } else if constexpr (kInt<T>) {
      if (b < 0) return a == 1 ? T(1) : (a == -1 ? T((b & 1) ? -1 : 1) : T(0));
      return power_by_squaring(a, uint64_t(b));
    } else {
      return Flushed<LibmPow>::f(a, b);
    }
  }
};
// Floats: NaN if either operand is NaN. Bool: or / and.
struct Max {
  template <class T> static T f(T a, T b) {
    if constexpr (kBool<T>) return a | b;
    else if constexpr (kInt<T>) return a > b ? a : b;
    else return a != a ? a : (b > a || b != b ? b : a);
  }
};
struct Min {
  template <class T> static T f(T a, T b) {
    if constexpr (kBool<T>) return a & b;
    else if constexpr (kInt<T>) return a < b ? a : b;
    else return a != a ? a : (b < a || b != b ? b : a);
  }
};

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

// kBoolOk: whether the op accepts bool operands; kVec: float loops call vector libm.
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
struct PowConst {
  template <class T> static T f(T x) { return integer_power(x, Y); }
};

template <int64_t Y>
ElementwiseLoop pow_const_loop(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (kBool<T> || (Y < 0 && kInt<T>)) return nullptr;  // ints: no negative exponents
    else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return via_float<T, T, 1, unary<float, float, PowConst<Y>>>;
    else return unary<T, T, PowConst<Y>>;
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
    case OpId::neg_: return numeric_unary<Neg>(dt);
    case OpId::sign_: return numeric_unary<Sign>(dt);
    case OpId::abs_: return numeric_unary<Abs>(dt);
    case OpId::square_: return numeric_unary<Square>(dt);
    case OpId::integer_pow_: {
      int64_t y = attrs.get_int("y");
      if (y < -kMaxLoopPow || y > kMaxLoopPow) return nullptr;
      return kPowTable[y + kMaxLoopPow](dt);
    }
    case OpId::add_: return numeric_binary<Add, true>(dt);
    case OpId::sub_: return numeric_binary<Sub, false>(dt);
    case OpId::mul_: return numeric_binary<Mul, true>(dt);
    case OpId::div_: return numeric_binary<Div, false>(dt);
    case OpId::rem_: return numeric_binary<Rem, false>(dt);
    case OpId::pow_: return numeric_binary<Pow, false, true>(dt);
    case OpId::max_: return numeric_binary<Max, true>(dt);
    case OpId::min_: return numeric_binary<Min, true>(dt);
    default: return nullptr;
  }
}

void integer_pow_any(DType dt, const void* in, void* out, int64_t n, int64_t y) {
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    if constexpr (!kBool<T>) {
      const T* a = static_cast<const T*>(in);
      T* o = static_cast<T*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = T(integer_power(C(a[i]), y));
    }
  });
}

}  // namespace xjax::ew
