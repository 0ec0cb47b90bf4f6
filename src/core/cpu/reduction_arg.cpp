// argmax/argmin along one axis: the first index of the extreme value; a NaN counts as the extreme,
// so the first NaN's index wins (as NumPy and JAX do).
#include <algorithm>
#include <climits>
#include <vector>

#include "core/cpu/reduction_kernels.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

constexpr int64_t kLineBlock = 256;   // values checked at once (vectorised) along a contiguous line
constexpr int64_t kColBlock = 8192;   // columns tracked at once when the axis is not innermost
constexpr int64_t kTaskElements = 1 << 15;
constexpr int64_t kTargetTasks = 16;         // tasks to aim for when there are few column blocks
constexpr int64_t kMaxPartialBytes = 1 << 20;  // most bytes of partial results for row segments

// Compares in: float for 16-bit floats, bytes for bool, the type itself otherwise.
template <typename T>
using ArgCompute = std::conditional_t<std::is_same<T, bool>::value, uint8_t, typename ComputeOf<T>::type>;

// v replaces best when strictly more extreme, or when v is the first NaN.
template <bool Max, typename C> inline bool better(C v, C best) {
  return (Max ? v > best : v < best) || (v != v && best == best);
}

template <typename T, typename C> inline const C* as_compute(const T* x, C* tile, int64_t n) {
  if constexpr (std::is_same<T, float16>::value || std::is_same<T, bfloat16>::value) {
    widen_tile(x, tile, n);
    return tile;
  } else {
    return reinterpret_cast<const C*>(x);
  }
}

inline void store_index(void* out, bool i64, int64_t at, int64_t idx) {
  if (i64)
    static_cast<int64_t*>(out)[at] = idx;
  else
    static_cast<int32_t*>(out)[at] = int32_t(idx);
}

// The axis is innermost: scan each line a block at a time; a block is only searched element by
// element when its (vectorised) extreme beats the best so far.
template <bool Max, typename T>
void arg_lines(const T* x, int64_t lines, int64_t n, void* out, bool i64) {
  using C = ArgCompute<T>;
  parallel_for(lines, std::max<int64_t>(1, kTaskElements / n), [&](int64_t b, int64_t e) {
    C tile[kLineBlock];
    for (int64_t l = b; l < e; ++l) {
      const T* line = x + l * n;
      C best = *as_compute(line, tile, 1);
      int64_t best_i = 0;
      for (int64_t s = 0; s < n && best == best; s += kLineBlock) {
        int64_t m = std::min(kLineBlock, n - s);
        const C* v = as_compute(line + s, tile, m);
        C ext = red::extreme<Max>(v, m);
        if (!better<Max>(ext, best)) continue;
        // The block holds the new best (or a NaN): its first occurrence is the answer so far.
        int64_t i = 0;
        if (ext != ext) {
          while (v[i] == v[i]) ++i;
        } else {
          while (v[i] != ext) ++i;
        }
        best = v[i];
        best_i = s + i;
      }
      store_index(out, i64, l, best_i);
    }
  });
}

// Takes candidates v (at indices ks) where they beat the best so far: strictly more extreme, or
// the first NaN. Candidates come from later rows, so ties keep the earlier index. Written for
// the vectoriser: K is either one index for the whole row or a per-column array.
template <bool Max, typename C, typename I, typename K>
inline void update_best(C* __restrict best, I* __restrict idx, const C* __restrict v, int64_t w, K ks) {
  for (int64_t j = 0; j < w; ++j) {
    C bj = best[j], xj = v[j];
    bool take = (Max ? xj > bj : xj < bj) | ((xj != xj) & (bj == bj));
    best[j] = take ? xj : bj;
    I k;
    if constexpr (std::is_pointer<K>::value)
      k = ks[j];
    else
      k = ks;
    idx[j] = take ? k : idx[j];
  }
}

// The axis is not innermost: track the best value and index of a block of columns down the rows.
// Blocks are wide so that each row read is one long stream; with few blocks, the rows are cut
// into segments whose partial bests are merged in row order. The index type I has the width of
// the values where it can, so that the update vectorises.
template <bool Max, typename T, typename I>
void arg_columns(const T* x, int64_t outer, int64_t n, int64_t inner, void* out, bool i64) {
  using C = ArgCompute<T>;
  int64_t block = std::min(inner, kColBlock);
  int64_t n_blocks = (inner + block - 1) / block;
  int64_t base_tasks = outer * n_blocks;
  int64_t segs = 1;
  if (base_tasks < kTargetTasks)
    segs = std::max<int64_t>(1, std::min({kTargetTasks / base_tasks, n * block / kTaskElements,
                                          kMaxPartialBytes / int64_t(sizeof(C) + sizeof(I)) / (base_tasks * block)}));
  int64_t tasks = base_tasks * segs;
  std::vector<C> part_best(segs > 1 ? tasks * block : 0);
  std::vector<I> part_idx(segs > 1 ? tasks * block : 0);
  parallel_for(tasks, std::max<int64_t>(1, kTaskElements * segs / (n * block)), [&](int64_t b, int64_t e) {
    std::vector<C> own_best(segs > 1 ? 0 : block), tile(block);
    std::vector<I> own_idx(segs > 1 ? 0 : block);
    for (int64_t t = b; t < e; ++t) {
      int64_t s = t % segs, bt = t / segs;
      int64_t o = bt / n_blocks, col = (bt % n_blocks) * block;
      int64_t w = std::min(block, inner - col);
      C* best = segs > 1 ? &part_best[t * block] : own_best.data();
      I* idx = segs > 1 ? &part_idx[t * block] : own_idx.data();
      int64_t k0 = n * s / segs, k1 = n * (s + 1) / segs;
      const T* base = x + o * n * inner + col;
      const C* first = as_compute(base + k0 * inner, tile.data(), w);
      for (int64_t j = 0; j < w; ++j) {
        best[j] = first[j];
        idx[j] = I(k0);
      }
      for (int64_t k = k0 + 1; k < k1; ++k)
        update_best<Max>(best, idx, as_compute(base + k * inner, tile.data(), w), w, I(k));
      if (segs == 1)
        for (int64_t j = 0; j < w; ++j) store_index(out, i64, o * inner + col + j, idx[j]);
    }
  });
  if (segs == 1) return;
  for (int64_t bt = 0; bt < base_tasks; ++bt) {
    int64_t o = bt / n_blocks, col = (bt % n_blocks) * block;
    int64_t w = std::min(block, inner - col);
    C* best = &part_best[bt * segs * block];
    I* idx = &part_idx[bt * segs * block];
    for (int64_t s = 1; s < segs; ++s)
      update_best<Max>(best, idx, &part_best[(bt * segs + s) * block], w, &part_idx[(bt * segs + s) * block]);
    for (int64_t j = 0; j < w; ++j) store_index(out, i64, o * inner + col + j, idx[j]);
  }
}

template <bool Max>
void arg_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& a = in[0];
  if (out[0].size() == 0) return;
  int64_t axis = attrs.get_ints("axes")[0];
  int64_t outer = 1, inner = 1, n = a.shape[axis];
  for (int64_t i = 0; i < axis; ++i) outer *= a.shape[i];
  for (size_t i = axis + 1; i < a.shape.size(); ++i) inner *= a.shape[i];
  bool i64 = out[0].dtype == DType::Int64;
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1)
      arg_lines<Max>(a.as<T>(), outer, n, out[0].data, i64);
    else if (sizeof(T) == 8 || n - 1 > INT32_MAX)
      arg_columns<Max, T, int64_t>(a.as<T>(), outer, n, inner, out[0].data, i64);
    else
      arg_columns<Max, T, int32_t>(a.as<T>(), outer, n, inner, out[0].data, i64);
  });
}

}  // namespace

void argmax_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  arg_kernel<true>(in, out, attrs);
}
void argmin_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  arg_kernel<false>(in, out, attrs);
}

}  // namespace xjax
