// Cholesky and LU kernels. Our matrices are row-major, LAPACK's column-major: a row-major
// matrix read column-major is its transpose. Cholesky uses that for free (the lower factor of a
// row-major matrix is the upper one, potrf 'U', of the same buffer read column-major); LU's row
// pivoting does not survive a transpose, so LU works on a column-major copy, except for small
// matrices, which are factored here in place (a LAPACK call costs more than their arithmetic).
// One large matrix is factored by the blocked algorithms over the pool (linalg_blocked.cpp).
// Complex matrices: a row-major Hermitian A read column-major is conj(A) = U^H U, so L = U^T
// (the same buffer read row-major) has L L^H = A, as for real ones; their LU always runs in
// LAPACK, whose pivots are chosen by |re| + |im|.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

// Up to this order, LU runs here (row-major, no copies) instead of in LAPACK.
constexpr int64_t kSmallLu = 16;

// Cholesky of one matrix into `out` (lower, zero above the diagonal); one that is not positive
// definite gets NaN (NaN + NaN i) in its lower triangle (JAX's result once its tril is applied).
template <typename T>
void cholesky_one(const LapackFns<T>& f, const T* src, T* out, int64_t n, bool blocked) {
  std::memcpy(out, src, size_t(n * n) * sizeof(T));
  int info = 0;
  if (blocked) {
    info = blocked_potrf_upper(f, out, n);
  } else {
    const int ni = int(n);
    f.potrf("U", &ni, out, &ni, &info, 1);
  }
  const T nan = nan_value<T>();
  for (int64_t i = 0; i < n; ++i) {
    if (info != 0) fill(out + i * n, i + 1, nan);
    fill(out + i * n + i + 1, n - i - 1, T(0));  // potrf leaves the other triangle as it was
  }
}

template <typename T>
void cholesky_batch(const Tensor& a, const Tensor& l) {
  const auto& f = lapack_fns<T>(OpId::cholesky_);
  const int64_t n = a.shape.back(), nn = n * n, count = batch_count(a.shape, 2);
  if (n == 0) return;  // LAPACK rejects a leading dimension of 0
  if (use_blocked(n)) {
    for (int64_t b = 0; b < count; ++b) cholesky_one(f, a.as<T>() + b * nn, l.as<T>() + b * nn, n, true);
    return;
  }
  for_batch(count, double(n) * n * n / 3, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) cholesky_one(f, a.as<T>() + b * nn, l.as<T>() + b * nn, n, false);
  });
}

// LAPACK's getf2 on a small row-major matrix in place: per column, the first entry of largest
// magnitude at or below the diagonal is the pivot; its row is swapped up, the column below it is
// scaled by its reciprocal and the trailing block takes the rank-one update. Pivots 0-based.
template <typename T>
void small_lu(T* a, int64_t m, int64_t n, int32_t* piv) {
  const T sfmin = std::numeric_limits<T>::min();
  for (int64_t j = 0; j < std::min(m, n); ++j) {
    int64_t p = j;
    T best = std::abs(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i)
      if (std::abs(a[i * n + j]) > best) best = std::abs(a[i * n + j]), p = i;
    piv[j] = int32_t(p);
    if (p != j)
      for (int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[p * n + c]);
    const T d = a[j * n + j];
    if (d != T(0)) {
      if (std::abs(d) >= sfmin) {
        const T r = T(1) / d;
        for (int64_t i = j + 1; i < m; ++i) a[i * n + j] *= r;
      } else {
        for (int64_t i = j + 1; i < m; ++i) a[i * n + j] /= d;
      }
    }
    for (int64_t i = j + 1; i < m; ++i) {
      const T l = a[i * n + j];
      for (int64_t c = j + 1; c < n; ++c) a[i * n + c] -= l * a[j * n + c];
    }
  }
}

template <typename T>
void lu_batch(const Tensor& a, const Tensor& lu, const Tensor& piv, const Tensor& perm) {
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n);
  const int64_t count = batch_count(a.shape, 2);
  const bool small = !is_complex_v<T> && std::max(m, n) <= kSmallLu;
  const LapackFns<T>* f = small ? nullptr : &lapack_fns<T>(OpId::lu_);
  const bool blocked = !small && use_blocked(k);
  auto run = [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(static_cast<size_t>(small ? 0 : m * n));
    std::vector<int> ipiv(static_cast<size_t>(k));
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * m * n;
      T* out = lu.as<T>() + b * m * n;
      int32_t* pv = piv.as<int32_t>() + b * k;
      if (small) {
        std::memcpy(out, src, size_t(m * n) * sizeof(T));
        if constexpr (!is_complex_v<T>) small_lu(out, m, n, pv);
      } else {
        transpose_parallel(src, cm.data(), m, n);
        if (blocked) {
          blocked_getrf(*f, cm.data(), m, n, ipiv.data());
        } else {
          const int mi = int(m), ni = int(n);
          int info = 0;
          f->getrf(&mi, &ni, cm.data(), &mi, ipiv.data(), &info);  // info > 0 (singular) is no error
        }
        transpose_parallel(cm.data(), out, n, m);
        for (int64_t i = 0; i < k; ++i) pv[i] = ipiv[size_t(i)] - 1;
      }
      pivots_to_permutation(pv, k, perm.as<int32_t>() + b * m, m);
    }
  };
  if (blocked) run(0, count);
  else for_batch(count, double(m) * n * k, run);
}

}  // namespace

void cholesky_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  dispatch_linalg(in[0].dtype, [&](auto t) { cholesky_batch<decltype(t)>(in[0], out[0]); });
}

void lu_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  dispatch_linalg(in[0].dtype, [&](auto t) { lu_batch<decltype(t)>(in[0], out[0], out[1], out[2]); });
}

void lu_pivots_to_permutation_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  const int64_t k = in[0].shape.back(), m = out[0].shape.back();
  const int64_t count = batch_count(in[0].shape, 1);
  for_batch(count, double(m + k), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      pivots_to_permutation(in[0].as<int32_t>() + b * k, k, out[0].as<int32_t>() + b * m, m);
  });
}

}  // namespace xjax
