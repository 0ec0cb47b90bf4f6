// Householder reflectors in LAPACK's packed form: the packed QR (geqrf, or geqp3 with column
// pivoting), the product of the reflectors (orgqr / ungqr) and their product with a matrix (ormqr /
// unmqr, whose transpose is the conjugate one); and the tridiagonal solve (gtsv, Gaussian
// elimination with partial pivoting, which LAPACK groups with them as an O(n) banded routine). One
// kernel per op over the four element types. LAPACK sees column-major copies, as under JAX.
#include <algorithm>
#include <vector>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

template <typename T>
void geqrf_batch(const Tensor& a, const std::vector<Tensor>& out, bool pivoting) {
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n);
  const int64_t count = batch_count(a.shape, 2);
  int32_t* perm = pivoting ? out[2].as<int32_t>() : nullptr;
  if (k == 0) {  // nothing to factor: the packed form is A (empty), the columns stay in order
    for (int64_t b = 0; perm && b < count; ++b)
      for (int64_t j = 0; j < n; ++j) perm[b * n + j] = int32_t(j);
    return;
  }
  const auto& f = lapack_fns<T>(OpId::geqrf_);
  const int mi = int(m), ni = int(n), query = -1;
  for_batch(count, 2.0 * m * n * k, [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(static_cast<size_t>(m * n)), tau(static_cast<size_t>(k));
    std::vector<int> jpvt(static_cast<size_t>(n));
    std::vector<real_of<T>> rwork(static_cast<size_t>(is_complex_v<T> ? 2 * n : 0));  // complex geqp3's
    int info = 0;
    auto geqp3 = [&](T* work, const int* lwork) {
      if constexpr (is_complex_v<T>)
        f.geqp3(&mi, &ni, cm.data(), &mi, jpvt.data(), tau.data(), work, lwork, rwork.data(), &info);
      else
        f.geqp3(&mi, &ni, cm.data(), &mi, jpvt.data(), tau.data(), work, lwork, &info);
    };
    T w = 0;
    if (pivoting) geqp3(&w, &query);
    else f.geqrf(&mi, &ni, cm.data(), &mi, tau.data(), &w, &query, &info);
    std::vector<T> work(static_cast<size_t>(lwork_of(w, OpId::geqrf_)));
    const int lwork = int(work.size());
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * m * n, cm.data(), m, n);
      if (pivoting) {
        std::fill(jpvt.begin(), jpvt.end(), 0);  // every column free to move
        geqp3(work.data(), &lwork);
        for (int64_t j = 0; j < n; ++j) perm[b * n + j] = jpvt[size_t(j)] - 1;
      } else {
        f.geqrf(&mi, &ni, cm.data(), &mi, tau.data(), work.data(), &lwork, &info);
      }
      transpose(cm.data(), out[0].as<T>() + b * m * n, n, m);
      std::copy(tau.begin(), tau.end(), out[1].as<T>() + b * k);
    }
  });
}

template <typename T>
void householder_product_batch(const Tensor& a, const Tensor& taus, const Tensor& q) {
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = taus.shape.back();
  const int64_t count = batch_count(a.shape, 2);
  if (m == 0 || n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::householder_product_);
  const int mi = int(m), ni = int(n), ki = int(k), query = -1;
  for_batch(count, 4.0 * m * n * k, [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(static_cast<size_t>(m * n));
    int info = 0;
    auto orgqr = [&](const T* tau, T* work, const int* lwork) {
      if constexpr (is_complex_v<T>) f.ungqr(&mi, &ni, &ki, cm.data(), &mi, tau, work, lwork, &info);
      else f.orgqr(&mi, &ni, &ki, cm.data(), &mi, tau, work, lwork, &info);
    };
    T w = 0;
    orgqr(taus.as<T>(), &w, &query);
    std::vector<T> work(static_cast<size_t>(lwork_of(w, OpId::householder_product_)));
    const int lwork = int(work.size());
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * m * n, cm.data(), m, n);
      orgqr(taus.as<T>() + b * k, work.data(), &lwork);
      transpose(cm.data(), q.as<T>() + b * m * n, n, m);
    }
  });
}

template <typename T>
void ormqr_batch(const std::vector<Tensor>& in, const Tensor& out, bool left, bool trans) {
  const Tensor &a = in[0], &taus = in[1], &c = in[2];
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = taus.shape.back();
  const int64_t r = c.shape[c.shape.size() - 2], s = c.shape.back(), count = batch_count(c.shape, 2);
  if (r == 0 || s == 0 || count == 0) return;
  if (k == 0 || m == 0) {  // no reflectors: Q is the identity
    std::copy(c.as<T>(), c.as<T>() + c.size(), out.as<T>());
    return;
  }
  const auto& f = lapack_fns<T>(OpId::ormqr_);
  const int ri = int(r), si = int(s), ki = int(k), mi = int(m), query = -1;
  const char* side = left ? "L" : "R";
  const char* tr = trans ? adjoint_op<T>() : "N";
  for_batch(count, 4.0 * r * s * k, [&](int64_t b0, int64_t b1) {
    std::vector<T> ca(static_cast<size_t>(m * n)), cc(static_cast<size_t>(r * s));
    int info = 0;
    auto ormqr = [&](const T* tau, T* work, const int* lwork) {
      if constexpr (is_complex_v<T>)
        f.unmqr(side, tr, &ri, &si, &ki, ca.data(), &mi, tau, cc.data(), &ri, work, lwork, &info, 1, 1);
      else
        f.ormqr(side, tr, &ri, &si, &ki, ca.data(), &mi, tau, cc.data(), &ri, work, lwork, &info, 1, 1);
    };
    T w = 0;
    ormqr(taus.as<T>(), &w, &query);
    std::vector<T> work(static_cast<size_t>(lwork_of(w, OpId::ormqr_)));
    const int lwork = int(work.size());
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * m * n, ca.data(), m, n);
      transpose(c.as<T>() + b * r * s, cc.data(), r, s);
      ormqr(taus.as<T>() + b * k, work.data(), &lwork);
      transpose(cc.data(), out.as<T>() + b * r * s, s, r);
    }
  });
}

// dl[i] = A[i, i - 1] (dl[0] unused), d[i] = A[i, i], du[i] = A[i, i + 1] (du[m - 1] unused), as JAX.
template <typename T>
void tridiagonal_solve_batch(const std::vector<Tensor>& in, const Tensor& x) {
  const Tensor &dl = in[0], &d = in[1], &du = in[2], &b = in[3];
  const int64_t m = d.shape.back(), nrhs = b.shape.back(), count = batch_count(d.shape, 1);
  if (m == 0 || nrhs == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::tridiagonal_solve_);
  const int mi = int(m), ni = int(nrhs);
  for_batch(count, 8.0 * m * nrhs, [&](int64_t b0, int64_t b1) {
    std::vector<T> lo(static_cast<size_t>(m)), di(static_cast<size_t>(m)), up(static_cast<size_t>(m));
    std::vector<T> cm(static_cast<size_t>(m * nrhs));
    for (int64_t i = b0; i < b1; ++i) {  // gtsv overwrites its diagonals: copies
      std::copy(dl.as<T>() + i * m + 1, dl.as<T>() + (i + 1) * m, lo.begin());
      std::copy(d.as<T>() + i * m, d.as<T>() + (i + 1) * m, di.begin());
      std::copy(du.as<T>() + i * m, du.as<T>() + (i + 1) * m - 1, up.begin());
      transpose(b.as<T>() + i * m * nrhs, cm.data(), m, nrhs);
      int info = 0;
      f.gtsv(&mi, &ni, lo.data(), di.data(), up.data(), cm.data(), &mi, &info);
      T* xb = x.as<T>() + i * m * nrhs;
      if (info != 0) fill_nan(xb, m * nrhs);  // singular: NaN, as JAX
      else transpose(cm.data(), xb, nrhs, m);
    }
  });
}

}  // namespace

void geqrf_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool pivoting = attrs.get_int_or("pivoting", 0) != 0;
  dispatch_linalg(in[0].dtype, [&](auto t) { geqrf_batch<decltype(t)>(in[0], out, pivoting); });
}

void householder_product_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  dispatch_linalg(in[0].dtype, [&](auto t) { householder_product_batch<decltype(t)>(in[0], in[1], out[0]); });
}

void ormqr_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool left = attrs.get_int_or("left", 1) != 0, trans = attrs.get_int_or("transpose", 0) != 0;
  dispatch_linalg(in[0].dtype, [&](auto t) { ormqr_batch<decltype(t)>(in, out[0], left, trans); });
}

void tridiagonal_solve_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  dispatch_linalg(in[0].dtype, [&](auto t) { tridiagonal_solve_batch<decltype(t)>(in, out[0]); });
}

}  // namespace xjax
