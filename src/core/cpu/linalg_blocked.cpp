// Blocked Cholesky and LU of one large column-major matrix over the current pool: LAPACK's
// right-looking algorithms, each step a serial factorization of a narrow panel followed by
// updates of the trailing columns, which are independent per column and so split over threads
// (BLAS itself runs single-threaded on each; blas.cpp).
#include <algorithm>

#include "core/cpu/linalg_common.h"
#include "core/thread_pool.h"

namespace xjax::linalg {

namespace {
constexpr int64_t kMinOrder = 192;  // below, one LAPACK call beats the steps' synchronisation
constexpr int64_t kColumnGrain = 32;

int64_t panel_width(int64_t n) { return n >= 1024 ? 128 : 64; }

// fn(c0, c1) over [0, n) in blocks of kColumnGrain columns whose bounds do not depend on the number
// of threads: every BLAS call, and so every rounding, is the same however the blocks are shared out.
template <typename Fn>
void for_column_blocks(int64_t n, const Fn& fn) {
  parallel_for((n + kColumnGrain - 1) / kColumnGrain, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(b * kColumnGrain, std::min(n, (b + 1) * kColumnGrain));
  });
}
}  // namespace

// By order alone (never by the thread count or the batch size): a matrix's factors are the same
// bits whatever machine, pool or batch it is factored in.
bool use_blocked(int64_t order) { return order >= kMinOrder; }

// A = U^H U with U upper, U overwriting A's upper triangle (^H: the transpose of a real matrix).
// Per step k: U11 = potrf(A11), then U12 = U11^-H A12 and A22 -= U12^H U12, both by column blocks
// (the latter over the upper triangle: the rows above a block by gemm, its diagonal block by syrk,
// or herk for complex matrices).
template <typename T>
int blocked_potrf_upper(const LapackFns<T>& f, T* a, int64_t n) {
  const int64_t nb = panel_width(n);
  const int ld = int(n);
  const T one = 1, minus_one = -1;
  const real_of<T> rone = 1, rminus_one = -1;
  const char* adj = adjoint_op<T>();
  for (int64_t k = 0; k < n; k += nb) {
    const int b = int(std::min(nb, n - k));
    int info = 0;
    T* a11 = a + k + k * n;
    f.potrf("U", &b, a11, &ld, &info, 1);
    if (info != 0) return int(k) + info;
    const int64_t rest = n - k - b;
    if (rest == 0) break;
    T* a12 = a + k + (k + b) * n;
    T* a22 = a + (k + b) + (k + b) * n;
    for_column_blocks(rest, [&](int64_t c0, int64_t c1) {
      const int w = int(c1 - c0);
      f.trsm("L", "U", adj, "N", &b, &w, &one, a11, &ld, a12 + c0 * n, &ld, 1, 1, 1, 1);
    });
    for_column_blocks(rest, [&](int64_t c0, int64_t c1) {
      const int w = int(c1 - c0), above = int(c0);
      if (above > 0)
        f.gemm(adj, "N", &above, &w, &b, &minus_one, a12, &ld, a12 + c0 * n, &ld, &one, a22 + c0 * n, &ld, 1, 1);
      if constexpr (is_complex_v<T>)
        f.herk("U", "C", &w, &b, &rminus_one, a12 + c0 * n, &ld, &rone, a22 + c0 + c0 * n, &ld, 1, 1);
      else
        f.syrk("U", "T", &w, &b, &rminus_one, a12 + c0 * n, &ld, &rone, a22 + c0 + c0 * n, &ld, 1, 1);
    });
  }
  return 0;
}

// P A = L U. Per step j: getrf of the panel (rows j.., columns j..j+b), then for every other
// column the panel's row swaps, and right of the panel U12 = L11^-1 A12 and A22 -= L21 U12.
template <typename T>
void blocked_getrf(const LapackFns<T>& f, T* a, int64_t m, int64_t n, int* ipiv) {
  const int64_t k = std::min(m, n), nb = panel_width(k);
  const int ld = int(m), inc = 1;
  const T one = 1, minus_one = -1;
  for (int64_t j = 0; j < k; j += nb) {
    const int b = int(std::min(nb, k - j)), rows = int(m - j);
    int info = 0;
    f.getrf(&rows, &b, a + j + j * m, &ld, ipiv + j, &info);  // info > 0 (singular) is no error
    for (int64_t i = j; i < j + b; ++i) ipiv[i] += int(j);     // panel rows -> matrix rows
    const int k1 = int(j) + 1, k2 = int(j) + b, below = int(m - j - b);
    const int64_t right0 = j + b;
    // Columns [0, j) then [j + b, n), as one range.
    for_column_blocks(j + (n - right0), [&](int64_t t0, int64_t t1) {
      if (t0 < j) {
        const int w = int(std::min(t1, j) - t0);
        f.laswp(&w, a + t0 * m, &ld, &k1, &k2, ipiv, &inc);
      }
      const int64_t c0 = right0 + std::max<int64_t>(t0 - j, 0), c1 = right0 + std::max<int64_t>(t1 - j, 0);
      if (c1 <= c0) return;
      const int w = int(c1 - c0);
      f.laswp(&w, a + c0 * m, &ld, &k1, &k2, ipiv, &inc);
      f.trsm("L", "L", "N", "U", &b, &w, &one, a + j + j * m, &ld, a + j + c0 * m, &ld, 1, 1, 1, 1);
      if (below > 0)
        f.gemm("N", "N", &below, &w, &b, &minus_one, a + (j + b) + j * m, &ld, a + j + c0 * m, &ld, &one,
               a + (j + b) + c0 * m, &ld, 1, 1);
    });
  }
}

#define XJAX_BLOCKED(T)                                                    \
  template int blocked_potrf_upper<T>(const LapackFns<T>&, T*, int64_t); \
  template void blocked_getrf<T>(const LapackFns<T>&, T*, int64_t, int64_t, int*);
XJAX_BLOCKED(float)
XJAX_BLOCKED(double)
XJAX_BLOCKED(std::complex<float>)
XJAX_BLOCKED(std::complex<double>)
#undef XJAX_BLOCKED

}  // namespace xjax::linalg
