// Symmetric eigendecomposition (syevd) and SVD (gesdd) kernels. Non-finite input gives NaN
// results without calling LAPACK (as JAX returns; LAPACK's iterations are not meant for it).
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
      if (!std::isfinite(a[i * n + j])) return false;
  return true;
}

template <typename T>
bool finite(const T* a, int64_t size) {
  for (int64_t i = 0; i < size; ++i)
    if (!std::isfinite(a[i])) return false;
  return true;
}

// LAPACK sees the column-major matrix A (a transposed copy), as under JAX, so that it reads the
// same triangle and gives the same eigenvectors (their signs included) as JAX does. syevd returns
// them in the columns of the column-major result: transposed back at the end.
template <typename T>
void eigh_batch(const Tensor& a, const Tensor& v, const Tensor& w, bool lower) {
  const int64_t n = a.shape.back(), count = batch_count(a.shape, 2);
  if (n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::eigh_);
  const int ni = int(n), query = -1;
  const char* uplo = lower ? "L" : "U";
  const auto sizes = workspace(Routine::syevd, a.dtype, {n, 0, 0, 0}, [&] {
    T wk = 0, dummy = 0;
    int iwk = 0, info = 0;
    f.syevd("V", uplo, &ni, &dummy, &ni, &dummy, &wk, &query, &iwk, &query, &info, 1, 1);
    return std::array<int, 2>{lwork_of(wk, OpId::eigh_), std::max(1, iwk)};
  });
  for_batch(count, 9.0 * n * n * n, [&](int64_t b0, int64_t b1) {
    std::vector<T> work(static_cast<size_t>(sizes[0]));
    std::vector<int> iwork(static_cast<size_t>(sizes[1]));
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * n * n;
      T* vb = v.as<T>() + b * n * n;
      T* wb = w.as<T>() + b * n;
      int info = -1;
      if (finite_triangle(src, n, lower)) {
        transpose(src, vb, n, n);
        f.syevd("V", uplo, &ni, vb, &ni, wb, work.data(), &sizes[0], iwork.data(), &sizes[1], &info, 1, 1);
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
// our row-major results.
template <typename T>
void svd_batch(const Tensor& a, const std::vector<Tensor>& out, bool full, bool uv) {
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
  const int lwork = workspace(Routine::gesdd, a.dtype, {m, n, uv ? (full ? 2 : 1) : 0, 0}, [&] {
    T wk = 0, dummy = 0;
    int info = 0, idummy = 0;
    f.gesdd(jobz, &mi, &ni, &dummy, &mi, &dummy, &dummy, &ldu, &dummy, &ldvt, &wk, &query, &idummy, &info, 1);
    return std::array<int, 2>{lwork_of(wk, OpId::svd_), 0};
  })[0];
  for_batch(count, 20.0 * m * n * k, [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(static_cast<size_t>(m * n)), work(static_cast<size_t>(lwork));
    std::vector<T> ucm(static_cast<size_t>(uv ? m * uc : 1)), vtcm(static_cast<size_t>(uv ? vr * n : 1));
    std::vector<int> iwork(static_cast<size_t>(8 * k));
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * m * n;
      T* s = out[0].as<T>() + b * k;
      T* u = uv ? out[1].as<T>() + b * m * uc : nullptr;
      T* vt = uv ? out[2].as<T>() + b * vr * n : nullptr;
      int info = -1;
      if (finite(src, m * n)) {
        transpose(src, cm.data(), m, n);
        f.gesdd(jobz, &mi, &ni, cm.data(), &mi, s, ucm.data(), &ldu, vtcm.data(), &ldvt, work.data(), &lwork,
                iwork.data(), &info, 1);
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
  if (in[0].dtype == DType::Float32) eigh_batch<float>(in[0], out[0], out[1], lower);
  else eigh_batch<double>(in[0], out[0], out[1], lower);
}

void svd_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool full = attrs.get_int_or("full_matrices", 1) != 0, uv = attrs.get_int_or("compute_uv", 1) != 0;
  if (in[0].dtype == DType::Float32) svd_batch<float>(in[0], out, full, uv);
  else svd_batch<double>(in[0], out, full, uv);
}

}  // namespace xjax
