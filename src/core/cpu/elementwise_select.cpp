// Loops of the comparisons (eq ne lt le gt ge -> bool), select_n and clamp (their values:
// core/ops/scalar_ops.h).
#include "core/cpu/elementwise_impl.h"

namespace xjax::ew {
namespace {

template <class Op>
ElementwiseLoop compare(DType dt) {
  return dispatch_dtype(dt, [](auto tag) -> ElementwiseLoop {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return via_float<T, bool, 2, binary_vec<float, bool, Op>>;  // exact: every value fits in float
    else return binary_vec<T, bool, Op>;  // AVX2 has the 64-bit compares and packs SSE2 lacks
  });
}

// select_n moves bits, so one loop per element size serves every dtype. Every case is loaded and
// blended (no branches: `which` is often random). Ks: 0, 1, ..., K - 1.
template <class W, class E, int... Ks>
void select_cases(const void* const* in, void* out, int64_t n) {
  const W* w = arg<W>(in, 0);
  const E* c[] = {arg<E>(in, Ks + 1)...};
  E* o = static_cast<E*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::select_n(w[i], c[Ks][i]...);
}
template <class W, class E, int... Ks>
ElementwiseLoop select_cases_loop(std::integer_sequence<int, Ks...>) {
  return select_cases<W, E, Ks...>;
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
    o[i] = scalar::select_n(w[i], x, y);
  }
}

template <class E, int... Ks>
ElementwiseLoop select_by_cases(DType which, int num_cases, std::integer_sequence<int, Ks...>) {
  ElementwiseLoop found = nullptr;
  if (which == DType::Bool) {
    if (num_cases == 1) found = select_cases<uint8_t, E, 0>;
    if (num_cases == 2) found = select_2<uint8_t, E>;
  } else if (num_cases == 2) {
    found = select_2<int32_t, E>;
  } else {
    ((num_cases == Ks + 1 ? (void)(found = select_cases_loop<int32_t, E>(std::make_integer_sequence<int, Ks + 1>{})) : (void)0),
     ...);
  }
  return found;
}

template <class T>
void clamp(const void* const* in, void* out, int64_t n) {
  const T* lo = arg<T>(in, 0);
  const T* x = arg<T>(in, 1);
  const T* hi = arg<T>(in, 2);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::clamp(lo[i], x[i], hi[i]);
}

}  // namespace

ElementwiseLoop compare_loop(OpId op, DType dt) {
  switch (op) {
    case OpId::eq_: return compare<op::Eq>(dt);
    case OpId::ne_: return compare<op::Ne>(dt);
    case OpId::lt_: return compare<op::Lt>(dt);
    case OpId::le_: return compare<op::Le>(dt);
    case OpId::gt_: return compare<op::Gt>(dt);
    case OpId::ge_: return compare<op::Ge>(dt);
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
