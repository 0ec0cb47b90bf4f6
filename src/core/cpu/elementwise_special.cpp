// Loops of the special functions libm lacks or computes in single precision poorly: erf_inv, fma,
// and the functions of core/ops/scalar_special.h (lgamma, digamma, igamma, zeta, ...: float32
// and the 16-bit formats computed in float64 and rounded); and XLA's float32 log and log1p.
// erf_inv, log and log1p are XLA's algorithms (core/ops/scalar_xla_math.h), for JAX's bits: this
// file is compiled with -ffp-contract=off (the float64 log1p's libm log is the scalar one, XLA's).
#include "core/cpu/elementwise_impl.h"
#include "core/ops/scalar_special.h"

namespace xjax::ew {
namespace {

// Loops with fused multiply-adds are compiled for CPUs that have them (x86-64-v3: AVX2 + FMA);
// elsewhere std::fma is libm's, slower but the same bits.
#define XJAX_FMA_CLONES XJAX_WIDE_CLONES

template <class Op, class T = float>
XJAX_FMA_CLONES void unary_fma(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i]);
}

// fma(a, b, c): one rounding (explicit, so the same on every clone).
template <class T>
XJAX_FMA_CLONES void fma_loop(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  const T* c = arg<T>(in, 2);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::fma(a[i], b[i], c[i]);
}

// The special functions of scalar_special.h over float operands (the scalar definitions compute
// in double, round and flush). Plain loops: their per-element iterations do not vectorise.
#define XJAX_SPECIAL_OP(name, domain) \
  struct name##_op {                  \
    template <class... T> static auto f(T... x) { return scalar::name(x...); } \
  };
XJAX_SCALAR_SPECIAL_UNARY_OPS(XJAX_SPECIAL_OP)
XJAX_SCALAR_SPECIAL_BINARY_OPS(XJAX_SPECIAL_OP)
XJAX_SCALAR_SPECIAL_TERNARY_OPS(XJAX_SPECIAL_OP)
#undef XJAX_SPECIAL_OP

template <class T, class Op>
void ternary(const void* const* in, void* out, int64_t n) {
  const T* a = arg<T>(in, 0);
  const T* b = arg<T>(in, 1);
  const T* c = arg<T>(in, 2);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::f(a[i], b[i], c[i]);
}
template <class Op>
ElementwiseLoop special_unary(DType dt) {
  return float_loop<unary<float, float, Op>, unary<double, double, Op>, 1>(dt);
}
template <class Op>
ElementwiseLoop special_binary(DType dt) {
  return float_loop<binary<float, float, Op>, binary<double, double, Op>, 2>(dt);
}
template <class Op>
ElementwiseLoop special_ternary(DType dt) {
  return float_loop<ternary<float, Op>, ternary<double, Op>, 3>(dt);
}

}  // namespace

// float32 log and log1p are XLA's too (the functions erf_inv builds on): JAX's bits for the
// samplers built on them (exponential, gumbel, logistic, poisson, ...); float64 log1p too (float64
// log is our own, ops/scalar_math.h, in elementwise_math.cpp: vectorised, within an ulp of XLA's
// scalar libm calls).
ElementwiseLoop xla_log_loop(OpId op, DType dt) {
  switch (op) {
    case OpId::log_: return dt == DType::Float64 ? nullptr : float_loop<unary_fma<op::Log>, nullptr, 1>(dt);
    case OpId::log1p_: return float_loop<unary_fma<op::Log1p>, unary_fma<op::Log1p, double>, 1>(dt);
    default: return nullptr;
  }
}

ElementwiseLoop special_loop(OpId op, DType dt) {
  switch (op) {
    case OpId::erf_inv_: return float_loop<erf_inv_f32, unary_fma<op::ErfInv, double>, 1>(dt);
    case OpId::fma_: return float_loop<fma_loop<float>, fma_loop<double>, 3>(dt);
#define XJAX_SPECIAL_CASE(name, domain) case OpId::name##_: return special_unary<name##_op>(dt);
    XJAX_SCALAR_SPECIAL_UNARY_OPS(XJAX_SPECIAL_CASE)
#undef XJAX_SPECIAL_CASE
#define XJAX_SPECIAL_CASE(name, domain) case OpId::name##_: return special_binary<name##_op>(dt);
    XJAX_SCALAR_SPECIAL_BINARY_OPS(XJAX_SPECIAL_CASE)
#undef XJAX_SPECIAL_CASE
#define XJAX_SPECIAL_CASE(name, domain) case OpId::name##_: return special_ternary<name##_op>(dt);
    XJAX_SCALAR_SPECIAL_TERNARY_OPS(XJAX_SPECIAL_CASE)
#undef XJAX_SPECIAL_CASE
    default: return nullptr;
  }
}

}  // namespace xjax::ew
