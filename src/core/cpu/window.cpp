// CPU kernels of the windowed ops: reduce_window_sum/max/min, select_and_gather_add (the
// tangent at the max/min of each window) and select_and_scatter_add (each window's value added
// at its max/min: max-pool's gradient).
//
// Trailing dimensions that no window touches (window 1, stride 1, no padding or dilation: the
// channels of an NHWC max-pool) are folded into one contiguous inner run, so the loops over a
// window combine whole runs; the windows of the outer dimensions are walked tap by tap, skipping
// padding and holes (they hold the reduction's identity, which changes nothing).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/cpu/kernels.h"
#include "core/ops/scalar_complex.h"
#include "core/ops/window_dims.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

using scalar::cx::is_complex_v;

// The windows over the outer dimensions and the inner run that every tap carries along.
struct Walk {
  std::vector<WindowDim> dims;  // outer dimensions
  Shape out;  // outer output shape
  int64_t inner = 1, out_outer = 1, taps = 1;
  // Per outer dim i and output position o: the element offsets of the valid taps, in tap order,
  // at valid[i][start[i][o] .. start[i][o + 1]).
  std::vector<std::vector<int64_t>> start, valid;

  // The valid taps of the outer dims before the last at output index o (o[last] ignored): their
  // offsets, in window order, into `prefix`.
  void prefix_of(const std::vector<int64_t>& o, std::vector<int64_t>& prefix) const {
    thread_local std::vector<int64_t> next;
    prefix.assign(1, 0);
    for (size_t i = 0; i + 1 < dims.size(); ++i) {
      const int64_t *b = valid[i].data() + start[i][size_t(o[i])], *e = valid[i].data() + start[i][size_t(o[i]) + 1];
      next.clear();
      for (int64_t base : prefix)
        for (const int64_t* p = b; p != e; ++p) next.push_back(base + *p);
      prefix.swap(next);
    }
  }
};

Walk make_walk(OpId op, const Shape& in, const Attrs& attrs) {
  const std::vector<int64_t>& window = attrs.get_ints("window_dimensions");
  const auto dims = window_dims(op, in, window, attrs, {"base_dilation", "window_dilation"}, "");
  size_t outer = dims.size();
  Walk w;
  while (outer > 0) {
    const WindowDim& d = dims[outer - 1];
    if (d.window != 1 || d.stride != 1 || d.pad_lo != 0 || d.pad_hi != 0 || d.base_dilation != 1) break;
    w.inner *= d.size;
    --outer;
  }
  std::vector<int64_t> in_strides(outer);
  int64_t stride = w.inner;
  for (size_t i = outer; i-- > 0;) {
    in_strides[i] = stride;
    stride *= dims[i].size;
  }
  for (size_t i = 0; i < outer; ++i) {
    const WindowDim& d = dims[i];
    w.dims.push_back(d);
    w.out.push_back(d.out_size());
    w.out_outer *= d.out_size();
    w.taps *= d.window;
    std::vector<int64_t> st{0}, vals;
    for (int64_t o = 0; o < d.out_size(); ++o) {
      for (int64_t k = 0; k < d.window; ++k) {
        const int64_t s = d.source(o, k);
        if (s >= 0) vals.push_back(s * in_strides[i]);
      }
      st.push_back(int64_t(vals.size()));
    }
    w.start.push_back(std::move(st));
    w.valid.push_back(std::move(vals));
  }
  return w;
}

// Calls fn(o, prefix, b, e, scratch) for every outer output position o, in parallel chunks of
// about 2^14 taps x inner elements: the valid taps of o are at offsets p + *k for p in prefix and k
// in [b, e), in window order. `scratch` is a vector the chunk's calls may reuse.
template <typename F>
void for_each_window(const Walk& w, F&& fn) {
  static const int64_t zero = 0;
  if (w.dims.empty()) {  // no window: one output, one tap
    const std::vector<int64_t> prefix{0};
    std::vector<int64_t> scratch;
    fn(int64_t(0), prefix, &zero, &zero + 1, scratch);
    return;
  }
  const size_t last = w.dims.size() - 1;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(w.taps * w.inner, 1));
  parallel_for(w.out_outer, grain, [&](int64_t o0, int64_t o1) {
    thread_local std::vector<int64_t> prefix, o, scratch_tl;
    std::vector<int64_t>& scratch = scratch_tl;
    o.assign(w.dims.size(), 0);
    int64_t q = o0;
    for (size_t i = w.dims.size(); i-- > 0;) {
      o[i] = q % w.out[i];
      q /= w.out[i];
    }
    w.prefix_of(o, prefix);
    const int64_t* valid = w.valid[last].data();
    const std::vector<int64_t>& start = w.start[last];
    for (int64_t i = o0; i < o1; ++i) {
      const size_t ol = size_t(o[last]);
      fn(i, prefix, valid + start[ol], valid + start[ol + 1], scratch);
      if (++o[last] < w.out[last]) continue;
      for (size_t d = last + 1; d-- > 0 && o[d] == w.out[d];) {
        o[d] = 0;
        if (d > 0) ++o[d - 1];
      }
      if (i + 1 < o1) w.prefix_of(o, prefix);
    }
  });
}

// The accumulation type of storage type S: float for the half types, uint8 for bool (0/1: max is
// or, min is and); sums of integers wrap, in the unsigned type of the same width.
template <typename S, bool Sum>
auto acc_tag() {
  if constexpr (is_complex_v<S>) {
    return S{};
  } else if constexpr (std::is_same_v<S, float16> || std::is_same_v<S, bfloat16>) {
    return float{};
  } else if constexpr (std::is_same_v<S, bool>) {
    return uint8_t{};
  } else if constexpr (Sum && std::is_integral_v<S>) {
    return std::make_unsigned_t<S>{};
  } else {
    return S{};
  }
}
template <typename S, bool Sum>
using AccOf = decltype(acc_tag<S, Sum>());

// The identities of max and min; for complex numbers JAX's: -inf + 0i and inf + 0i.
template <typename A>
A lowest() {
  if constexpr (is_complex_v<A>) return A(lowest<typename A::value_type>(), 0);
  else if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::lowest();
}
template <typename A>
A highest() {
  if constexpr (is_complex_v<A>) return A(highest<typename A::value_type>(), 0);
  else if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::max();
}

// max and min that propagate NaN (as XLA's); complex ones are lexicographic (scalar_complex.h).
template <typename A>
inline A max_nan(A a, A b) {
  if constexpr (is_complex_v<A>) return scalar::cx::max(a, b);
  else if constexpr (std::is_floating_point_v<A>) return (b > a || b != b) ? b : a;
  else return b > a ? b : a;
}
template <typename A>
inline A min_nan(A a, A b) {
  if constexpr (is_complex_v<A>) return scalar::cx::min(a, b);
  else if constexpr (std::is_floating_point_v<A>) return (b < a || b != b) ? b : a;
  else return b < a ? b : a;
}

template <typename A>
inline A add(A a, A b) {
  if constexpr (is_complex_v<A>) return scalar::cx::add(a, b);
  else return a + b;
}

constexpr int64_t kRun = 64;  // inner elements combined at once

// dispatch_dtype, and dispatch_complex for complex64 / complex128 (reduce_window sum, max, min).
template <typename F>
void dispatch_window(DType dt, F&& f) {
  if (is_complex(dt)) return dispatch_complex(dt, f);
  dispatch_dtype(dt, f);
}

template <OpId Op>
void reduce_window_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &x = in[0], &y = out[0];
  if (y.size() == 0) return;
  const Walk w = make_walk(Op, x.shape, attrs);
  dispatch_window(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    constexpr bool sum = Op == OpId::reduce_window_sum_;
    using A = AccOf<S, sum>;
    const S* src = x.as<S>();
    S* dst = y.as<S>();
    const int64_t L = w.inner;
    const A init = sum ? A(0) : (Op == OpId::reduce_window_max_ ? lowest<A>() : highest<A>());
    for_each_window(w, [&](int64_t o, const std::vector<int64_t>& prefix, const int64_t* b, const int64_t* e,
                           std::vector<int64_t>&) {
      for (int64_t j0 = 0; j0 < L; j0 += kRun) {  // the inner run in pieces whose accumulators stay in registers
        const int64_t n = std::min(kRun, L - j0);
        A ac[kRun];
        for (int64_t j = 0; j < n; ++j) ac[j] = init;
        for (int64_t base : prefix)
          for (const int64_t* k = b; k != e; ++k) {
            const S* p = src + base + *k + j0;
            for (int64_t j = 0; j < n; ++j) {
              const A v = A(p[j]);
              if constexpr (sum) ac[j] = add(ac[j], v);
              else if constexpr (Op == OpId::reduce_window_max_) ac[j] = max_nan(ac[j], v);
              else ac[j] = min_nan(ac[j], v);
            }
          }
        S* q = dst + o * L + j0;
        for (int64_t j = 0; j < n; ++j) q[j] = S(ac[j]);
      }
    });
  });
}

// The selection of select_and_*: the first of the window's elements that are >= ("ge") or <=
// ("le") every later one, as XLA's sequential select.
template <typename A>
inline bool keeps(bool ge, A current, A candidate) {
  return ge ? current >= candidate : current <= candidate;
}

// The window's valid taps as offsets, in window order.
inline void gather_taps(const std::vector<int64_t>& prefix, const int64_t* b, const int64_t* e,
                        std::vector<int64_t>& offs) {
  offs.clear();
  for (int64_t base : prefix)
    for (const int64_t* p = b; p != e; ++p) offs.push_back(base + *p);
}

// sel[j]: the selected tap (an index into offs) of inner element j, or -1. from_identity: the
// selection starts from the identity (-inf for ge), as reduce_window's init (select_and_gather_add),
// else from the first tap (select_and_scatter_add, XLA's SelectAndScatter).
template <typename S, typename A>
void select_taps(bool ge, bool from_identity, const S* xv, const std::vector<int64_t>& offs, int64_t L, A* best,
                 int32_t* sel) {
  const A ident = ge ? lowest<A>() : highest<A>();
  for (int64_t j = 0; j < L; ++j) best[j] = ident, sel[j] = -1;
  for (size_t t = 0; t < offs.size(); ++t) {
    const S* p = xv + offs[t];
    const bool first = t == 0 && !from_identity;
    for (int64_t j = 0; j < L; ++j) {
      const A k = A(p[j]);
      const bool take = first || !keeps(ge, best[j], k);
      best[j] = take ? k : best[j];
      sel[j] = take ? int32_t(t) : sel[j];
    }
  }
}

void select_and_gather_add_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &t = in[0], &x = in[1], &y = out[0];
  if (y.size() == 0) return;
  const Walk w = make_walk(OpId::select_and_gather_add_, x.shape, attrs);
  const bool ge = attrs.get_str("select_prim") == "ge";
  dispatch_dtype(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, bool>) {
      using A = AccOf<S, false>;
      const S *tv = t.as<S>(), *xv = x.as<S>();
      S* dst = y.as<S>();
      const int64_t L = w.inner;
      for_each_window(w, [&](int64_t o, const std::vector<int64_t>& prefix, const int64_t* b, const int64_t* e,
                             std::vector<int64_t>& offs) {
        gather_taps(prefix, b, e, offs);
        for (int64_t j0 = 0; j0 < L; j0 += kRun) {
          const int64_t n = std::min(kRun, L - j0);
          A best[kRun];
          int32_t sel[kRun];
          select_taps(ge, true, xv + j0, offs, n, best, sel);
          S* val = dst + o * L + j0;
          for (int64_t j = 0; j < n; ++j) val[j] = sel[j] < 0 ? S(0.0f) : tv[offs[size_t(sel[j])] + j0 + j];
        }
      });
    }
  });
}

void select_and_scatter_add_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &src = in[0], &x = in[1], &y = out[0];
  if (y.size() == 0) return;
  const Walk w = make_walk(OpId::select_and_scatter_add_, x.shape, attrs);
  const bool ge = attrs.get_str("select_prim") == "ge";
  const int64_t L = w.inner;
  // Windows that do not overlap (the usual max-pool) select disjoint elements: each window writes
  // its own, in parallel. Otherwise the selections come first, in parallel, then the adds in order.
  bool disjoint = true;
  for (const WindowDim& d : w.dims) disjoint = disjoint && d.stride >= d.window;
  std::memset(y.data, 0, size_t(y.size()) * itemsize(y.dtype));  // zero bits: zero in every dtype
  dispatch_dtype(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, bool>) {
      using A = AccOf<S, false>;
      const S *xv = x.as<S>(), *sv = src.as<S>();
      S* dst = y.as<S>();
      std::unique_ptr<int64_t[]> chosen(disjoint ? nullptr : new int64_t[size_t(src.size())]);
      for_each_window(w, [&](int64_t o, const std::vector<int64_t>& prefix, const int64_t* b, const int64_t* e,
                             std::vector<int64_t>& offs) {
        gather_taps(prefix, b, e, offs);
        for (int64_t j0 = 0; j0 < L; j0 += kRun) {
          const int64_t n = std::min(kRun, L - j0);
          A best[kRun];
          int32_t sel[kRun];
          select_taps(ge, false, xv + j0, offs, n, best, sel);
          for (int64_t j = 0; j < n; ++j) {
            const int64_t at = sel[j] < 0 ? -1 : offs[size_t(sel[j])] + j0 + j;
            if (disjoint) {
              if (at >= 0) dst[at] = sv[o * L + j0 + j];
            } else {
              chosen[o * L + j0 + j] = at;
            }
          }
        }
      });
      if (disjoint) return;
      using Acc = AccOf<S, true>;
      std::unique_ptr<Acc[]> sums(new Acc[size_t(y.size())]());
      for (int64_t i = 0; i < src.size(); ++i)
        if (chosen[i] >= 0) sums[chosen[i]] = sums[chosen[i]] + Acc(sv[i]);
      parallel_for(y.size(), 1 << 15, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) dst[i] = S(sums[i]);
      });
    }
  });
}

}  // namespace

void register_window_cpu(CpuKernelTable& t) {
  t.set_cpu(OpId::reduce_window_sum_, reduce_window_cpu<OpId::reduce_window_sum_>);
  t.set_cpu(OpId::reduce_window_max_, reduce_window_cpu<OpId::reduce_window_max_>);
  t.set_cpu(OpId::reduce_window_min_, reduce_window_cpu<OpId::reduce_window_min_>);
  t.set_cpu(OpId::select_and_gather_add_, select_and_gather_add_cpu);
  t.set_cpu(OpId::select_and_scatter_add_, select_and_scatter_add_cpu);
}

}  // namespace xjax
