// The built-in kernels' code, compiled once per instruction set. Each
// contraction_kernels_<isa>.cpp includes this file inside `#pragma GCC target(...)` after
// defining XJAX_ISA_NS (its namespace), XJAX_ISA_VEC_BYTES (vector width) and XJAX_ISA_MR (rows of
// the micro-tile). Nothing here calls library code, so no function compiled for a wider
// instruction set can leak into code that runs on any CPU.
//
// The gemm is the usual packed scheme: B is packed into panels of NR columns ([k][j], read
// contiguously), A into panels of MR rows, and a micro-kernel keeps an MR x NR tile of C in
// registers while it walks k, broadcasting one element of A against two vectors of B per row.

#include <type_traits>  // (std::integral_constant: no code of its own)

namespace xjax::contraction::XJAX_ISA_NS {

namespace {

template <typename T>
struct Tile {
  static constexpr int kLanes = XJAX_ISA_VEC_BYTES / int(sizeof(T));
  static constexpr int NR = 2 * kLanes;  // two vectors of columns
  static constexpr int MR = XJAX_ISA_MR;
  // Depth of a packed block: the MR x KC panel of A stays in L1 (18 KiB of floats with AVX-512)
  // while kc x NR panels of B stream by from L2. 384 measured best of 128..768 (1024^3 products).
  static constexpr int64_t KC = 384;
  // Row stride of a packed A panel: one cache line more than KC, so that its MR rows fall in
  // different L1 sets (a power-of-two stride piles them into a few).
  static constexpr int64_t KA = KC + 64 / int64_t(sizeof(T));
  static constexpr int64_t MC = MR * 8;
};

// The vector type of T (a struct: an alias template would drop the attribute).
template <typename T>
struct Vec {
  typedef T type __attribute__((vector_size(XJAX_ISA_VEC_BYTES)));
};

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Packs B into panels of NR columns, [k][j] within a panel (see Kernels::pack_b).
template <typename T>
void pack_b(const T* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, T* dst) {
  constexpr int NR = Tile<T>::NR;
  for (int64_t q = 0; q < nc; q += NR) {
    const int64_t nr = min64(NR, nc - q);
    T* d = dst + q * kc;
    if (cs == 1 && nr == NR) {
      for (int64_t k = 0; k < kc; ++k)
        for (int j = 0; j < NR; ++j) d[k * NR + j] = b[k * rs + q + j];
    } else if (cs == 1) {
      for (int64_t k = 0; k < kc; ++k)
        for (int j = 0; j < NR; ++j) d[k * NR + j] = j < nr ? b[k * rs + q + j] : T(0);
    } else {  // columns contiguous (B used transposed): a strided gather, paid once per B block
      for (int j = 0; j < NR; ++j) {
        if (j < nr) {
          const T* col = b + (q + j) * cs;
          for (int64_t k = 0; k < kc; ++k) d[k * NR + j] = col[k * rs];
        } else {
          for (int64_t k = 0; k < kc; ++k) d[k * NR + j] = T(0);
        }
      }
    }
  }
}

// Packs A[0:mc, 0:kc] into panels of MR rows (panel p at dst + p*KA), zero-padded to whole
// panels, keeping A's own orientation so that packing is a plain copy: rows contiguous give
// rows KA apart, columns contiguous give [k][MR] (kRows false).
template <typename T>
void pack_a(const T* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, T* dst) {
  constexpr int MR = Tile<T>::MR;
  constexpr int64_t KA = Tile<T>::KA;
  for (int64_t p = 0; p < mc; p += MR) {
    const int64_t mr = min64(MR, mc - p);
    T* d = dst + p * KA;
    if (cs == 1) {
      for (int i = 0; i < MR; ++i) {
        const T* row = a + (p + i) * rs;
        T* out = d + i * KA;
        if (i < mr) {
          for (int64_t k = 0; k < kc; ++k) out[k] = row[k];
        } else {
          for (int64_t k = 0; k < kc; ++k) out[k] = T(0);
        }
      }
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        const T* col = a + k * cs + p * rs;
        for (int i = 0; i < MR; ++i) d[k * MR + i] = i < mr ? col[i * rs] : T(0);
      }
    }
  }
}

// Stores rows [0, mr) x columns [0, nr) of an R x NR tile of accumulators (R x 2 vectors) at
// row(i), or adds them to what is there (old + tile, as every caller of the kernels adds).
template <typename T, int R, typename Row>
inline void store_tile(const typename Vec<T>::type (&acc)[R][2], Row row, bool accumulate, int64_t mr, int64_t nr) {
  typedef typename Vec<T>::type V;
  constexpr int L = Tile<T>::kLanes;
  if (nr == 2 * L) {  // whole rows of the tile: vector stores
    for (int i = 0; i < R; ++i) {
      if (i >= mr) break;
      T* c = row(i);
      for (int h = 0; h < 2; ++h) {
        V v = acc[i][h];
        if (accumulate) {
          V old;
          __builtin_memcpy(&old, c + h * L, sizeof(V));
          v = old + v;
        }
        __builtin_memcpy(c + h * L, &v, sizeof(V));
      }
    }
    return;
  }
  T tile[R][2 * L];
  __builtin_memcpy(tile, acc, sizeof(tile));
  for (int64_t i = 0; i < mr; ++i) {
    T* c = row(i);
    for (int64_t j = 0; j < nr; ++j) c[j] = accumulate ? c[j] + tile[i][j] : tile[i][j];
  }
}

// One R x NR tile of C from packed panels (R <= MR rows of the panel); mr x nr of it is stored
// (the rest is padding). GCC vector types rather than plain loops here: the vectoriser's choice of
// loop varies with the element type (for double it vectorised across rows and spilled), this form
// always keeps the tile in registers as R x 2 vectors and issues one broadcast and two FMAs per row
// and k.
// kStrided: A and B read where they lie instead (small products, gemm_small): row i of B at b + i * ldb
// (NR columns of it), A's rows (kRows) or columns lda apart.
template <typename T, bool kRows, int R = Tile<T>::MR, bool kStrided = false>
inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict c, int64_t ldc,
                         bool accumulate, int64_t mr, int64_t nr, int64_t lda = 0, int64_t ldb = 0) {
  typedef typename Vec<T>::type V;
  constexpr int MR = Tile<T>::MR, L = Tile<T>::kLanes;
  // A's strides along k and along its rows, and B's along k: the packed panels' or the caller's.
  const int64_t a_k = kRows ? 1 : (kStrided ? lda : MR), a_i = kRows ? (kStrided ? lda : Tile<T>::KA) : 1;
  const int64_t b_k = kStrided ? ldb : 2 * L;
  V acc[R][2];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = V{};
  for (int64_t k = 0; k < kc; ++k) {
    V b0, b1;
    __builtin_memcpy(&b0, b + k * b_k, sizeof(V));
    __builtin_memcpy(&b1, b + k * b_k + L, sizeof(V));
    const T* ak = a + k * a_k;
    for (int i = 0; i < R; ++i) {
      const V ai = ak[i * a_i] - V{};  // a broadcast (x - 0 is exactly x; x + 0 would not fold: -0 + 0 = +0)
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
  }
  store_tile<T, R>(acc, [&](int64_t i) { return c + i * ldc; }, accumulate, mr, nr);
}

// The rows of the smallest register tile that covers mr rows: a third, two thirds or all of MR
// (where MR divides by 3), so that a panel's last few rows do not cost a whole tile's work. Each
// element of C is the same sum in the same order whichever tile computes it.
template <typename T>
inline int64_t tile_rows(int64_t mr) {
  constexpr int MR = Tile<T>::MR;
  if constexpr (MR % 3 == 0) {
    if (mr <= MR / 3) return MR / 3;
    if (mr <= 2 * MR / 3) return 2 * MR / 3;
  }
  return MR;
}

// kernel(std::integral_constant<int, R>) for R = tile_rows<T>(mr): a tile of R rows, compiled once
// per height.
template <typename T, typename Kernel>
inline void with_tile_rows(int64_t mr, Kernel kernel) {
  constexpr int MR = Tile<T>::MR;
  if constexpr (MR % 3 == 0) {
    if (mr <= MR / 3) return kernel(std::integral_constant<int, MR / 3>{});
    if (mr <= 2 * MR / 3) return kernel(std::integral_constant<int, 2 * MR / 3>{});
  }
  kernel(std::integral_constant<int, MR>{});
}

// micro_kernel over the tile of tile_rows(mr) rows.
template <typename T, bool kRows, bool kStrided = false>
inline void tile_kernel(int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict c, int64_t ldc,
                        bool accumulate, int64_t mr, int64_t nr, int64_t lda = 0, int64_t ldb = 0) {
  with_tile_rows<T>(mr, [&](auto rows) {
    micro_kernel<T, kRows, decltype(rows)::value, kStrided>(kc, a, b, c, ldc, accumulate, mr, nr, lda, ldb);
  });
}

// C[0:m, 0:n] (= or +=) A B for a product small enough to stay in cache (see Kernels::gemm_small):
// A and B read in place, except a panel of B narrower than NR columns and a tile of A that would
// read rows past the last (packed, zero-padded, into b_buf / a_buf). The same sums in the same
// order as gemm_block's.
template <typename T>
void gemm_small(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t ldb,
                T* c, int64_t ldc, bool accumulate, T* a_buf, T* b_buf) {
  constexpr int MR = Tile<T>::MR, NR = Tile<T>::NR;
  const bool rows = a_cs == 1;  // else a_rs == 1: A's columns contiguous
  for (int64_t q = 0; q < n; q += NR) {
    const int64_t nr = min64(NR, n - q);
    const T* bq = b + q;
    int64_t b_k = ldb;
    if (nr < NR) {
      pack_b(bq, ldb, 1, k, nr, b_buf);
      bq = b_buf, b_k = NR;
    }
    for (int64_t p = 0; p < m; p += MR) {
      const int64_t mr = min64(MR, m - p);
      const T* ap = a + p * a_rs;
      T* cp = c + p * ldc + q;
      if (mr < tile_rows<T>(mr)) {  // rows past the last: a zero-padded copy
        pack_a(ap, a_rs, a_cs, mr, k, a_buf);
        if (rows) {
          tile_kernel<T, true, true>(k, a_buf, bq, cp, ldc, accumulate, mr, nr, Tile<T>::KA, b_k);
        } else {
          tile_kernel<T, false, true>(k, a_buf, bq, cp, ldc, accumulate, mr, nr, MR, b_k);
        }
      } else if (rows) {
        tile_kernel<T, true, true>(k, ap, bq, cp, ldc, accumulate, mr, nr, a_rs, b_k);
      } else {
        tile_kernel<T, false, true>(k, ap, bq, cp, ldc, accumulate, mr, nr, a_cs, b_k);
      }
    }
  }
}

// An R x NR tile of C from rows read through pointers: the sum over taps t < nt of A_t B_t, row i
// of A_t the kc elements at a_rows[t * lda + i], B packed for nt * kc rows. micro_kernel's sums in
// its order (k = t * kc + j); stored at c_rows[i] + q.
template <typename T, int R>
inline void indirect_kernel(int64_t nt, int64_t kc, const T* const* a_rows, int64_t lda, const T* __restrict b,
                            T* const* c_rows, int64_t q, bool accumulate, int64_t mr, int64_t nr) {
  typedef typename Vec<T>::type V;
  constexpr int L = Tile<T>::kLanes;
  V acc[R][2];
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = V{};
  for (int64_t t = 0; t < nt; ++t) {
    const T* ap[R];
    for (int i = 0; i < R; ++i) ap[i] = a_rows[t * lda + i];
    const T* bt = b + t * kc * 2 * L;
    for (int64_t k = 0; k < kc; ++k) {
      V b0, b1;
      __builtin_memcpy(&b0, bt + k * 2 * L, sizeof(V));
      __builtin_memcpy(&b1, bt + k * 2 * L + L, sizeof(V));
      for (int i = 0; i < R; ++i) {
        const V ai = ap[i][k] - V{};  // a broadcast, as in micro_kernel
        acc[i][0] += ai * b0;
        acc[i][1] += ai * b1;
      }
    }
  }
  store_tile<T, R>(acc, [&](int64_t i) { return c_rows[i] + q; }, accumulate, mr, nr);
}

template <typename T>
void gemm_indirect(int64_t mc, int64_t nt, int64_t kc, const T* const* a_rows, int64_t lda, const T* b_packed,
                   int64_t nc, T* const* c_rows, bool accumulate) {
  constexpr int MR = Tile<T>::MR, NR = Tile<T>::NR;
  for (int64_t p = 0; p < mc; p += MR)
    for (int64_t q = 0; q < nc; q += NR) {
      const int64_t mr = min64(MR, mc - p), nr = min64(NR, nc - q);
      const T* const* ar = a_rows + p;
      T* const* cr = c_rows + p;
      const T* bq = b_packed + q * nt * kc;
      with_tile_rows<T>(mr, [&](auto rows) {
        indirect_kernel<T, decltype(rows)::value>(nt, kc, ar, lda, bq, cr, q, accumulate, mr, nr);
      });
    }
}

template <typename T>
void gemm_block(const T* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, const T* b_packed, int64_t nc, T* c,
                int64_t ldc, bool accumulate, T* a_buf) {
  constexpr int MR = Tile<T>::MR, NR = Tile<T>::NR;
  constexpr int64_t KA = Tile<T>::KA;
  pack_a(a, rs, cs, mc, kc, a_buf);
  // The A panel (MR x kc) stays in L1 while the B panels stream past it from L2.
  for (int64_t p = 0; p < mc; p += MR) {
    for (int64_t q = 0; q < nc; q += NR) {
      const T* ap = a_buf + p * KA;
      T* cp = c + p * ldc + q;
      if (cs == 1) {
        tile_kernel<T, true>(kc, ap, b_packed + q * kc, cp, ldc, accumulate, min64(MR, mc - p), min64(NR, nc - q));
      } else {
        tile_kernel<T, false>(kc, ap, b_packed + q * kc, cp, ldc, accumulate, min64(MR, mc - p), min64(NR, nc - q));
      }
    }
  }
}

// Sums of products of R rows of A with x. Each row keeps 2 vectors of partial sums (one per lane)
// so that float sums vectorise without reassociation; the lanes are added in a fixed order, and
// every row is summed the same way whatever R, so results do not depend on how rows are split.
template <typename T, int R>
inline void rows_dot(int64_t k, const T* a, int64_t lda, const T* x, T* y) {
  typedef T V __attribute__((vector_size(XJAX_ISA_VEC_BYTES)));
  constexpr int L = Tile<T>::kLanes;
  V acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = V{};
  int64_t kk = 0;
  for (; kk + 2 * L <= k; kk += 2 * L) {
    V x0, x1;
    __builtin_memcpy(&x0, x + kk, sizeof(V));
    __builtin_memcpy(&x1, x + kk + L, sizeof(V));
    for (int r = 0; r < R; ++r) {
      V a0, a1;
      __builtin_memcpy(&a0, a + r * lda + kk, sizeof(V));
      __builtin_memcpy(&a1, a + r * lda + kk + L, sizeof(V));
      acc[r][0] += a0 * x0;
      acc[r][1] += a1 * x1;
    }
  }
  for (int r = 0; r < R; ++r) {
    T lanes[2 * L];
    __builtin_memcpy(lanes, acc[r], sizeof(lanes));
    T s = T(0);
    for (int j = 0; j < 2 * L; ++j) s += lanes[j];
    for (int64_t t = kk; t < k; ++t) s += a[r * lda + t] * x[t];
    y[r] = s;
  }
}

template <typename T>
void gemv_rows(int64_t m, int64_t k, const T* a, int64_t lda, const T* x, T* y) {
  int64_t i = 0;
  constexpr int R = XJAX_ISA_VEC_BYTES == 64 ? 8 : 4;  // rows sharing each load of x (2R accumulators)
  for (; i + R <= m; i += R) rows_dot<T, R>(k, a + i * lda, lda, x, y + i);
  for (; i < m; ++i) rows_dot<T, 1>(k, a + i * lda, lda, x, y + i);
}

template <typename T>
void gemv_cols(int64_t m, int64_t k, const T* a, int64_t lda, const T* x, T* y) {
  constexpr int64_t kBlock = 2048;  // a block of y stays in L1 while the rows of A stream by
  for (int64_t i0 = 0; i0 < m; i0 += kBlock) {
    const int64_t n = min64(kBlock, m - i0);
    T* __restrict yb = y + i0;
    for (int64_t i = 0; i < n; ++i) yb[i] = T(0);
    int64_t kk = 0;
    for (; kk + 4 <= k; kk += 4) {  // four rows per pass over y; sums still run in k order
      const T x0 = x[kk], x1 = x[kk + 1], x2 = x[kk + 2], x3 = x[kk + 3];
      const T* r0 = a + kk * lda + i0;
      const T* r1 = r0 + lda;
      const T* r2 = r1 + lda;
      const T* r3 = r2 + lda;
      for (int64_t i = 0; i < n; ++i) {
        T s = yb[i];
        s += x0 * r0[i];
        s += x1 * r1[i];
        s += x2 * r2[i];
        s += x3 * r3[i];
        yb[i] = s;
      }
    }
    for (; kk < k; ++kk) {
      const T xv = x[kk];
      const T* r = a + kk * lda + i0;
      for (int64_t i = 0; i < n; ++i) yb[i] += xv * r[i];
    }
  }
}

}  // namespace

template <typename T>
Kernels<T> make_kernels() {
  Kernels<T> k;
  k.mr = Tile<T>::MR;
  k.nr = Tile<T>::NR;
  k.kc = Tile<T>::KC;
  k.a_buf = Tile<T>::MC * Tile<T>::KA;
  k.mc = Tile<T>::MC;
  k.pack_b = &pack_b<T>;
  k.gemm_block = &gemm_block<T>;
  k.ka = Tile<T>::KA;
  k.gemm_indirect = &gemm_indirect<T>;
  k.gemm_small = &gemm_small<T>;
  k.gemv_rows = &gemv_rows<T>;
  k.gemv_cols = &gemv_cols<T>;
  return k;
}

template Kernels<float> make_kernels<float>();
template Kernels<double> make_kernels<double>();
template Kernels<uint32_t> make_kernels<uint32_t>();
template Kernels<uint64_t> make_kernels<uint64_t>();

}  // namespace xjax::contraction::XJAX_ISA_NS
