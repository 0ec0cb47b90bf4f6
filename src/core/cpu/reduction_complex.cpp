// Reduction loops of complex64 / complex128 (sum, prod, max, min), in the type-erased form of
// reduction_loops.h. Sums accumulate in complex128 (as float32 sums finish in double); products
// multiply at the dtype's precision with the plain formula (scalar_complex.h), as XLA does; max and
// min order lexicographically and give NaN + NaN i where any element has a NaN part (as JAX's).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cpu/reduction_loops.h"
#include "core/ops/scalar_complex.h"

namespace xjax {

namespace {

template <RedOp Op, typename T>
struct ComplexLoops {
  using Acc = std::conditional_t<Op == RedOp::Sum, std::complex<double>, std::complex<T>>;

  static bool has_nan(Acc z) { return std::isnan(z.real()) || std::isnan(z.imag()); }
  static Acc apply(Acc a, Acc b) {
    if constexpr (Op == RedOp::Sum) return scalar::cx::add(a, b);
    if constexpr (Op == RedOp::Prod) return scalar::cx::mul(a, b);
    if (has_nan(a) || has_nan(b)) return Acc(std::nan(""), std::nan(""));
    return Op == RedOp::Max ? scalar::cx::max(a, b) : scalar::cx::min(a, b);
  }
  static Acc identity() {
    const auto inf = std::numeric_limits<typename Acc::value_type>::infinity();
    if constexpr (Op == RedOp::Sum) return Acc(0, 0);
    if constexpr (Op == RedOp::Prod) return Acc(1, 0);
    return Op == RedOp::Max ? Acc(-inf, -inf) : Acc(inf, inf);
  }
  static Acc load(const std::complex<T>& x) { return Acc(x.real(), x.imag()); }

  static void init(void* acc, int64_t n) {
    std::fill_n(static_cast<Acc*>(acc), n, identity());
  }
  static void fold(void* acc, const void* x, int64_t n) {
    Acc& a = *static_cast<Acc*>(acc);
    const auto* xs = static_cast<const std::complex<T>*>(x);
    for (int64_t i = 0; i < n; ++i) a = apply(a, load(xs[i]));
  }
  static void fold_rows(void* acc, const void* x, int64_t n, int64_t rows, int64_t stride) {
    Acc* a = static_cast<Acc*>(acc);
    const auto* xs = static_cast<const std::complex<T>*>(x);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) a[j] = apply(a[j], load(xs[r * stride + j]));
  }
  static void fold_segments(void* acc, const void* x, int64_t count, int64_t len, int64_t stride) {
    const auto* xs = static_cast<const std::complex<T>*>(x);
    for (int64_t i = 0; i < count; ++i) fold(static_cast<Acc*>(acc) + i, xs + i * stride, len);
  }
  static void combine(void* acc, const void* other, int64_t n) {
    Acc* a = static_cast<Acc*>(acc);
    const Acc* b = static_cast<const Acc*>(other);
    for (int64_t j = 0; j < n; ++j) a[j] = apply(a[j], b[j]);
  }
  static void finish(void* out, const void* acc, int64_t n) {
    auto* o = static_cast<std::complex<T>*>(out);
    const Acc* a = static_cast<const Acc*>(acc);
    for (int64_t j = 0; j < n; ++j) o[j] = std::complex<T>(T(a[j].real()), T(a[j].imag()));
  }
  static ReduceLoops table() { return {sizeof(Acc), init, fold, fold_rows, fold_segments, combine, finish}; }
};

template <typename T>
ReduceLoops loops_of(RedOp op) {
  if (op == RedOp::Sum) return ComplexLoops<RedOp::Sum, T>::table();
  if (op == RedOp::Prod) return ComplexLoops<RedOp::Prod, T>::table();
  if (op == RedOp::Max) return ComplexLoops<RedOp::Max, T>::table();
  if (op == RedOp::Min) return ComplexLoops<RedOp::Min, T>::table();
  return ReduceLoops{};  // the shape rules let no other reduction of complex numbers through
}

}  // namespace

ReduceLoops complex_reduce_loops(RedOp op, DType dt) {
  return dt == DType::Complex64 ? loops_of<float>(op) : loops_of<double>(op);
}

}  // namespace xjax
