// Loops of the comparisons (eq ne lt le gt ge -> bool), select_n and clamp.
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

// IEEE comparisons: every comparison with NaN is false except ne.
#define XJAX_COMPARE_OP(Name, op) \
  struct Name {                   \
    template <class T>            \
    static bool f(T a, T b) {     \
      return a op b;              \
    }                             \
  };
XJAX_COMPARE_OP(Eq, ==)
XJAX_COMPARE_OP(Ne, !=)
XJAX_COMPARE_OP(Lt, <)
XJAX_COMPARE_OP(Le, <=)
XJAX_COMPARE_OP(Gt, >)
XJAX_COMPARE_OP(Ge, >=)
#undef XJAX_COMPARE_OP

template <class Op>
ElementwiseLoop compare(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return via_float<T, bool, 2, binary_vec<float, bool, Op>>;  // exact: every value fits in float
    else return binary_vec<T, bool, Op>;  // AVX2 has the 64-bit compares and packs SSE2 lacks
  });
}

// select_n moves bits, so one loop per element size serves every dtype. A `which` outside
// [0, K) picks the nearest case: the chain of ">= k" tests needs no separate clamp. Every case is
// loaded and blended with a mask (no branches: `which` is often random).
template <class W, class E, int K>
void select_n(const void* const* in, void* out, int64_t n) {
  const W* w = arg<W>(in, 0);
  const E* c[K];
  for (int k = 0; k < K; ++k) c[k] = arg<E>(in, k + 1);
  E* o = static_cast<E*>(out);
  for (int64_t i = 0; i < n; ++i) {
    int32_t which = int32_t(w[i]);
    E v = c[0][i];
    for (int k = 1; k < K; ++k) {
      E mask = E(E(0) - E(which >= k));
      v = E((c[k][i] & mask) | (v & E(~mask)));
    }
    o[i] = v;
  }
}

// The common two-way select (jnp.where), compiled per instruction set: bool -> mask widening is
// slow in baseline SSE2. A bool `which` is read as uint8_t: GCC does not vectorise loads of bool.
template <class W, class E>
XJAX_EW_CLONES void select_2(const void* const* in, void* out, int64_t n) {
  const W* w = arg<W>(in, 0);
  const E* a = arg<E>(in, 1);
  const E* b = arg<E>(in, 2);
  E* o = static_cast<E*>(out);
  for (int64_t i = 0; i < n; ++i) {
    E x = a[i], y = b[i];  // both loaded: a blend, not a branch
    o[i] = w[i] >= 1 ? y : x;
  }
}

template <class E, int... Ks>
ElementwiseLoop select_by_cases(DType which, int num_cases, std::integer_sequence<int, Ks...>) {
  ElementwiseLoop found = nullptr;
  if (which == DType::Bool) {
    if (num_cases == 1) found = select_n<uint8_t, E, 1>;
    if (num_cases == 2) found = select_2<uint8_t, E>;
  } else if (num_cases == 2) {
    found = select_2<int32_t, E>;
  } else {
    ((num_cases == Ks + 1 ? (void)(found = select_n<int32_t, E, Ks + 1>) : (void)0), ...);
  }
  return found;
}

// clamp(lo, x, hi) = min(max(x, lo), hi), with NaN propagated from any operand (floats).
template <class T>
T clamp_value(T lo, T x, T hi) {
  if constexpr (std::is_same_v<T, bool>) {
    return (x | lo) & hi;
  } else if constexpr (std::is_integral_v<T>) {
    T m = x > lo ? x : lo;
    return m < hi ? m : hi;
  } else {
    T m = x != x ? x : (lo > x || lo != lo ? lo : x);
    return m != m ? m : (hi < m || hi != hi ? hi : m);
  }
}

template <class T>
void clamp(const void* const* in, void* out, int64_t n) {
  const T* lo = arg<T>(in, 0);
  const T* x = arg<T>(in, 1);
  const T* hi = arg<T>(in, 2);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = clamp_value(lo[i], x[i], hi[i]);
}

}  // namespace

ElementwiseLoop compare_loop(OpId op, DType dt) {
  switch (op) {
    case OpId::eq_: return compare<Eq>(dt);
    case OpId::ne_: return compare<Ne>(dt);
    case OpId::lt_: return compare<Lt>(dt);
    case OpId::le_: return compare<Le>(dt);
    case OpId::gt_: return compare<Gt>(dt);
    case OpId::ge_: return compare<Ge>(dt);
    default: return nullptr;
  }
}

ElementwiseLoop select_loop(DType which, DType cases, int num_cases) {
  if (which != DType::Bool && which != DType::Int32) return nullptr;
  if (num_cases < 1 || num_cases > kMaxSelectCases) return nullptr;
  auto ks = std::make_integer_sequence<int, kMaxSelectCases>{};
  switch (itemsize(cases)) {
    case 1: return select_by_cases<uint8_t>(which, num_cases, ks);
    case 2: return select_by_cases<uint16_t>(which, num_cases, ks);
    case 4: return select_by_cases<uint32_t>(which, num_cases, ks);
    case 8: return select_by_cases<uint64_t>(which, num_cases, ks);
    default: return nullptr;
  }
}

ElementwiseLoop clamp_loop(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return via_float<T, T, 3, clamp<float>>;
    else return clamp<T>;
  });
}

}  // namespace xjax::ew
