// argmax/argmin along one axis: the first index of the extreme value; a NaN counts as the extreme,
// so the first NaN's index wins (as NumPy and JAX do).
#include <algorithm>

#include "core/cpu/reduction_kernels.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

constexpr int64_t kLineBlock = 512;   // values checked at once (vectorised) along a contiguous line
constexpr int64_t kColBlock = 1024;   // columns tracked at once when the axis is not innermost
constexpr int64_t kTaskElements = 1 << 15;

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
        for (int64_t i = 0; i < m; ++i) {
          if (better<Max>(v[i], best)) {
            best = v[i];
            best_i = s + i;
            if (best != best) break;
          }
        }
      }
      store_index(out, i64, l, best_i);
    }
  });
}

// The axis is not innermost: track the best value and index of a block of columns across rows.
template <bool Max, typename T>
void arg_columns(const T* x, int64_t outer, int64_t n, int64_t inner, void* out, bool i64) {
  using C = ArgCompute<T>;
  int64_t n_blocks = (inner + kColBlock - 1) / kColBlock;
  int64_t task = n * std::min(inner, kColBlock);
  parallel_for(outer * n_blocks, std::max<int64_t>(1, kTaskElements / task), [&](int64_t b, int64_t e) {
    C best[kColBlock], tile[kColBlock];
    int64_t idx[kColBlock];
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / n_blocks, col = (t % n_blocks) * kColBlock;
      int64_t w = std::min(kColBlock, inner - col);
      const T* base = x + o * n * inner + col;
      const C* first = as_compute(base, tile, w);
      for (int64_t j = 0; j < w; ++j) {
        best[j] = first[j];
        idx[j] = 0;
      }
      for (int64_t k = 1; k < n; ++k) {
        const C* v = as_compute(base + k * inner, tile, w);
        for (int64_t j = 0; j < w; ++j) {
          bool take = better<Max>(v[j], best[j]);
          best[j] = take ? v[j] : best[j];
          idx[j] = take ? k : idx[j];
        }
      }
      for (int64_t j = 0; j < w; ++j) store_index(out, i64, o * inner + col + j, idx[j]);
    }
  });
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
    else
      arg_columns<Max>(a.as<T>(), outer, n, inner, out[0].data, i64);
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
