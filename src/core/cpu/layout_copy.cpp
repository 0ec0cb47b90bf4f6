// The strided-copy engine: collapse dimensions, then walk rows (memcpy / fill / strided loop) or
// copy 2-D tiles when the innermost dimensions are swapped (transposes).
#include "core/cpu/layout_copy.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"

namespace xjax {

namespace {

// Work below this many bytes stays on the calling thread; chunks handed out are at least this big.
constexpr int64_t kParallelBytes = 256 << 10;
constexpr int64_t kTile = 32;  // transpose tile edge (elements)

// Element-sized integer types that may alias any dtype's storage (the engine only moves bytes).
typedef uint8_t __attribute__((may_alias)) U8;
typedef uint16_t __attribute__((may_alias)) U16;
typedef uint32_t __attribute__((may_alias)) U32;
typedef uint64_t __attribute__((may_alias)) U64;

struct Dims {
  std::vector<int64_t> n, s, d;  // sizes, src strides, dst strides
};

// Drops size-1 dimensions and merges neighbours that are contiguous in both src and dst.
Dims collapse(const Shape& shape, const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  Dims g;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!g.n.empty() && g.s.back() == s[i] * shape[i] && g.d.back() == d[i] * shape[i]) {
      g.n.back() *= shape[i];
      g.s.back() = s[i];
      g.d.back() = d[i];
    } else {
      g.n.push_back(shape[i]);
      g.s.push_back(s[i]);
      g.d.push_back(d[i]);
    }
  }
  if (g.n.empty()) g = Dims{{1}, {1}, {1}};  // a single element
  return g;
}

template <typename U>
void copy_run(const U* src, U* dst, int64_t cnt, int64_t si, int64_t di) {
  if (si == 1 && di == 1) {
    std::memcpy(dst, src, size_t(cnt) * sizeof(U));
  } else if (di == 1) {
    if (si == 0) {
      const U v = *src;
      for (int64_t i = 0; i < cnt; ++i) dst[i] = v;
    } else if (si == -1) {
      for (int64_t i = 0; i < cnt; ++i) dst[i] = src[-i];
    } else {
      for (int64_t i = 0; i < cnt; ++i) dst[i] = src[i * si];
    }
  } else {
    for (int64_t i = 0; i < cnt; ++i) dst[i * di] = src[i * si];
  }
}

// Copies the flat (row-major over g.n) element range [begin, end), one inner run at a time.
template <typename U>
void copy_range(const U* src, U* dst, const Dims& g, int64_t begin, int64_t end) {
  const int r = int(g.n.size());
  const int64_t n = g.n[r - 1], si = g.s[r - 1], di = g.d[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t rest = begin / n, j = begin % n, so = 0, dof = 0;
  for (int k = r - 2; k >= 0; --k) {
    idx[k] = rest % g.n[k];
    rest /= g.n[k];
    so += idx[k] * g.s[k];
    dof += idx[k] * g.d[k];
  }
  for (int64_t cur = begin; cur < end;) {
    const int64_t cnt = std::min(n - j, end - cur);
    copy_run(src + so + j * si, dst + dof + j * di, cnt, si, di);
    cur += cnt;
    j = 0;
    for (int k = r - 2; k >= 0; --k) {  // next row: odometer step over the outer dimensions
      so += g.s[k];
      dof += g.d[k];
      if (++idx[k] < g.n[k]) break;
      so -= g.s[k] * g.n[k];
      dof -= g.d[k] * g.n[k];
      idx[k] = 0;
    }
  }
}

// One tile of a transpose: src is contiguous along rows, dst along cols.
template <typename U>
void copy_tile(const U* __restrict src, U* __restrict dst, int64_t rows, int64_t cols, int64_t sj, int64_t dk) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * dk + j] = src[i + j * sj];
}

// Transpose-like copies: dimension k is contiguous in src, the last one in dst. Work items are
// (outer index, block of kTile rows of k); each item walks the last dimension in tiles.
template <typename U>
void copy_tiled(const U* src, U* dst, const Dims& g, int k) {
  const int r = int(g.n.size());
  Dims outer;
  for (int i = 0; i < r - 1; ++i)
    if (i != k) {
      outer.n.push_back(g.n[i]);
      outer.s.push_back(g.s[i]);
      outer.d.push_back(g.d[i]);
    }
  const int64_t nk = g.n[k], dk = g.d[k], nj = g.n[r - 1], sj = g.s[r - 1];
  const int64_t blocks = (nk + kTile - 1) / kTile;
  const int64_t items = numel(outer.n) * blocks;
  const int64_t grain = std::max<int64_t>(1, kParallelBytes / int64_t(sizeof(U)) / (kTile * nj));
  parallel_for(items, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t o = it / blocks, kb = (it % blocks) * kTile, so = 0, dof = 0;
      for (int i = int(outer.n.size()) - 1; i >= 0; --i) {
        so += (o % outer.n[i]) * outer.s[i];
        dof += (o % outer.n[i]) * outer.d[i];
        o /= outer.n[i];
      }
      const int64_t rows = std::min(kTile, nk - kb);
      for (int64_t jb = 0; jb < nj; jb += kTile)
        copy_tile(src + so + kb + jb * sj, dst + dof + kb * dk + jb, rows, std::min(kTile, nj - jb), sj, dk);
    }
  });
}

template <typename U>
void copy_typed(const U* src, U* dst, const Dims& g) {
  const int r = int(g.n.size());
  if (g.d[r - 1] == 1 && g.s[r - 1] != 1 && g.s[r - 1] != 0 && g.n[r - 1] >= 4) {
    for (int k = r - 2; k >= 0; --k)
      if (g.s[k] == 1 && g.n[k] >= 4) return copy_tiled(src, dst, g, k);
  }
  const int64_t total = numel(g.n);
  const int64_t grain = std::max<int64_t>(1, kParallelBytes / int64_t(sizeof(U)));
  parallel_for(total, grain, [&](int64_t b, int64_t e) { copy_range(src, dst, g, b, e); });
}

}  // namespace

void strided_copy(size_t esize, const void* src, const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides, const Shape& shape) {
  if (numel(shape) == 0) return;
  Dims g = collapse(shape, src_strides, dst_strides);
  switch (esize) {
    case 1: return copy_typed(static_cast<const U8*>(src), static_cast<U8*>(dst), g);
    case 2: return copy_typed(static_cast<const U16*>(src), static_cast<U16*>(dst), g);
    case 4: return copy_typed(static_cast<const U32*>(src), static_cast<U32*>(dst), g);
    default: return copy_typed(static_cast<const U64*>(src), static_cast<U64*>(dst), g);
  }
}

void contiguous_copy(size_t esize, const void* src, void* dst, int64_t n) {
  if (n > 0 && src != dst) strided_copy(esize, src, {1}, dst, {1}, {n});
}

void fill_elements(size_t esize, void* dst, const void* value, int64_t n) {
  if (n > 0) strided_copy(esize, value, {0}, dst, {1}, {n});
}

}  // namespace xjax
