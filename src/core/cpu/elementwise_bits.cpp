// Loops of the bit-level elementwise ops: bitwise and/or/xor/not (logical on bool), shifts,
// population_count and clz.
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

template <class T> constexpr unsigned kBits = unsigned(sizeof(T) * 8);

struct And {
  template <class T> static T f(T a, T b) { return T(a & b); }
};
struct Or {
  template <class T> static T f(T a, T b) { return T(a | b); }
};
struct Xor {
  template <class T> static T f(T a, T b) { return T(a ^ b); }
};
struct Not {
  template <class T> static T f(T a) { return T(~a); }
};
struct NotBool {  // on the bytes of bools (0 or 1): GCC does not vectorise loads of bool
  static uint8_t f(uint8_t a) { return uint8_t(a ^ 1u); }
};
// Shift amounts outside [0, bits) (negative ones included, seen as huge unsigned values) shift
// every bit out: 0 for the left and logical shifts, the sign bit everywhere for the arithmetic one.
struct ShiftLeft {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return U(b) >= kBits<T> ? T(0) : T(Wide<T>(a) << U(b));
  }
};
struct ShiftRightLogical {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return U(b) >= kBits<T> ? T(0) : T(U(a) >> U(b));
  }
};
// Arithmetic shifts act on the bit pattern, so unsigned operands shift in their top bit too.
struct ShiftRightArithmetic {
  template <class T> static T f(T a, T b) {
    using U = std::make_unsigned_t<T>;
    using S = std::make_signed_t<T>;
    U amount = U(b) >= kBits<T> ? U(kBits<T> - 1) : U(b);
    return T(S(a) >> amount);  // >> of a negative value is arithmetic in GCC and Clang
  }
};
struct PopCount {
  template <class T> static T f(T a) { return T(__builtin_popcountll(uint64_t(std::make_unsigned_t<T>(a)))); }
};
struct Clz {
  template <class T> static T f(T a) {
    uint64_t u = uint64_t(std::make_unsigned_t<T>(a));
    return u == 0 ? T(kBits<T>) : T(__builtin_clzll(u) - (64 - int(kBits<T>)));
  }
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
    case OpId::bitwise_and_: return int_loop<And, 2, true>(dt);
    case OpId::bitwise_or_: return int_loop<Or, 2, true>(dt);
    case OpId::bitwise_xor_: return int_loop<Xor, 2, true>(dt);
    case OpId::bitwise_not_: return dt == DType::Bool ? unary<uint8_t, uint8_t, NotBool> : int_loop<Not, 1, false>(dt);
    case OpId::shift_left_: return int_loop<ShiftLeft, 2, false>(dt);
    case OpId::shift_right_logical_: return int_loop<ShiftRightLogical, 2, false>(dt);
    case OpId::shift_right_arithmetic_: return int_loop<ShiftRightArithmetic, 2, false>(dt);
    case OpId::population_count_: return int_loop<PopCount, 1, false>(dt);
    case OpId::clz_: return int_loop<Clz, 1, false>(dt);
    default: return nullptr;
  }
}

}  // namespace xjax::ew
