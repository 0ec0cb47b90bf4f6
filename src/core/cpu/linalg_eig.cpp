// Symmetric / Hermitian eigendecomposition (syevd, heevd) and SVD (gesdd) kernels. Eigenvalues
// and singular values are real (R) for complex matrices too. Non-finite input gives NaN results
// without calling LAPACK (as JAX returns; LAPACK's iterations are not meant for it).
#include <algorithm>
#include <cstring>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

template <typename T>
bool finite_triangle(const T* a, int64_t n, bool lower) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = lower ? 0 : i; j < (lower ? i + 1 : n); ++j)
      if (!finite_value(a[i * n + j])) return false;
  return true;
}

template <typename T>
bool finite(const T* a, int64_t size) {
  for (int64_t i = 0; i < size; ++i)
    if (!finite_value(a[i])) return false;
  return true;
}

// LAPACK sees the column-major matrix A (a transposed copy), as under JAX, so that it reads the
// same triangle and gives the same eigenvectors (their signs included) as JAX does. syevd returns
// them in the columns of the column-major result: transposed back at the end.
template <typename T>
struct Syevd {
  const LapackFns<T>& f;
  int n;
  const char* uplo;
  // heevd's real workspace, of LAPACK's documented size for jobz = 'V' (its query gives the same).
  int lrwork() const { return n <= 1 ? 1 : 1 + 5 * n + 2 * n * n; }
  void operator()(T* a, real_of<T>* w, T* work, const int* lwork, real_of<T>* rwork, int* iwork, const int* liwork,
                  int* info) const {
    if constexpr (is_complex_v<T>) {
      const int lr = *lwork == -1 ? -1 : lrwork();  // a query writes its sizes to work, rwork, iwork
      f.heevd("V", uplo, &n, a, &n, w, work, lwork, rwork, &lr, iwork, liwork, info, 1, 1);
    } else {
      f.syevd("V", uplo, &n, a, &n, w, work, lwork, iwork, liwork, info, 1, 1);
    }
  }
};

template <typename T>
void eigh_batch(const Tensor& a, const Tensor& v, const Tensor& w, bool lower) {
  using R = real_of<T>;
  const int64_t n = a.shape.back(), count = batch_count(a.shape, 2);
  if (n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::eigh_);
  const int query = -1;
  const Syevd<T> syevd{f, int(n), lower ? "L" : "U"};
  const auto sizes = workspace(Routine::syevd, a.dtype, {n, 0, 0, 0}, [&] {
    T wk = 0, dummy = 0;
    R rdummy = 0;
    int iwk = 0, info = 0;
    syevd(&dummy, &rdummy, &wk, &query, &rdummy, &iwk, &query, &info);
    return std::array<int, 2>{lwork_of(wk, OpId::eigh_), std::max(1, iwk)};
  });
  for_batch(count, (is_complex_v<T> ? 36.0 : 9.0) * n * n * n, [&](int64_t b0, int64_t b1) {
    std::vector<T> work(static_cast<size_t>(sizes[0]));
    std::vector<R> rwork(static_cast<size_t>(is_complex_v<T> ? syevd.lrwork() : 0));
    std::vector<int> iwork(static_cast<size_t>(sizes[1]));
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * n * n;
      T* vb = v.as<T>() + b * n * n;
      R* wb = w.as<R>() + b * n;
      int info = -1;
      if (finite_triangle(src, n, lower)) {
        transpose(src, vb, n, n);
        syevd(vb, wb, work.data(), &sizes[0], rwork.data(), iwork.data(), &sizes[1], &info);
      }
      if (info != 0) {  // no convergence, or non-finite input: NaN, as JAX
        fill_nan(vb, n * n);
        fill_nan(wb, n);
        continue;
      }
      transpose_square_in_place(vb, n);
    }
  });
}

// gesdd of the column-major A (a transposed copy), as under JAX, for the same singular vectors
// (signs included); U (m x uc) and V^T (vr x n) come back column-major and are transposed into
// our row-major results (V^H for complex matrices, as JAX's vh).
template <typename T>
void svd_batch(const Tensor& a, const std::vector<Tensor>& out, bool full, bool uv) {
  using R = real_of<T>;
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n);
  const int64_t count = batch_count(a.shape, 2);
  const int64_t uc = full ? m : k, vr = full ? n : k;  // u is m x uc, vt is vr x n
  if (count == 0) return;
  if (k == 0) {  // no singular values; the complete bases are identities (as JAX)
    if (uv && full)
      for (int64_t b = 0; b < count; ++b) eye(out[1].as<T>() + b * m * m, m, m), eye(out[2].as<T>() + b * n * n, n, n);
    return;
  }
  const auto& f = lapack_fns<T>(OpId::svd_);
  const char* jobz = uv ? (full ? "A" : "S") : "N";
  const int mi = int(m), ni = int(n), ldu = uv ? int(m) : 1, ldvt = uv ? int(vr) : 1, query = -1;
  // Complex gesdd's real workspace, of LAPACK's documented size.
  const int64_t mx = std::max(m, n);
  const int64_t lrwork = !is_complex_v<T> ? 0 : uv ? std::max(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k) : 7 * k;
  auto gesdd = [&](T* x, R* s, T* u, T* vt, T* work, const int* lwork, R* rwork, int* iwork, int* info) {
    if constexpr (is_complex_v<T>)
      f.gesdd(jobz, &mi, &ni, x, &mi, s, u, &ldu, vt, &ldvt, work, lwork, rwork, iwork, info, 1);
    else
      f.gesdd(jobz, &mi, &ni, x, &mi, s, u, &ldu, vt, &ldvt, work, lwork, iwork, info, 1);
  };
  const int lwork = workspace(Routine::gesdd, a.dtype, {m, n, uv ? (full ? 2 : 1) : 0, 0}, [&] {
    T wk = 0, dummy = 0;
    R rdummy = 0;
    int info = 0, idummy = 0;
    gesdd(&dummy, &rdummy, &dummy, &dummy, &wk, &query, &rdummy, &idummy, &info);
    return std::array<int, 2>{lwork_of(wk, OpId::svd_), 0};
  })[0];
  for_batch(count, (is_complex_v<T> ? 80.0 : 20.0) * m * n * k, [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(static_cast<size_t>(m * n)), work(static_cast<size_t>(lwork));
    std::vector<R> rwork(static_cast<size_t>(std::max<int64_t>(lrwork, 1)));
    std::vector<T> ucm(static_cast<size_t>(uv ? m * uc : 1)), vtcm(static_cast<size_t>(uv ? vr * n : 1));
    std::vector<int> iwork(static_cast<size_t>(8 * k));
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * m * n;
      R* s = out[0].as<R>() + b * k;
      T* u = uv ? out[1].as<T>() + b * m * uc : nullptr;
      T* vt = uv ? out[2].as<T>() + b * vr * n : nullptr;
      int info = -1;
      if (finite(src, m * n)) {
        transpose(src, cm.data(), m, n);
        gesdd(cm.data(), s, ucm.data(), vtcm.data(), work.data(), &lwork, rwork.data(), iwork.data(), &info);
      }
      if (info != 0) {  // no convergence, or non-finite input: NaN, as JAX
        fill_nan(s, k);
        if (uv) fill_nan(u, m * uc), fill_nan(vt, vr * n);
      } else if (uv) {
        transpose(ucm.data(), u, uc, m);
        transpose(vtcm.data(), vt, n, vr);
      }
    }
  });
}

}  // namespace

void eigh_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool lower = attrs.get_int_or("lower", 1) != 0;
  dispatch_linalg(in[0].dtype, [&](auto t) { eigh_batch<decltype(t)>(in[0], out[0], out[1], lower); });
}

void svd_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool full = attrs.get_int_or("full_matrices", 1) != 0, uv = attrs.get_int_or("compute_uv", 1) != 0;
  dispatch_linalg(in[0].dtype, [&](auto t) { svd_batch<decltype(t)>(in[0], out, full, uv); });
}

}  // namespace xjax
