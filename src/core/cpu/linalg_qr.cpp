// The QR kernel: Householder QR (geqrf) of a column-major copy, R read off its upper triangle, Q
// formed from the reflectors (orgqr), both written back row-major.
#include <algorithm>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

template <typename T>
void qr_batch(const Tensor& a, const Tensor& q, const Tensor& r, bool full) {
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n), kq = full ? m : k;
  const int64_t count = batch_count(a.shape, 2);
  if (k == 0) {  // nothing to factor: Q is the identity, R empty or zero (as JAX)
    for (int64_t b = 0; b < count; ++b) eye(q.as<T>() + b * m * kq, m, kq);
    fill(r.as<T>(), r.size(), T(0));
    return;
  }
  const auto& f = lapack_fns<T>(OpId::qr_);
  const int mi = int(m), ni = int(n), ki = int(k), kqi = int(kq), query = -1;
  const int lwork_qr = workspace(Routine::geqrf, a.dtype, {m, n, 0, 0}, [&] {
    T w = 0, dummy = 0;
    int info = 0;
    f.geqrf(&mi, &ni, &dummy, &mi, &dummy, &w, &query, &info);
    return std::array<int, 2>{lwork_of(w, OpId::qr_), 0};
  })[0];
  const int lwork_q = workspace(Routine::orgqr, a.dtype, {m, kq, k, 0}, [&] {
    T w = 0, dummy = 0;
    int info = 0;
    f.orgqr(&mi, &kqi, &ki, &dummy, &mi, &dummy, &w, &query, &info);
    return std::array<int, 2>{lwork_of(w, OpId::qr_), 0};
  })[0];
  for_batch(count, 2.0 * m * n * k, [&](int64_t b0, int64_t b1) {
    // Column-major m x max(n, kq): Q's extra columns (complete Q of a tall matrix) follow A's.
    std::vector<T> cm(size_t(m * std::max(n, kq))), tau(static_cast<size_t>(k)), work(size_t(std::max(lwork_qr, lwork_q)));
    for (int64_t b = b0; b < b1; ++b) {
      transpose(a.as<T>() + b * m * n, cm.data(), m, n);
      int info = 0;
      f.geqrf(&mi, &ni, cm.data(), &mi, tau.data(), work.data(), &lwork_qr, &info);
      T* rb = r.as<T>() + b * kq * n;
      for (int64_t i = 0; i < kq; ++i)
        for (int64_t j = 0; j < n; ++j) rb[i * n + j] = i <= j && i < k ? cm[size_t(j * m + i)] : T(0);
      fill(cm.data() + n * m, (kq > n ? kq - n : 0) * m, T(0));
      f.orgqr(&mi, &kqi, &ki, cm.data(), &mi, tau.data(), work.data(), &lwork_q, &info);
      transpose(cm.data(), q.as<T>() + b * m * kq, kq, m);
    }
  });
}

}  // namespace

void qr_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool full = attrs.get_int_or("full_matrices", 1) != 0;
  if (in[0].dtype == DType::Float32) qr_batch<float>(in[0], out[0], out[1], full);
  else qr_batch<double>(in[0], out[0], out[1], full);
}

}  // namespace xjax
