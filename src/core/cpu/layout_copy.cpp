// The strided-copy engine: collapse dimensions, then walk rows (memcpy / fill / strided loop) or
// copy 2-D tiles when the innermost dimensions are swapped (transposes).
#include "core/cpu/layout_copy.h"

#include <algorithm>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/cpu/bytes16.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

// Work below this many bytes stays on the calling thread; chunks handed out are at least this big.
constexpr int64_t kParallelBytes = 256 << 10;

constexpr int64_t kBlock = 256;  // transpose block edge (elements): the unit of parallel work
// Transpose tile edge: one 64-byte cache line of elements (measured best for 1- to 8-byte types).
template <typename U> constexpr int64_t tile_of() { return 64 / sizeof(U); }

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
    } else if (si == -1) {  // rev: read ascending, write descending (prefetchers favour ascending reads)
      const U* s = src - (cnt - 1);
      U* d = dst + (cnt - 1);
      for (int64_t i = 0; i < cnt; ++i) d[-i] = s[i];
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

// Gathers a rows x cols block whose src lines (one per column j) are contiguous along i into the
// row-major buffer buf[i * ld + j]. The SSE2 versions below transpose 2x2 to 16x16 blocks in
// registers with unpack instructions: pure bit moves, so NaN payloads survive.
template <typename U>
void gather_block(const U* src, int64_t sj, U* buf, int64_t ld, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) buf[i * ld + j] = src[j * sj + i];
}

#if defined(__SSE2__)
inline __m128i load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline void store(void* p, __m128i v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }

void gather_block(const U64* src, int64_t sj, U64* buf, int64_t ld, int64_t rows, int64_t cols) {
  const int64_t r2 = rows & ~int64_t(1), c2 = cols & ~int64_t(1);
  for (int64_t j = 0; j < c2; j += 2)
    for (int64_t i = 0; i < r2; i += 2) {
      __m128i a = load(src + j * sj + i), b = load(src + (j + 1) * sj + i);
      store(buf + i * ld + j, _mm_unpacklo_epi64(a, b));
      store(buf + (i + 1) * ld + j, _mm_unpackhi_epi64(a, b));
    }
  if (r2 < rows) gather_block<U64>(src + r2, sj, buf + r2 * ld, ld, rows - r2, c2);
  if (c2 < cols) gather_block<U64>(src + c2 * sj, sj, buf + c2, ld, rows, cols - c2);
}

void gather_block(const U32* src, int64_t sj, U32* buf, int64_t ld, int64_t rows, int64_t cols) {
  const int64_t r4 = rows & ~int64_t(3), c4 = cols & ~int64_t(3);
  for (int64_t j = 0; j < c4; j += 4)
    for (int64_t i = 0; i < r4; i += 4) {
      const U32* s = src + j * sj + i;
      __m128i a = load(s), b = load(s + sj), c = load(s + 2 * sj), d = load(s + 3 * sj);
      __m128i t0 = _mm_unpacklo_epi32(a, b), t1 = _mm_unpacklo_epi32(c, d);
      __m128i t2 = _mm_unpackhi_epi32(a, b), t3 = _mm_unpackhi_epi32(c, d);
      U32* o = buf + i * ld + j;
      store(o, _mm_unpacklo_epi64(t0, t1));
      store(o + ld, _mm_unpackhi_epi64(t0, t1));
      store(o + 2 * ld, _mm_unpacklo_epi64(t2, t3));
      store(o + 3 * ld, _mm_unpackhi_epi64(t2, t3));
    }
  if (r4 < rows) gather_block<U32>(src + r4, sj, buf + r4 * ld, ld, rows - r4, c4);
  if (c4 < cols) gather_block<U32>(src + c4 * sj, sj, buf + c4, ld, rows, cols - c4);
}

void gather_block(const U16* src, int64_t sj, U16* buf, int64_t ld, int64_t rows, int64_t cols) {
  const int64_t r8 = rows & ~int64_t(7), c8 = cols & ~int64_t(7);
  for (int64_t j = 0; j < c8; j += 8)
    for (int64_t i = 0; i < r8; i += 8) {
      const U16* s = src + j * sj + i;
      __m128i v[8], t[8];
      for (int k = 0; k < 8; ++k) v[k] = load(s + k * sj);
      for (int k = 0; k < 4; ++k) {  // pairs of lines interleaved
        t[k] = _mm_unpacklo_epi16(v[2 * k], v[2 * k + 1]);
        t[k + 4] = _mm_unpackhi_epi16(v[2 * k], v[2 * k + 1]);
      }
      for (int h = 0; h < 2; ++h) {  // h = 0: elements 0-3 of each line, h = 1: elements 4-7
        __m128i* q = t + 4 * h;
        __m128i u0 = _mm_unpacklo_epi32(q[0], q[1]), u1 = _mm_unpackhi_epi32(q[0], q[1]);
        __m128i u2 = _mm_unpacklo_epi32(q[2], q[3]), u3 = _mm_unpackhi_epi32(q[2], q[3]);
        U16* o = buf + (i + 4 * h) * ld + j;
        store(o, _mm_unpacklo_epi64(u0, u2));
        store(o + ld, _mm_unpackhi_epi64(u0, u2));
        store(o + 2 * ld, _mm_unpacklo_epi64(u1, u3));
        store(o + 3 * ld, _mm_unpackhi_epi64(u1, u3));
      }
    }
  if (r8 < rows) gather_block<U16>(src + r8, sj, buf + r8 * ld, ld, rows - r8, c8);
  if (c8 < cols) gather_block<U16>(src + c8 * sj, sj, buf + c8, ld, rows, cols - c8);
}

void gather_block(const U8* src, int64_t sj, U8* buf, int64_t ld, int64_t rows, int64_t cols) {
  const int64_t r16 = rows & ~int64_t(15), c16 = cols & ~int64_t(15);
  for (int64_t j = 0; j < c16; j += 16)
    for (int64_t i = 0; i < r16; i += 16) {
      const U8* s = src + j * sj + i;
      __m128i v[16], t[16], u[16];
      for (int k = 0; k < 16; ++k) v[k] = load(s + k * sj);
      for (int k = 0; k < 8; ++k) {  // t[k]: lines 2k, 2k+1 interleaved, elements 0-7; t[k + 8]: 8-15
        t[k] = _mm_unpacklo_epi8(v[2 * k], v[2 * k + 1]);
        t[k + 8] = _mm_unpackhi_epi8(v[2 * k], v[2 * k + 1]);
      }
      for (int h = 0; h < 2; ++h)  // u[8h + k]: lines 4k..4k+3, elements 8h + 0-3; u[8h + k + 4]: 8h + 4-7
        for (int k = 0; k < 4; ++k) {
          u[8 * h + k] = _mm_unpacklo_epi16(t[8 * h + 2 * k], t[8 * h + 2 * k + 1]);
          u[8 * h + k + 4] = _mm_unpackhi_epi16(t[8 * h + 2 * k], t[8 * h + 2 * k + 1]);
        }
      for (int g = 0; g < 4; ++g) {  // quarter g: elements 4g..4g+3 of all 16 lines
        const __m128i* w = u + 4 * g;
        __m128i x0 = _mm_unpacklo_epi32(w[0], w[1]), x1 = _mm_unpacklo_epi32(w[2], w[3]);
        __m128i x2 = _mm_unpackhi_epi32(w[0], w[1]), x3 = _mm_unpackhi_epi32(w[2], w[3]);
        U8* o = buf + (i + 4 * g) * ld + j;
        store(o, _mm_unpacklo_epi64(x0, x1));
        store(o + ld, _mm_unpackhi_epi64(x0, x1));
        store(o + 2 * ld, _mm_unpacklo_epi64(x2, x3));
        store(o + 3 * ld, _mm_unpackhi_epi64(x2, x3));
      }
    }
  if (r16 < rows) gather_block<U8>(src + r16, sj, buf + r16 * ld, ld, rows - r16, c16);
  if (c16 < cols) gather_block<U8>(src + c16 * sj, sj, buf + c16, ld, rows, cols - c16);
}
#endif

// One tile of a transpose: src is contiguous along rows, dst along cols. Each src and dst line
// is touched in one burst through an L1-resident buffer: with power-of-two strides the tile's
// lines share cache sets, and visiting them column by column would evict them between uses.
template <typename U>
void copy_tile(const U* src, U* dst, int64_t rows, int64_t cols, int64_t sj, int64_t dk) {
  constexpr int64_t T = tile_of<U>();
  U buf[T * T];
  gather_block(src, sj, buf, T, rows, cols);
  if (cols == T) {  // a fixed-size copy the compiler inlines
    for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * dk, buf + i * T, T * sizeof(U));
    return;
  }
  for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * dk, buf + i * T, size_t(cols) * sizeof(U));
}

// Transpose-like copies: dimension k is contiguous in src, the last one in dst. Work items are
// (outer index, block of k, block of the last dimension); a block spans a few hundred lines of
// src and of dst, few enough pages for the TLB, and is copied tile by tile.
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
  constexpr int64_t T = tile_of<U>(), B = kBlock;
  const int64_t kblocks = (nk + B - 1) / B, jblocks = (nj + B - 1) / B;
  const int64_t items = numel(outer.n) * kblocks * jblocks;
  const int64_t per_item = std::min(nk, B) * std::min(nj, B);
  const int64_t grain = std::max<int64_t>(1, kParallelBytes / int64_t(sizeof(U)) / per_item);
  parallel_for(items, grain, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      int64_t o = it / (kblocks * jblocks), so = 0, dof = 0;
      const int64_t k0 = (it / jblocks % kblocks) * B, j0 = it % jblocks * B;
      for (int i = int(outer.n.size()) - 1; i >= 0; --i) {
        so += (o % outer.n[i]) * outer.s[i];
        dof += (o % outer.n[i]) * outer.d[i];
        o /= outer.n[i];
      }
      const int64_t k1 = std::min(nk, k0 + B), j1 = std::min(nj, j0 + B);
      for (int64_t kb = k0; kb < k1; kb += T)
        for (int64_t jb = j0; jb < j1; jb += T)
          copy_tile(src + so + kb + jb * sj, dst + dof + kb * dk + jb, std::min(T, k1 - kb), std::min(T, j1 - jb),
                    sj, dk);
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
  if (total < 2 * grain) return copy_range(src, dst, g, 0, total);  // one thread's: no job to make
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
    case 8: return copy_typed(static_cast<const U64*>(src), static_cast<U64*>(dst), g);
    default: return copy_typed(static_cast<const Bytes16*>(src), static_cast<Bytes16*>(dst), g);
  }
}

void contiguous_copy(size_t esize, const void* src, void* dst, int64_t n) {
  if (n <= 0 || src == dst) return;
  if (int64_t(esize) * n <= kParallelBytes) {  // one thread's share: no plan to build
    std::memcpy(dst, src, esize * size_t(n));
    return;
  }
  strided_copy(esize, src, {1}, dst, {1}, {n});
}

void fill_elements(size_t esize, void* dst, const void* value, int64_t n) {
  if (n > 0) strided_copy(esize, value, {0}, dst, {1}, {n});
}

}  // namespace xjax
