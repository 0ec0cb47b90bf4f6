// The reductions to condensed forms: the Schur form (gees, no eigenvalue ordering; quasi-triangular
// for a real matrix, triangular for a complex one), the upper Hessenberg form (gehrd) and the
// tridiagonal form of symmetric or Hermitian matrices (sytrd, hetrd). One kernel per op over the four
// element types; `if constexpr` picks the complex routine where its arguments differ. LAPACK sees the
// column-major copy of each matrix, so the packed results (reflectors stored below the form) are the
// ones JAX's FFI kernels return. A matrix that LAPACK fails on (gees not converging, non-finite
// input) gives NaN results, as under JAX.
#include <cmath>
#include <vector>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

template <typename T>
bool all_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!finite_value(p[i])) return false;
  return true;
}

// The batch's buffers for one worker: `cm` the column-major copy, `work` LAPACK's workspace
// (sized by a query on the worker's first call).
template <typename T>
struct Scratch {
  std::vector<T> cm, work;
  explicit Scratch(int64_t n) : cm(static_cast<size_t>(n * n)) {}
  void size_work(T query_result, OpId op) { work.resize(static_cast<size_t>(lwork_of(query_result, op))); }
  int lwork() const { return int(work.size()); }
};

template <typename T>
void schur_batch(const Tensor& a, const Tensor& t, const Tensor* z) {
  const int64_t n = a.shape.back(), count = batch_count(a.shape, 2), nn = n * n;
  if (n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::schur_);
  const int ni = int(n), ldvs = z ? ni : 1, query = -1;
  const char* jobvs = z ? "V" : "N";
  for_batch(count, 25.0 * n * n * n, [&](int64_t b0, int64_t b1) {
    Scratch<T> s(n);
    // The eigenvalues (unused): real gees splits them into wr and wi, complex gees gives them all in
    // wr and takes a real workspace of n.
    std::vector<T> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), vs(static_cast<size_t>(z ? nn : 1));
    std::vector<real_of<T>> rwork(static_cast<size_t>(is_complex_v<T> ? n : 0));
    int sdim = 0, info = 0, bwork = 0;
    auto gees = [&](T* work, const int* lwork) {
      if constexpr (is_complex_v<T>)
        f.gees(jobvs, "N", nullptr, &ni, s.cm.data(), &ni, &sdim, wr.data(), vs.data(), &ldvs, work, lwork,
               rwork.data(), &bwork, &info, 1, 1);
      else
        f.gees(jobvs, "N", nullptr, &ni, s.cm.data(), &ni, &sdim, wr.data(), wi.data(), vs.data(), &ldvs, work,
               lwork, &bwork, &info, 1, 1);
    };
    T w = 0;
    gees(&w, &query);
    s.size_work(w, OpId::schur_);
    const int lwork = s.lwork();
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * nn;
      T* tb = t.as<T>() + b * nn;
      T* zb = z ? z->as<T>() + b * nn : nullptr;
      info = 1;
      if (all_finite(src, nn)) {
        transpose(src, s.cm.data(), n, n);
        gees(s.work.data(), &lwork);
      }
      if (info != 0) {
        fill_nan(tb, nn);
        if (zb) fill_nan(zb, nn);
        continue;
      }
      transpose(s.cm.data(), tb, n, n);
      if (zb) transpose(vs.data(), zb, n, n);
    }
  });
}

template <typename T>
void hessenberg_batch(const Tensor& a, const Tensor& packed, const Tensor& taus) {
  const int64_t n = a.shape.back(), count = batch_count(a.shape, 2), nn = n * n;
  if (n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::hessenberg_);
  const int ni = int(n), one = 1, query = -1;
  for_batch(count, 10.0 / 3.0 * n * n * n, [&](int64_t b0, int64_t b1) {
    Scratch<T> s(n);
    std::vector<T> tau(static_cast<size_t>(n));
    int info = 0;
    T w = 0;
    f.gehrd(&ni, &one, &ni, s.cm.data(), &ni, tau.data(), &w, &query, &info);
    s.size_work(w, OpId::hessenberg_);
    const int lwork = s.lwork();
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * nn, s.cm.data(), n, n);
      f.gehrd(&ni, &one, &ni, s.cm.data(), &ni, tau.data(), s.work.data(), &lwork, &info);
      transpose(s.cm.data(), packed.as<T>() + b * nn, n, n);
      std::copy(tau.begin(), tau.begin() + (n - 1), taus.as<T>() + b * (n - 1));
    }
  });
}

// d and e (out[1], out[2]) are real whatever T: the tridiagonal form of a Hermitian matrix is.
template <typename T>
void tridiagonal_batch(const Tensor& a, const std::vector<Tensor>& out, bool lower) {
  using R = real_of<T>;
  const int64_t n = a.shape.back(), count = batch_count(a.shape, 2), nn = n * n;
  if (n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::tridiagonal_);
  const int ni = int(n), query = -1;
  const char* uplo = lower ? "L" : "U";
  for_batch(count, 4.0 / 3.0 * n * n * n, [&](int64_t b0, int64_t b1) {
    Scratch<T> s(n);
    std::vector<R> e(static_cast<size_t>(n));
    std::vector<T> tau(static_cast<size_t>(n));
    int info = 0;
    auto trd = [&](R* d, T* work, const int* lwork) {
      if constexpr (is_complex_v<T>)
        f.hetrd(uplo, &ni, s.cm.data(), &ni, d, e.data(), tau.data(), work, lwork, &info, 1);
      else
        f.sytrd(uplo, &ni, s.cm.data(), &ni, d, e.data(), tau.data(), work, lwork, &info, 1);
    };
    T w = 0;
    trd(e.data(), &w, &query);
    s.size_work(w, OpId::tridiagonal_);
    const int lwork = s.lwork();
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * nn, s.cm.data(), n, n);
      trd(out[1].as<R>() + b * n, s.work.data(), &lwork);
      transpose(s.cm.data(), out[0].as<T>() + b * nn, n, n);
      std::copy(e.begin(), e.begin() + (n - 1), out[2].as<R>() + b * (n - 1));
      std::copy(tau.begin(), tau.begin() + (n - 1), out[3].as<T>() + b * (n - 1));
    }
  });
}

}  // namespace

void schur_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  const Tensor* z = out.size() > 1 ? &out[1] : nullptr;
  dispatch_linalg(in[0].dtype, [&](auto t) { schur_batch<decltype(t)>(in[0], out[0], z); });
}

void hessenberg_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  dispatch_linalg(in[0].dtype, [&](auto t) { hessenberg_batch<decltype(t)>(in[0], out[0], out[1]); });
}

void tridiagonal_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool lower = attrs.get_int_or("lower", 1) != 0;
  dispatch_linalg(in[0].dtype, [&](auto t) { tridiagonal_batch<decltype(t)>(in[0], out, lower); });
}

}  // namespace xjax
