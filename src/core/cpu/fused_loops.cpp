// Tile loops the fused engine prefers over the general elementwise loops: the common arithmetic
// and comparisons on 32/64-bit types, compiled per instruction set, with forms that read a
// scalar operand once instead of a filled tile (x * 2.0 streams one tile, not two). They compute
// exactly what the general loops compute: both call the scalar definitions (scalar_ops.h).
#include "core/cpu/fused_loops.h"

#include "core/cpu/elementwise_impl.h"

#include <type_traits>

#define XJAX_FUSED_CLONES XJAX_WIDE_CLONES

namespace xjax {

namespace {

using namespace ew::op;  // the operator structs of the scalar definitions (scalar_adapters.h)

// vv: both operands tiles; sv / vs: the first / second operand is one value (element 0).
template <class T, class R, class Op>
XJAX_FUSED_CLONES void vv(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], b[i]);
}
template <class T, class R, class Op>
XJAX_FUSED_CLONES void sv(const void* const* in, void* out, int64_t n) {
  const T s = *static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(s, b[i]);
}
template <class T, class R, class Op>
XJAX_FUSED_CLONES void vs(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  const T s = *static_cast<const T*>(in[1]);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], s);
}
template <class T, class Op>
XJAX_FUSED_CLONES void v(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i]);
}

// The counter steps in U (start + U(i) would count in 64-bit lanes and narrow each vector).
template <class U>
XJAX_FUSED_CLONES void count_up_loop(U* dst, U start, int64_t n) {
  U v = start;
  for (int64_t i = 0; i < n; ++i, ++v) dst[i] = v;
}

// fma(a, b, c) with the operands in kScalars (bit k: operand k) read once (element 0).
template <class T, unsigned kScalars>
XJAX_FUSED_CLONES void fma_scalars(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  const T* c = static_cast<const T*>(in[2]);
  const T sa = a[0], sb = b[0], sc = c[0];
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i)
    o[i] = scalar::fma(kScalars & 1u ? sa : a[i], kScalars & 2u ? sb : b[i], kScalars & 4u ? sc : c[i]);
}

template <class T>
ElementwiseLoop fma_for(unsigned scalars) {
  switch (scalars) {
    case 1: return fma_scalars<T, 1>;
    case 2: return fma_scalars<T, 2>;
    case 3: return fma_scalars<T, 3>;
    case 4: return fma_scalars<T, 4>;
    case 5: return fma_scalars<T, 5>;
    case 6: return fma_scalars<T, 6>;
    default: return nullptr;  // all tiles (the general loop) or all scalars
  }
}

// o = cmp(a, b) ? c1 : c0: a comparison feeding select_n, without the bool tile between them.
// kScale 1 or 2: that times a one-value factor (operand 4), s * v or v * s (the multiply's own
// operand order), without the select's tile between them either.
template <class T, class Cmp, bool kScalarB, int kScale>
XJAX_FUSED_CLONES void select_cmp(const void* const* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  const T* c0 = static_cast<const T*>(in[2]);
  const T* c1 = static_cast<const T*>(in[3]);
  const T s = b[0];
  const T scale = kScale ? *static_cast<const T*>(in[4]) : T(0);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const T v = scalar::select_n(Cmp::f(a[i], kScalarB ? s : b[i]), c0[i], c1[i]);
    o[i] = kScale == 1 ? Mul::f(scale, v) : kScale == 2 ? Mul::f(v, scale) : v;
  }
}

template <class T, class Cmp>
ElementwiseLoop select_variant(bool scalar_b, int scale) {
  switch (scale) {
    case 0: return scalar_b ? select_cmp<T, Cmp, true, 0> : select_cmp<T, Cmp, false, 0>;
    case 1: return scalar_b ? select_cmp<T, Cmp, true, 1> : select_cmp<T, Cmp, false, 1>;
    case 2: return scalar_b ? select_cmp<T, Cmp, true, 2> : select_cmp<T, Cmp, false, 2>;
    default: return nullptr;
  }
}

template <class T>
ElementwiseLoop select_for(OpId cmp, bool scalar_b, int scale) {
  switch (cmp) {
    case OpId::eq_: return select_variant<T, Eq>(scalar_b, scale);
    case OpId::ne_: return select_variant<T, Ne>(scalar_b, scale);
    case OpId::lt_: return select_variant<T, Lt>(scalar_b, scale);
    case OpId::le_: return select_variant<T, Le>(scalar_b, scale);
    case OpId::gt_: return select_variant<T, Gt>(scalar_b, scale);
    case OpId::ge_: return select_variant<T, Ge>(scalar_b, scale);
    default: return nullptr;
  }
}

template <class T, class R, class Op>
ElementwiseLoop pick(unsigned scalars) {
  switch (scalars) {
    case 0: return vv<T, R, Op>;
    case 1: return sv<T, R, Op>;
    case 2: return vs<T, R, Op>;
    default: return nullptr;  // both scalar: the tile loop of the general kernel
  }
}

template <class T>
ElementwiseLoop typed(OpId op, unsigned scalars) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  switch (op) {
    case OpId::add_: return pick<T, T, Add>(scalars);
    case OpId::sub_: return pick<T, T, Sub>(scalars);
    case OpId::mul_: return pick<T, T, Mul>(scalars);
    case OpId::div_:  // integer division's zero tests are left to the general loop
      if constexpr (kFloat) return pick<T, T, Div>(scalars);
      return nullptr;
    case OpId::max_: return pick<T, T, Max>(scalars);
    case OpId::min_: return pick<T, T, Min>(scalars);
    case OpId::eq_: return pick<T, bool, Eq>(scalars);
    case OpId::ne_: return pick<T, bool, Ne>(scalars);
    case OpId::lt_: return pick<T, bool, Lt>(scalars);
    case OpId::le_: return pick<T, bool, Le>(scalars);
    case OpId::gt_: return pick<T, bool, Gt>(scalars);
    case OpId::ge_: return pick<T, bool, Ge>(scalars);
    case OpId::neg_: return scalars ? nullptr : v<T, Neg>;
    case OpId::square_: return scalars ? nullptr : v<T, Square>;
    default: break;
  }
  if constexpr (!kFloat) {
    switch (op) {
      case OpId::bitwise_and_: return pick<T, T, And>(scalars);
      case OpId::bitwise_or_: return pick<T, T, Or>(scalars);
      case OpId::bitwise_xor_: return pick<T, T, Xor>(scalars);
      case OpId::shift_left_: return pick<T, T, ShiftLeft>(scalars);
      case OpId::shift_right_logical_: return pick<T, T, ShiftRightLogical>(scalars);
      case OpId::shift_right_arithmetic_: return pick<T, T, ShiftRightArithmetic>(scalars);
      default: break;
    }
  }
  return nullptr;
}

}  // namespace

void count_up(uint8_t* dst, uint8_t start, int64_t n) { count_up_loop(dst, start, n); }
void count_up(uint16_t* dst, uint16_t start, int64_t n) { count_up_loop(dst, start, n); }
void count_up(uint32_t* dst, uint32_t start, int64_t n) { count_up_loop(dst, start, n); }
void count_up(uint64_t* dst, uint64_t start, int64_t n) { count_up_loop(dst, start, n); }

ElementwiseLoop fused_loop(OpId op, const std::vector<DType>& in, DType out, unsigned scalars) {
  if (op == OpId::threefry2x32_) return (scalars & 3u) == 3u ? ew::threefry_loop(in, out, scalars) : nullptr;
  if (op == OpId::fma_ && in.size() == 3 && in[0] == in[1] && in[0] == in[2] && out == in[0]) {
    if (out == DType::Float32) return fma_for<float>(scalars);
    if (out == DType::Float64) return fma_for<double>(scalars);
    return nullptr;
  }
  if (in.empty() || in.size() > 2) return nullptr;
  for (DType d : in)
    if (d != in[0]) return nullptr;
  bool to_bool = op == OpId::eq_ || op == OpId::ne_ || op == OpId::lt_ || op == OpId::le_ || op == OpId::gt_ ||
                 op == OpId::ge_;
  if (out != (to_bool ? DType::Bool : in[0])) return nullptr;
  if (int(in.size()) != op_info(op).arity) return nullptr;
  switch (in[0]) {
    case DType::Float32: return typed<float>(op, scalars);
    case DType::Float64: return typed<double>(op, scalars);
    case DType::Int32: return typed<int32_t>(op, scalars);
    case DType::Int64: return typed<int64_t>(op, scalars);
    case DType::UInt32: return typed<uint32_t>(op, scalars);
    case DType::UInt64: return typed<uint64_t>(op, scalars);
    default: return nullptr;
  }
}

ElementwiseLoop fused_select_loop(OpId cmp, DType dt, bool scalar_b, int scale) {
  switch (dt) {
    case DType::Float32: return select_for<float>(cmp, scalar_b, scale);
    case DType::Float64: return select_for<double>(cmp, scalar_b, scale);
    case DType::Int32: return scale == 0 ? select_for<int32_t>(cmp, scalar_b, 0) : nullptr;
    default: return nullptr;
  }
}

}  // namespace xjax
