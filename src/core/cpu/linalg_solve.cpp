// The triangular_solve kernel: op(A) X = B (left_side) or X op(A) = B, op(A) = A, A^T, conj(A) or
// A^H (transpose_a, conjugate_a), using A's lower or upper triangle, optionally with a unit diagonal. Large systems go to BLAS's trsm
// on column-major views of our row-major buffers (no copies: a row-major matrix read
// column-major is its transpose, so the sides swap and the triangle flips); small ones, and all
// of them when BLAS is not loaded, to substitution loops here. Batches split over the pool, and
// so do the right-hand sides of a large system.
#include <algorithm>
#include <cstring>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

using namespace linalg;

// Below this order, substitution here beats a trsm call (whose set-up dominates tiny systems).
constexpr int64_t kSmallOrder = 16;

struct Solve {
  bool left, lower, trans, unit, conj;  // conj: only ever set for complex matrices
};

template <typename T>
T conj_if(const T& x, bool c) {
  if constexpr (is_complex_v<T>) return c ? std::conj(x) : x;
  else return x;
}

// Solves one system by substitution, in place in x (row-major, rows x cols as B).
template <typename T>
void substitute(const T* a, T* x, int64_t m, int64_t rows, int64_t cols, Solve s) {
  auto op = [&](int64_t i, int64_t k) { return conj_if(s.trans ? a[k * m + i] : a[i * m + k], s.conj); };
  const bool lower = s.lower != s.trans;  // the triangle op(A) has
  if (s.left) {  // op(A) X = B: row i of X from the rows solved before it
    const int64_t n = cols;
    for (int64_t t = 0; t < m; ++t) {
      const int64_t i = lower ? t : m - 1 - t;
      T* xi = x + i * n;
      for (int64_t k = lower ? 0 : i + 1; k < (lower ? i : m); ++k) {
        const T c = op(i, k);
        const T* xk = x + k * n;
        for (int64_t j = 0; j < n; ++j) xi[j] -= c * xk[j];
      }
      if (!s.unit) {
        const T d = op(i, i);
        for (int64_t j = 0; j < n; ++j) xi[j] /= d;
      }
    }
  } else {  // X op(A) = B: column j of X from the columns solved before it
    for (int64_t r = 0; r < rows; ++r) {
      T* xr = x + r * m;
      for (int64_t t = 0; t < m; ++t) {
        const int64_t j = lower ? m - 1 - t : t;
        T acc = xr[j];
        for (int64_t i = lower ? j + 1 : 0; i < (lower ? m : j); ++i) acc -= xr[i] * op(i, j);
        xr[j] = s.unit ? acc : acc / op(j, j);
      }
    }
  }
}

// One system on trsm, its right-hand sides [r0, r1) (columns of B if left_side, else rows). A
// conjugate without transpose has no trsm flag: `a` is then conj(A) already (solve_batch).
template <typename T>
void trsm_part(const LapackFns<T>& f, const T* a, T* x, int64_t m, int64_t cols, int64_t r0, int64_t r1, Solve s) {
  const char* side = s.left ? "R" : "L";
  const char* uplo = s.lower ? "U" : "L";
  const char* ta = s.trans ? (s.conj ? "C" : "T") : "N";
  const char* diag = s.unit ? "U" : "N";
  const int mi = int(m), nr = int(r1 - r0);
  const T one = 1;
  if (s.left) {  // X^T op(A)^T = B^T: B^T is column-major cols x m
    const int ldb = int(cols);
    f.trsm(side, uplo, ta, diag, &nr, &mi, &one, a, &mi, x + r0, &ldb, 1, 1, 1, 1);
  } else {  // op(A)^T X^T = B^T: B^T is column-major m x rows
    f.trsm(side, uplo, ta, diag, &mi, &nr, &one, a, &mi, x + r0 * m, &mi, 1, 1, 1, 1);
  }
}

template <typename T>
void solve_batch(const Tensor& a, const Tensor& b, const Tensor& x, Solve s) {
  const int64_t m = a.shape.back(), rows = b.shape[b.shape.size() - 2], cols = b.shape.back();
  const int64_t count = batch_count(a.shape, 2), nrhs = s.left ? cols : rows;
  std::memcpy(x.data, b.data, size_t(b.size()) * sizeof(T));
  if (m == 0 || nrhs == 0) return;
  const LapackApi* api = lapack_api();
  const LapackFns<T>* f = api && m > kSmallOrder ? &api->fns<T>() : nullptr;
  const bool conj_copy = f && s.conj && !s.trans;
  for_batch(count, double(m) * m * nrhs, [&](int64_t b0, int64_t b1) {
    std::vector<T> conj_a(static_cast<size_t>(conj_copy ? m * m : 0));
    for (int64_t i = b0; i < b1; ++i) {
      const T* ai = a.as<T>() + i * m * m;
      T* xi = x.as<T>() + i * rows * cols;
      if (!f) {
        substitute(ai, xi, m, rows, cols, s);
        continue;
      }
      if (conj_copy) {
        for (int64_t e = 0; e < m * m; ++e) conj_a[size_t(e)] = conj_if(ai[e], true);
        ai = conj_a.data();
      }
      // Many right-hand sides: shared out (inline when the batch already is).
      const int64_t grain = std::max<int64_t>(16, int64_t(1e5 / double(m * m)));
      parallel_for(nrhs, grain, [&](int64_t r0, int64_t r1) { trsm_part(*f, ai, xi, m, cols, r0, r1, s); });
    }
  });
}

}  // namespace

void triangular_solve_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool conj = is_complex(in[0].dtype) && attrs.get_int_or("conjugate_a", 0) != 0;  // no-op for real A
  const Solve s{attrs.get_int_or("left_side", 0) != 0, attrs.get_int_or("lower", 0) != 0,
                attrs.get_int_or("transpose_a", 0) != 0, attrs.get_int_or("unit_diagonal", 0) != 0, conj};
  dispatch_linalg(in[0].dtype, [&](auto t) { solve_batch<decltype(t)>(in[0], in[1], out[0], s); });
}

}  // namespace xjax
