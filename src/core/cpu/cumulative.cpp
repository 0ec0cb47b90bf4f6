// CPU kernels of the scans along one axis (cumsum, cumprod, cummax, cummin, cumlogsumexp), forward
// or reversed. Lines are independent: they are spread over threads; each line is sequential.
// Complex sums, products and logsumexps carry the dtype itself and step with scalar_complex.h's add,
// mul and logaddexp.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/cpu/reduction_kernels.h"
#include "core/ops/scalar_complex.h"
#include "core/ops/scalar_ops.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

enum class CumOp { Sum, Prod, Max, Min, LogSumExp };

constexpr int64_t kColBlock = 4096;  // carries kept at once when the axis is not innermost
constexpr int64_t kTaskElements = 1 << 15;

using scalar::cx::is_complex_v;

// The carry's type: float for 16-bit floats, bytes for bool, unsigned for integer sums and
// products (they wrap), the type itself otherwise (complex numbers included).
template <CumOp Op, typename T>
using CumCompute = std::conditional_t<
    std::is_same<T, bool>::value || is_complex_v<T>, std::conditional_t<is_complex_v<T>, T, uint8_t>,
    std::conditional_t<Op == CumOp::Sum || Op == CumOp::Prod, red::Arith<typename ComputeOf<T>::type>,
                       typename ComputeOf<T>::type>>;

template <CumOp Op, typename A> inline A step(A acc, A v) {
  if constexpr (is_complex_v<A>) {
    static_assert(Op != CumOp::Max && Op != CumOp::Min, "complex cummax/cummin are refused");
    if constexpr (Op == CumOp::Sum) return scalar::cx::add(acc, v);
    else if constexpr (Op == CumOp::Prod) return scalar::cx::mul(acc, v);
    else return scalar::cx::logaddexp(acc, v);
  } else if constexpr (Op == CumOp::Sum) {
    return A(acc + v);
  } else if constexpr (Op == CumOp::Prod) {
    return A(acc * v);
  } else if constexpr (Op == CumOp::Max) {
    return red::max_nan(acc, v);
  } else if constexpr (Op == CumOp::Min) {
    return red::min_nan(acc, v);
  } else {
    return scalar::logaddexp(acc, v);
  }
}

// A line's first result. JAX folds a complex logsumexp window from its identity -inf + 0i, which
// wraps the first imaginary part into [-pi, pi); every other scan starts from the element itself.
template <CumOp Op, typename A> inline A first(A v) {
  if constexpr (is_complex_v<A> && Op == CumOp::LogSumExp)
    return scalar::cx::logaddexp(A(-std::numeric_limits<typename A::value_type>::infinity(), 0), v);
  else
    return v;
}

// The axis is innermost: each line is contiguous. A line is one long dependency chain; for
// logsumexp (exp and log1p per step) kLineGroup lines are scanned side by side so that the
// processor overlaps their steps. Cheap steps are memory-bound: one line at a time keeps the
// number of streams small.
template <CumOp Op, typename T>
void scan_lines(const T* x, T* y, int64_t lines, int64_t n, bool reverse) {
  using A = CumCompute<Op, T>;
  constexpr int64_t kLineGroup = Op == CumOp::LogSumExp ? 8 : 1;
  int64_t groups = (lines + kLineGroup - 1) / kLineGroup;
  parallel_for(groups, std::max<int64_t>(1, kTaskElements / (n * kLineGroup)), [&](int64_t b, int64_t e) {
    A acc[kLineGroup] = {};
    for (int64_t grp = b; grp < e; ++grp) {
      int64_t l0 = grp * kLineGroup, g = std::min(kLineGroup, lines - l0);
      const T* xs = x + l0 * n;
      T* ys = y + l0 * n;
      int64_t i = reverse ? n - 1 : 0, d = reverse ? -1 : 1;
      for (int64_t k = 0; k < g; ++k) {
        acc[k] = first<Op>(A(xs[k * n + i]));
        ys[k * n + i] = T(acc[k]);
      }
      for (int64_t s = 1; s < n; ++s) {
        i += d;
        for (int64_t k = 0; k < g; ++k) {
          acc[k] = step<Op>(acc[k], A(xs[k * n + i]));
          ys[k * n + i] = T(acc[k]);
        }
      }
    }
  });
}

// The axis is not innermost: carry a block of columns down (or up) the rows, vectorised across them.
template <CumOp Op, typename T>
void scan_columns(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  using A = CumCompute<Op, T>;
  int64_t n_blocks = (inner + kColBlock - 1) / kColBlock;
  int64_t task = n * std::min(inner, kColBlock);
  parallel_for(outer * n_blocks, std::max<int64_t>(1, kTaskElements / task), [&](int64_t b, int64_t e) {
    A carry[kColBlock];
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / n_blocks, col = (t % n_blocks) * kColBlock;
      int64_t w = std::min(kColBlock, inner - col);
      int64_t base = o * n * inner + col;
      for (int64_t k = 0; k < n; ++k) {
        int64_t off = base + (reverse ? n - 1 - k : k) * inner;
        const T* xs = x + off;
        T* ys = y + off;
        if (k == 0) {
          for (int64_t j = 0; j < w; ++j) carry[j] = first<Op>(A(xs[j]));
        } else {
          for (int64_t j = 0; j < w; ++j) carry[j] = step<Op>(carry[j], A(xs[j]));
        }
        for (int64_t j = 0; j < w; ++j) ys[j] = T(carry[j]);
      }
    }
  });
}

template <CumOp Op>
void scan_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& a = in[0];
  if (a.size() == 0) return;
  int64_t axis = attrs.get_int("axis");
  bool reverse = attrs.get_int_or("reverse", 0) != 0;
  int64_t outer = 1, inner = 1, n = a.shape[axis];
  for (int64_t i = 0; i < axis; ++i) outer *= a.shape[i];
  for (size_t i = axis + 1; i < a.shape.size(); ++i) inner *= a.shape[i];
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    constexpr bool ok = is_complex_v<T> ? Op != CumOp::Max && Op != CumOp::Min
                                        : Op != CumOp::LogSumExp || std::is_floating_point<C>::value;
    if constexpr (ok) {
      if (inner == 1)
        scan_lines<Op>(a.as<T>(), out[0].as<T>(), outer, n, reverse);
      else
        scan_columns<Op>(a.as<T>(), out[0].as<T>(), outer, n, inner, reverse);
    } else {  // the shape rules (and complex_ops.h) refuse these
      throw std::logic_error("a cumulative op on a dtype it does not take");
    }
  };
  if (is_complex(a.dtype)) dispatch_complex(a.dtype, run);
  else dispatch_dtype(a.dtype, run);
}

}  // namespace

void cumsum_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scan_kernel<CumOp::Sum>(in, out, attrs);
}
void cumprod_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scan_kernel<CumOp::Prod>(in, out, attrs);
}
void cummax_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scan_kernel<CumOp::Max>(in, out, attrs);
}
void cummin_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scan_kernel<CumOp::Min>(in, out, attrs);
}
void cumlogsumexp_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scan_kernel<CumOp::LogSumExp>(in, out, attrs);
}

}  // namespace xjax
