// Cholesky and LU kernels. Our matrices are row-major, LAPACK's column-major: a row-major
// matrix read column-major is its transpose. Cholesky uses that for free (the lower factor of a
// row-major matrix is the upper one, potrf 'U', of the same buffer read column-major); LU's row
// pivoting does not survive a transpose, so LU works on a column-major copy.
#include <algorithm>
#include <cstring>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

template <typename T>
void cholesky_batch(const Tensor& a, const Tensor& l) {
  const auto& f = lapack_fns<T>(OpId::cholesky_);
  const int64_t n = a.shape.back(), nn = n * n, count = batch_count(a.shape, 2);
  for_batch(count, double(n) * n * n / 3, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      T* out = l.as<T>() + b * nn;
      std::memcpy(out, a.as<T>() + b * nn, size_t(nn) * sizeof(T));
      const int ni = int(n);
      int info = 0;
      f.potrf("U", &ni, out, &ni, &info, 1);
      if (info != 0) {  // not positive definite: NaN, as JAX
        fill_nan(out, nn);
        continue;
      }
      for (int64_t i = 0; i < n; ++i) fill(out + i * n + i + 1, n - i - 1, T(0));  // the untouched upper part
    }
  });
}

template <typename T>
void lu_batch(const Tensor& a, const Tensor& lu, const Tensor& piv, const Tensor& perm) {
  const auto& f = lapack_fns<T>(OpId::lu_);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n);
  const int64_t count = batch_count(a.shape, 2);
  for_batch(count, double(m) * n * k, [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(size_t(m * n));
    std::vector<int> ipiv(static_cast<size_t>(k));
    for (int64_t b = b0; b < b1; ++b) {
      int32_t* pv = piv.as<int32_t>() + b * k;
      if (k > 0) {
        transpose(a.as<T>() + b * m * n, cm.data(), m, n);
        const int mi = int(m), ni = int(n);
        int info = 0;
        f.getrf(&mi, &ni, cm.data(), &mi, ipiv.data(), &info);  // info > 0 (singular) is no error
        transpose(cm.data(), lu.as<T>() + b * m * n, n, m);
        for (int64_t i = 0; i < k; ++i) pv[i] = ipiv[size_t(i)] - 1;
      }
      pivots_to_permutation(pv, k, perm.as<int32_t>() + b * m, m);
    }
  });
}

}  // namespace

void cholesky_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  if (in[0].dtype == DType::Float32) cholesky_batch<float>(in[0], out[0]);
  else cholesky_batch<double>(in[0], out[0]);
}

void lu_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs&) {
  if (in[0].dtype == DType::Float32) lu_batch<float>(in[0], out[0], out[1], out[2]);
  else lu_batch<double>(in[0], out[0], out[1], out[2]);
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
