// The scatter kernels: result = operand with each update window combined in (set, add, mul,
// min, max). Windows are applied in index order, so duplicates resolve the same way every run
// (for set: the last write wins). In parallel, each thread owns a contiguous range of the result
// and applies, in that same order, the parts of the windows that fall in its range.
// Complex values combine by scalar_complex.h's add, mul, max and min (lexicographic, as XLA's).
#include <algorithm>
#include <memory>
#include <type_traits>

#include "core/cpu/index_kernels.h"
#include "core/cpu/index_plan.h"
#include "core/ops/scalar_complex.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

using scalar::cx::is_complex_v;

// Combiners over the compute type C; integers wrap around, float min/max propagate NaN.
struct SetOp {
  template <typename C> static C f(C, C b) { return b; }
};
struct AddOp {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a || b;
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      using W = std::conditional_t<(sizeof(C) < 4), uint32_t, U>;  // no promotion to signed int
      return C(U(W(U(a)) + W(U(b))));
    } else if constexpr (is_complex_v<C>) {
      return scalar::cx::add(a, b);
    } else {
      return a + b;
    }
  }
};
struct MulOp {
  template <typename C> static C f(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) {
      return a && b;
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      using W = std::conditional_t<(sizeof(C) < 4), uint32_t, U>;
      return C(U(W(U(a)) * W(U(b))));
    } else if constexpr (is_complex_v<C>) {
      return scalar::cx::mul(a, b);
    } else {
      return a * b;
    }
  }
};
struct MinOp {
  template <typename C> static C f(C a, C b) {
    if constexpr (is_complex_v<C>) {
      return scalar::cx::min(a, b);
    } else {
      if constexpr (std::is_floating_point_v<C>) {
        if (a != a) return a;
        if (b != b) return b;
      }
      return b < a ? b : a;
    }
  }
};
struct MaxOp {
  template <typename C> static C f(C a, C b) {
    if constexpr (is_complex_v<C>) {
      return scalar::cx::max(a, b);
    } else {
      if constexpr (std::is_floating_point_v<C>) {
        if (a != a) return a;
        if (b != b) return b;
      }
      return b > a ? b : a;
    }
  }
};

// Applies the windows' elements that fall in [lo, hi) of the flat result.
template <typename T, typename Op>
void apply_windows(T* out, const T* upd, const int64_t* starts, int64_t batches, const BlockPlan& bp, int64_t lo,
                   int64_t hi) {
  using C = typename ComputeOf<T>::type;
  const int64_t run = bp.run;
  if (bp.size.empty() && run == 1) {
    // One element per window: a tight loop keeps many independent cache misses in flight.
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t s = starts[b];
      if (s >= lo && s < hi) {
        if constexpr (std::is_same_v<Op, SetOp>) out[s] = upd[b];
        else out[s] = T(Op::f(C(out[s]), C(upd[b])));
      }
    }
    return;
  }
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t s = starts[b];
    if (s < 0 || s >= hi || s + bp.span <= lo) continue;
    const T* u = upd + b * bp.count;
    for_each_run(bp, s, [&](int64_t off) {
      const int64_t first = std::max(off, lo) - off, last = std::min(off + run, hi) - off;
      T* o = out + off;
      for (int64_t i = first; i < last; ++i) {
        if constexpr (std::is_same_v<Op, SetOp>) o[i] = u[i];
        else o[i] = T(Op::f(C(o[i]), C(u[i])));
      }
      u += run;
    });
  }
}

// Scatter-add of one element per window into a small result (segment_sum): one serial pass over
// the updates is a chain of loads and stores to a few cache lines. The updates go instead in fixed
// chunks, each summed into its own zeroed copy of the result; the copies are then added to the
// result in chunk order. Chunks depend only on the sizes, so the bits do not depend on the thread
// count (float sums are grouped by chunk rather than taken in index order).
constexpr int64_t kAddChunk = 1 << 16;              // updates per chunk
constexpr int64_t kMaxPartials = int64_t(1) << 22;  // elements of all copies together

bool use_chunked_add(const BlockPlan& bp, int64_t batches, int64_t n) {
  const int64_t chunks = (batches + kAddChunk - 1) / kAddChunk;
  return bp.size.empty() && bp.run == 1 && chunks >= 2 && n * chunks <= kMaxPartials && n * 8 <= batches;
}

// f(b) for b in [b0, b1) in order, four calls per iteration: the loop of a scatter-add is a few
// instructions per update, and unrolled its updates overlap (segment_sum: 0.63 -> 0.43 ns each).
template <typename F>
inline void each_in_order(int64_t b0, int64_t b1, F&& f) {
  int64_t b = b0;
  for (; b + 4 <= b1; b += 4) {
    f(b);
    f(b + 1);
    f(b + 2);
    f(b + 3);
  }
  for (; b < b1; ++b) f(b);
}

// acc[start of b] += upd[b] for b in [b0, b1). With one index per update and no batching dims
// (segment_sum's form) the index is decoded in the same loop: a separate pass writing the starts
// and reading them back took twice as long.
template <typename T, typename C>
void add_updates(const StartPlan& sp, const Tensor& indices, const T* upd, int64_t b0, int64_t b1, C* acc) {
  if (sp.depth == 1 && sp.batching.empty() && !sp.none_fit) {
    dispatch_dtype(indices.dtype, [&](auto tag) {
      using I = decltype(tag);
      if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
        const I* idx = static_cast<const I*>(indices.data);
        const int64_t hi = sp.hi[0], stride = sp.stride[0];
        const bool clip = sp.clip;
        each_in_order(b0, b1, [&](int64_t b) {
          int64_t s = index_as_int64(idx[b]);
          if (clip) s = std::clamp<int64_t>(s, 0, hi);
          else if (uint64_t(s) > uint64_t(hi)) return;  // (also s < 0) dropped
          acc[s * stride] = AddOp::f(acc[s * stride], C(upd[b]));
        });
      }
    });
    return;
  }
  constexpr int64_t kBlock = 512;
  int64_t starts[kBlock];
  for (int64_t s0 = b0; s0 < b1; s0 += kBlock) {
    const int64_t nb = std::min(kBlock, b1 - s0);
    compute_starts(sp, indices, s0, s0 + nb, starts);
    for (int64_t j = 0; j < nb; ++j)
      if (starts[j] >= 0) acc[starts[j]] = AddOp::f(acc[starts[j]], C(upd[s0 + j]));
  }
}

template <typename T>
void chunked_add(T* dst, const T* upd, const StartPlan& sp, const Tensor& indices, int64_t n) {
  using C = typename ComputeOf<T>::type;
  const int64_t chunks = (sp.batches + kAddChunk - 1) / kAddChunk;
  std::unique_ptr<C[]> partial(new C[size_t(chunks * n)]);
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      C* acc = partial.get() + c * n;
      std::fill(acc, acc + n, C(0));
      add_updates<T, C>(sp, indices, upd, c * kAddChunk, std::min(sp.batches, (c + 1) * kAddChunk), acc);
    }
  });
  parallel_for(n, 4096, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      C v = C(dst[i]);
      for (int64_t c = 0; c < chunks; ++c) v = AddOp::f(v, partial[size_t(c * n + i)]);
      dst[i] = T(v);
    }
  });
}

// dispatch_dtype, and dispatch_complex for complex64 / complex128 (every combiner takes them).
template <typename F>
void dispatch_scatter(DType dt, F&& f) {
  if (is_complex(dt)) return dispatch_complex(dt, f);
  dispatch_dtype(moved_as(dt), f);  // float8 reaches only `set` (ops/float8_ops.h)
}

template <typename Op>
void scatter_impl(OpId op, const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& operand = in[0];
  const Tensor& indices = in[1];
  const Tensor& updates = in[2];
  const Tensor& result = out[0];
  const size_t es = itemsize(result.dtype);
  if (result.size() == 0) return;
  if (result.data != operand.data) parallel_memcpy(result.data, operand.data, size_t(result.size()) * es);
  if (updates.size() == 0) return;

  ScatterDims d = scatter_dims(op, attrs);
  std::vector<int64_t> window = scatter_window_sizes(d, operand.shape, updates.shape);
  StartPlan sp = make_start_plan(operand.shape, indices.shape, d.scatter_dims_to_operand_dims, window,
                                 d.operand_batching_dims, d.scatter_indices_batching_dims, d.mode);
  BlockPlan bp = make_block_plan(operand.shape, window);

  // Updates in the layout [scatter dims..., window dims...], one window after another.
  std::vector<int64_t> perm;
  const auto& uwd = d.update_window_dims;
  for (int64_t i = 0; i < int64_t(updates.shape.size()); ++i)
    if (std::find(uwd.begin(), uwd.end(), i) == uwd.end()) perm.push_back(i);
  perm.insert(perm.end(), uwd.begin(), uwd.end());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
  std::unique_ptr<uint8_t[]> temp(identity ? nullptr : new uint8_t[size_t(updates.size()) * es]);
  if (!identity) permute_copy(updates.data, updates.shape, perm, temp.get(), es);
  const void* upd = identity ? updates.data : temp.get();

  const int64_t n = result.size();
  // Every part scans all windows and tests each against its range (a branch that mispredicts
  // half the time with two parts), which only pays off for large windows.
  const int64_t parts = bp.count >= 256 && updates.size() >= (1 << 16) ? ThreadPool::current().size() : 1;
  dispatch_scatter(result.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* dst = static_cast<T*>(result.data);
    const T* src = static_cast<const T*>(upd);
    if constexpr (std::is_same_v<Op, AddOp>) {
      if (use_chunked_add(bp, sp.batches, n)) return chunked_add<T>(dst, src, sp, indices, n);
    }
    if (parts == 1) {  // serial: decode starts a block at a time, kept in L1
      constexpr int64_t kBlock = 512;
      int64_t starts[kBlock];
      for (int64_t b0 = 0; b0 < sp.batches; b0 += kBlock) {
        const int64_t nb = std::min(kBlock, sp.batches - b0);
        compute_starts(sp, indices, b0, b0 + nb, starts);
        apply_windows<T, Op>(dst, src + b0 * bp.count, starts, nb, bp, 0, n);
      }
      return;
    }
    std::unique_ptr<int64_t[]> starts(new int64_t[size_t(sp.batches)]);  // uninitialised: all written
    parallel_for(sp.batches, 8192, [&](int64_t b0, int64_t b1) { compute_starts(sp, indices, b0, b1, starts.get() + b0); });
    parallel_for(parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        apply_windows<T, Op>(dst, src, starts.get(), sp.batches, bp, n * p / parts, n * (p + 1) / parts);
    });
  });
}

}  // namespace

void scatter_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scatter_impl<SetOp>(OpId::scatter_, in, out, attrs);
}
void scatter_add_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scatter_impl<AddOp>(OpId::scatter_add_, in, out, attrs);
}
void scatter_mul_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scatter_impl<MulOp>(OpId::scatter_mul_, in, out, attrs);
}
void scatter_min_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scatter_impl<MinOp>(OpId::scatter_min_, in, out, attrs);
}
void scatter_max_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  scatter_impl<MaxOp>(OpId::scatter_max_, in, out, attrs);
}

}  // namespace xjax
