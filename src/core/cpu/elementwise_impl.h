// Building blocks of the elementwise loops (internal): loop templates over the operator structs
// of scalar_adapters.h (the scalar definitions), the float16/bfloat16 bridge, and the per-file
// lookups that elementwise_loop() combines.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/cpu/elementwise_loops.h"
#include "core/cpu/scalar_adapters.h"
#include "core/arch.h"
#include "core/float_env.h"

// Loops over our own transcendental functions (ops/scalar_math.h) and a few others are compiled for
// AVX-512, AVX2 and baseline x86-64 (picked at load time; see arch.h), each clone vectorised at its
// width; the functions use no fused multiply-add and their files are compiled without contraction,
// so every clone gives the same bits.
#define XJAX_EW_CLONES XJAX_WIDE_CLONES

namespace xjax::ew {

template <class T> const T* arg(const void* const* in, int i) { return static_cast<const T*>(in[i]); }

// Plain loops: Op::f maps T values to an R value. No __restrict: a fused kernel may write a
// result over one of its inputs.
template <class T, class R, class Op>
void unary(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i]);
}
template <class T, class R, class Op>
void binary(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], b[i]);
}
// The same, compiled per instruction set: for loops that vectorise (our own math functions).
template <class T, class R, class Op>
XJAX_EW_CLONES void unary_vec(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i]);
}
template <class T, class R, class Op>
XJAX_EW_CLONES void binary_vec(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  R* o = static_cast<R*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], b[i]);
}

// Loops over functions with a main-range form (Op::main, Op::in_main_range; scalar_adapters.h:
// exp and logistic without the handling of extremes, sin and cos where our code rather than libm
// computes them): per block, the main-range code over the block while counting the elements out of
// that range (one pass: a separate pass for the count measured a third slower for exp), and Op::f
// element by element over a block that had any. Every element gets Op::f's bits either way (Op::main
// is Op::f in range), whatever block it falls in. Short blocks suit functions whose values leave the
// main range often (erf_inv of uniforms, 1 in 250). `out` is the operand (written over it: the
// block's values wait in a buffer until the count is known) or apart from it.
template <class T, class Op, int64_t kBlock = 1024>
XJAX_EW_CLONES void unary_ranged(const void* const* in, void* out, int64_t n) {
  using Count = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const T* a = arg<T>(in, 0);
  T* o = static_cast<T*>(out);
  const bool in_place = static_cast<const void*>(o) == static_cast<const void*>(a);
  T buf[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    T* r = in_place ? buf : o + s;
    Count outside = 0;
    for (int64_t i = 0; i < m; ++i) {
      outside += Count(!Op::in_main_range(a[s + i]));
      r[i] = Op::main(a[s + i]);
    }
    if (outside != 0) {
      for (int64_t i = 0; i < m; ++i) o[s + i] = Op::f(a[s + i]);
    } else if (in_place) {
      std::copy(buf, buf + m, o + s);
    }
  }
}

// float16/bfloat16 <-> float32 over arrays (F16C where the CPU has it; elementwise_half.cpp).
void to_float(const float16* a, float* o, int64_t n);
void to_float(const bfloat16* a, float* o, int64_t n);
void from_float(const float* a, float16* o, int64_t n);
void from_float(const float* a, bfloat16* o, int64_t n);

// Runs a float32 loop F on 16-bit float operands: converts blocks to float32 and the result back
// (R = bool: F writes the result directly).
template <class H, class R, int Arity, ElementwiseLoop F>
void via_float(const void* const* in, void* out, int64_t n) {
  constexpr int64_t kBlock = 512;
  float buf[Arity][kBlock];
  float res[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    int64_t m = std::min(kBlock, n - s);
    const void* p[Arity];
    for (int k = 0; k < Arity; ++k) {
      to_float(arg<H>(in, k) + s, buf[k], m);
      p[k] = buf[k];
    }
    if constexpr (std::is_same_v<R, bool>) {
      F(p, static_cast<bool*>(out) + s, m);
    } else {
      F(p, res, m);
      from_float(res, static_cast<H*>(out) + s, m);
    }
  }
}

// The loop for a float-only op given its float32 and float64 loops.
template <ElementwiseLoop F32, ElementwiseLoop F64, int Arity, class R16 = void>
ElementwiseLoop float_loop(DType dt) {
  using R = std::conditional_t<std::is_void_v<R16>, float16, R16>;
  using RB = std::conditional_t<std::is_void_v<R16>, bfloat16, R16>;
  switch (dt) {
    case DType::Float32: return F32;
    case DType::Float64: return F64;
    case DType::Float16: return via_float<float16, R, Arity, F32>;
    case DType::BFloat16: return via_float<bfloat16, RB, Arity, F32>;
    default: return nullptr;
  }
}

// Per-file lookups combined by elementwise_loop(); each returns nullptr for ops it does not own.
ElementwiseLoop math_loop(OpId op, DType dt, const Attrs& attrs);     // elementwise_math.cpp
ElementwiseLoop special_loop(OpId op, DType dt);                     // elementwise_special.cpp
ElementwiseLoop xla_log_loop(OpId op, DType dt);                     // elementwise_special.cpp
ElementwiseLoop arith_loop(OpId op, DType dt, const Attrs& attrs);    // elementwise_arith.cpp
ElementwiseLoop bits_loop(OpId op, DType dt);                        // elementwise_bits.cpp
ElementwiseLoop compare_loop(OpId op, DType dt);                     // elementwise_select.cpp
ElementwiseLoop select_loop(DType which, DType cases, int num_cases);  // elementwise_select.cpp
ElementwiseLoop clamp_loop(DType dt);                                // elementwise_select.cpp
ElementwiseLoop convert_loop(DType from, DType to);                  // elementwise_convert.cpp
ElementwiseLoop float8_convert_loop(DType from, DType to);           // elementwise_float8.cpp
// Any op with a complex operand or result (elementwise_complex.cpp).
ElementwiseLoop complex_loop(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs);
// float32 erf_inv (elementwise_erf_inv.cpp): each element computes only its own formula.
void erf_inv_f32(const void* const* in, void* out, int64_t n);
// threefry2x32 (elementwise_random.cpp); `scalars` bit k: operand k is one value (element 0) for
// the fused engine's 0-d operands (the key words read once); 0 for the general loop.
ElementwiseLoop threefry_loop(const std::vector<DType>& in, DType out, unsigned scalars);

// integer_pow for exponents without a loop (|y| > kMaxLoopPow): a scalar loop with runtime y.
void integer_pow_any(DType dt, const void* in, void* out, int64_t n, int64_t y);

}  // namespace xjax::ew
