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
#include <limits>
#include <memory>
#include <type_traits>

#include "core/ops/window_dims.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

// The windows over the outer dimensions and the inner run that every tap carries along.
struct Walk {
  std::vector<WindowDim> dims;  // outer dimensions
  std::vector<int64_t> in_strides;  // element strides of the outer input dimensions
  Shape out;  // outer output shape
  int64_t inner = 1, out_outer = 1;

  // Element offsets of the valid taps of outer output position o, in window (row-major) order.
  void taps(int64_t o, std::vector<int64_t>& offs) const {
    thread_local std::vector<int64_t> next;
    offs.assign(1, 0);
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t r = 1;
      for (size_t j = i + 1; j < dims.size(); ++j) r *= out[j];
      const int64_t oi = (o / r) % out[i];
      next.clear();
      for (int64_t base : offs)
        for (int64_t k = 0; k < dims[i].window; ++k) {
          const int64_t s = dims[i].source(oi, k);
          if (s >= 0) next.push_back(base + s * in_strides[i]);
        }
      offs.swap(next);
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
  int64_t stride = w.inner;
  w.in_strides.assign(outer, 0);
  for (size_t i = outer; i-- > 0;) {
    w.in_strides[i] = stride;
    stride *= dims[i].size;
  }
  for (size_t i = 0; i < outer; ++i) {
    w.dims.push_back(dims[i]);
    w.out.push_back(dims[i].out_size());
    w.out_outer *= dims[i].out_size();
  }
  return w;
}

// Runs fn(o) over the outer output positions, in parallel chunks of about 2^14 taps x runs.
template <typename F>
void for_each_window(const Walk& w, F&& fn) {
  int64_t taps = 1;
  for (const WindowDim& d : w.dims) taps *= d.window;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(taps * w.inner, 1));
  parallel_for(w.out_outer, grain, [&](int64_t o0, int64_t o1) {
    thread_local std::vector<int64_t> offs;
    for (int64_t o = o0; o < o1; ++o) {
      w.taps(o, offs);
      fn(o, offs);
    }
  });
}

// The accumulation type of storage type S: float for the half types, uint8 for bool (0/1: max is
// or, min is and); sums of integers wrap, in the unsigned type of the same width.
template <typename S, bool Sum>
auto acc_tag() {
  if constexpr (std::is_same_v<S, float16> || std::is_same_v<S, bfloat16>) {
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

template <typename A>
A lowest() {
  if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::lowest();
}
template <typename A>
A highest() {
  if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
  else return std::numeric_limits<A>::max();
}

// max and min that propagate NaN (as XLA's).
template <typename A>
inline A max_nan(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) return (b > a || b != b) ? b : a;
  else return b > a ? b : a;
}
template <typename A>
inline A min_nan(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) return (b < a || b != b) ? b : a;
  else return b < a ? b : a;
}

template <OpId Op>
void reduce_window_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &x = in[0], &y = out[0];
  if (y.size() == 0) return;
  const Walk w = make_walk(Op, x.shape, attrs);
  dispatch_dtype(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    constexpr bool sum = Op == OpId::reduce_window_sum_;
    using A = AccOf<S, sum>;
    const S* src = x.as<S>();
    S* dst = y.as<S>();
    const int64_t L = w.inner;
    for_each_window(w, [&](int64_t o, const std::vector<int64_t>& offs) {
      thread_local std::vector<A> acc;
      acc.assign(size_t(L), sum ? A(0) : (Op == OpId::reduce_window_max_ ? lowest<A>() : highest<A>()));
      for (int64_t off : offs) {
        const S* p = src + off;
        for (int64_t j = 0; j < L; ++j) {
          const A v = A(p[j]);
          if constexpr (sum) acc[j] = acc[j] + v;
          else if constexpr (Op == OpId::reduce_window_max_) acc[j] = max_nan(acc[j], v);
          else acc[j] = min_nan(acc[j], v);
        }
      }
      S* q = dst + o * L;
      for (int64_t j = 0; j < L; ++j) q[j] = S(acc[j]);
    });
  });
}

// The selection of select_and_*: the first of the window's elements that are >= ("ge") or <=
// ("le") every later one, as XLA's sequential select.
template <typename A>
inline bool keeps(bool ge, A current, A candidate) {
  return ge ? current >= candidate : current <= candidate;
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
      for_each_window(w, [&](int64_t o, const std::vector<int64_t>& offs) {
        thread_local std::vector<A> key;
        thread_local std::vector<S> val;
        key.assign(size_t(L), ge ? lowest<A>() : highest<A>());  // padding: the identity, tangent 0
        val.assign(size_t(L), S(0.0f));
        for (int64_t off : offs)
          for (int64_t j = 0; j < L; ++j) {
            const A k = A(xv[off + j]);
            if (!keeps(ge, key[j], k)) key[j] = k, val[j] = tv[off + j];
          }
        std::copy(val.begin(), val.end(), dst + o * L);
      });
    }
  });
}

void select_and_scatter_add_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &s = in[0], &x = in[1], &y = out[0];
  if (y.size() == 0) return;
  const Walk w = make_walk(OpId::select_and_scatter_add_, x.shape, attrs);
  const bool ge = attrs.get_str("select_prim") == "ge";
  const int64_t L = w.inner;
  // The selected element of each (window, inner) pair, in parallel; then the adds, in order.
  std::unique_ptr<int64_t[]> chosen(new int64_t[size_t(s.size())]);
  dispatch_dtype(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, bool>) {
      using A = AccOf<S, false>;
      const S* xv = x.as<S>();
      for_each_window(w, [&](int64_t o, const std::vector<int64_t>& offs) {
        int64_t* c = chosen.get() + o * L;
        for (int64_t j = 0; j < L; ++j) {
          c[j] = -1;  // a window of padding only selects nothing
          A best = A(0);
          for (int64_t off : offs) {
            const A k = A(xv[off + j]);
            if (c[j] < 0 || !keeps(ge, best, k)) best = k, c[j] = off + j;
          }
        }
      });
      using Acc = AccOf<S, true>;
      std::unique_ptr<Acc[]> sums(new Acc[size_t(y.size())]());
      const S* sv = s.as<S>();
      for (int64_t i = 0; i < s.size(); ++i)
        if (chosen[i] >= 0) sums[chosen[i]] = sums[chosen[i]] + Acc(sv[i]);
      S* dst = y.as<S>();
      parallel_for(y.size(), 1 << 15, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) dst[i] = S(sums[i]);
      });
    }
  });
}

}  // namespace

void register_window_cpu(OpTable& t) {
  t.set_cpu(OpId::reduce_window_sum_, reduce_window_cpu<OpId::reduce_window_sum_>);
  t.set_cpu(OpId::reduce_window_max_, reduce_window_cpu<OpId::reduce_window_max_>);
  t.set_cpu(OpId::reduce_window_min_, reduce_window_cpu<OpId::reduce_window_min_>);
  t.set_cpu(OpId::select_and_gather_add_, select_and_gather_add_cpu);
  t.set_cpu(OpId::select_and_scatter_add_, select_and_scatter_add_cpu);
}

}  // namespace xjax
