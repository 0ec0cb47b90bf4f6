// The QR kernel: Householder QR (geqrf, or geqp3 with column pivoting) of a column-major copy, R
// read off its upper triangle, Q formed from the reflectors (orgqr; ungqr for complex matrices),
// both written back row-major.
#include <algorithm>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

// geqp3 and orgqr, or their complex forms (geqp3 with a real workspace of 2n; ungqr).
template <typename T>
void geqp3(const LapackFns<T>& f, const int* m, const int* n, T* a, int* jpvt, T* tau, T* work, const int* lwork,
           real_of<T>* rwork, int* info) {
  if constexpr (is_complex_v<T>) f.geqp3(m, n, a, m, jpvt, tau, work, lwork, rwork, info);
  else f.geqp3(m, n, a, m, jpvt, tau, work, lwork, info);
}

template <typename T>
void orgqr(const LapackFns<T>& f, const int* m, const int* n, const int* k, T* a, const T* tau, T* work,
           const int* lwork, int* info) {
  if constexpr (is_complex_v<T>) f.ungqr(m, n, k, a, m, tau, work, lwork, info);
  else f.orgqr(m, n, k, a, m, tau, work, lwork, info);
}

// `p`: the column permutation (pivoting), or nullptr.
template <typename T>
void qr_batch(const Tensor& a, const Tensor& q, const Tensor& r, const Tensor* p, bool full) {
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n), kq = full ? m : k;
  const int64_t count = batch_count(a.shape, 2);
  if (k == 0) {  // nothing to factor: Q is the identity, R empty or zero, P zero (as JAX)
    for (int64_t b = 0; b < count; ++b) eye(q.as<T>() + b * m * kq, m, kq);
    fill(r.as<T>(), r.size(), T(0));
    if (p) fill(p->as<int32_t>(), p->size(), 0);
    return;
  }
  const auto& f = lapack_fns<T>(OpId::qr_);
  const int mi = int(m), ni = int(n), ki = int(k), kqi = int(kq), query = -1;
  const int lwork_qr = workspace(p ? Routine::geqp3 : Routine::geqrf, a.dtype, {m, n, 0, 0}, [&] {
    T w = 0, dummy = 0;
    real_of<T> rdummy = 0;
    int info = 0, idummy = 0;
    if (p) geqp3(f, &mi, &ni, &dummy, &idummy, &dummy, &w, &query, &rdummy, &info);
    else f.geqrf(&mi, &ni, &dummy, &mi, &dummy, &w, &query, &info);
    return std::array<int, 2>{lwork_of(w, OpId::qr_), 0};
  })[0];
  const int lwork_q = workspace(Routine::orgqr, a.dtype, {m, kq, k, 0}, [&] {
    T w = 0, dummy = 0;
    int info = 0;
    orgqr(f, &mi, &kqi, &ki, &dummy, &dummy, &w, &query, &info);
    return std::array<int, 2>{lwork_of(w, OpId::qr_), 0};
  })[0];
  for_batch(count, 2.0 * m * n * k, [&](int64_t b0, int64_t b1) {
    // Column-major m x max(n, kq): Q's extra columns (complete Q of a tall matrix) follow A's.
    std::vector<T> cm(static_cast<size_t>(m * std::max(n, kq))), tau(static_cast<size_t>(k));
    std::vector<T> work(static_cast<size_t>(std::max(lwork_qr, lwork_q)));
    std::vector<int> jpvt(static_cast<size_t>(p ? n : 0));
    std::vector<real_of<T>> rwork(static_cast<size_t>(p && is_complex_v<T> ? 2 * n : 0));
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * m * n, cm.data(), m, n);
      int info = 0;
      if (p) {
        std::fill(jpvt.begin(), jpvt.end(), 0);  // every column free to move
        geqp3(f, &mi, &ni, cm.data(), jpvt.data(), tau.data(), work.data(), &lwork_qr, rwork.data(), &info);
        for (int64_t j = 0; j < n; ++j) p->as<int32_t>()[b * n + j] = jpvt[size_t(j)] - 1;
      } else {
        f.geqrf(&mi, &ni, cm.data(), &mi, tau.data(), work.data(), &lwork_qr, &info);
      }
      T* rb = r.as<T>() + b * kq * n;
      for (int64_t i = 0; i < kq; ++i)
        for (int64_t j = 0; j < n; ++j) rb[i * n + j] = i <= j && i < k ? cm[size_t(j * m + i)] : T(0);
      fill(cm.data() + n * m, (kq > n ? kq - n : 0) * m, T(0));
      orgqr(f, &mi, &kqi, &ki, cm.data(), tau.data(), work.data(), &lwork_q, &info);
      transpose(cm.data(), q.as<T>() + b * m * kq, kq, m);
    }
  });
}

}  // namespace

void qr_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool full = attrs.get_int_or("full_matrices", 1) != 0;
  const Tensor* p = out.size() > 2 ? &out[2] : nullptr;
  dispatch_linalg(in[0].dtype, [&](auto t) { qr_batch<decltype(t)>(in[0], out[0], out[1], p, full); });
}

}  // namespace xjax
