// The eigendecomposition of general matrices (geev): complex eigenvalues and left and right
// eigenvectors. LAPACK sees the column-major matrix (a transposed copy), as under JAX. A complex
// matrix's (c/zgeev) come back complex, in columns; a real one's (s/dgeev) in real form, complex
// conjugate pairs packed: for wi[j] > 0, columns j and j+1 hold the real and imaginary
// parts of the eigenvector of w[j], whose conjugate belongs to w[j+1]. Each is normalised to unit
// Euclidean norm with its largest component real (LAPACK's convention, which JAX's eig returns).
// Non-finite input gives NaN without calling LAPACK.
#include <algorithm>
#include <complex>
#include <limits>

#include "core/cpu/linalg_common.h"
#include "core/cpu/linalg_kernels.h"

namespace xjax {

namespace {

using namespace linalg;

// The eigenvectors of the real-form column-major v (n x n) as rows of complex out (row-major:
// out[r * n + j] is component r of eigenvector j).
template <typename T>
void complex_vectors(const T* v, const T* wi, int64_t n, std::complex<T>* out) {
  for (int64_t j = 0; j < n; ++j) {
    if (wi[j] > 0 && j + 1 < n) {
      for (int64_t r = 0; r < n; ++r) {
        const T re = v[j * n + r], im = v[(j + 1) * n + r];
        out[r * n + j] = std::complex<T>(re, im);
        out[r * n + j + 1] = std::complex<T>(re, -im);
      }
      ++j;
    } else {
      for (int64_t r = 0; r < n; ++r) out[r * n + j] = std::complex<T>(v[j * n + r], 0);
    }
  }
}

// T: the element type of A (real or complex); R its real type, C the results' complex type.
template <typename T>
void eig_batch(const Tensor& a, const std::vector<Tensor>& out, bool left, bool right) {
  using R = real_of<T>;
  using C = std::complex<R>;
  const int64_t n = a.shape.back(), count = batch_count(a.shape, 2);
  if (n == 0 || count == 0) return;
  const auto& f = lapack_fns<T>(OpId::eig_);
  const int ni = int(n), query = -1, ldl = left ? ni : 1, ldr = right ? ni : 1;
  const char* jobvl = left ? "V" : "N";
  const char* jobvr = right ? "V" : "N";
  // geev, given its eigenvalue array(s): wr and wi for a real A, w (complex) and rwork (2n) for a complex one.
  auto geev = [&](T* x, T* wr, R* wi, T* vl, T* vr, T* work, const int* lwork, R* rwork, int* info) {
    if constexpr (is_complex_v<T>)
      f.geev(jobvl, jobvr, &ni, x, &ni, wr, vl, &ldl, vr, &ldr, work, lwork, rwork, info, 1, 1);
    else
      f.geev(jobvl, jobvr, &ni, x, &ni, wr, wi, vl, &ldl, vr, &ldr, work, lwork, info, 1, 1);
  };
  const int lwork = workspace(Routine::geev, a.dtype, {n, left, right, 0}, [&] {
    T wk = 0, dummy = 0;
    R rdummy = 0;
    int info = 0;
    geev(&dummy, &dummy, &rdummy, &dummy, &dummy, &wk, &query, &rdummy, &info);
    return std::array<int, 2>{lwork_of(wk, OpId::eig_), 0};
  })[0];
  const Tensor* vl_out = left ? &out[1] : nullptr;
  const Tensor* vr_out = right ? &out[left ? 2 : 1] : nullptr;
  for_batch(count, (is_complex_v<T> ? 100.0 : 25.0) * n * n * n, [&](int64_t b0, int64_t b1) {
    std::vector<T> cm(static_cast<size_t>(n * n)), wr(static_cast<size_t>(n));
    std::vector<R> wi(static_cast<size_t>(n)), rwork(static_cast<size_t>(is_complex_v<T> ? 2 * n : 1));
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<T> vl(static_cast<size_t>(left ? n * n : 1)), vr(static_cast<size_t>(right ? n * n : 1));
    for (int64_t b = b0; b < b1; ++b) {
      const T* src = a.as<T>() + b * n * n;
      auto* w = out[0].as<C>() + b * n;
      auto* vlb = left ? vl_out->as<C>() + b * n * n : nullptr;
      auto* vrb = right ? vr_out->as<C>() + b * n * n : nullptr;
      bool finite = true;
      for (int64_t i = 0; i < n * n && finite; ++i) finite = finite_value(src[i]);
      int info = -1;
      if (finite) {
        transpose(src, cm.data(), n, n);
        geev(cm.data(), wr.data(), wi.data(), vl.data(), vr.data(), work.data(), &lwork, rwork.data(), &info);
      }
      if (info != 0) {  // no convergence, or non-finite input: NaN, as JAX
        const R nan = std::numeric_limits<R>::quiet_NaN();
        for (int64_t i = 0; i < n; ++i) w[i] = C(nan, nan);
        for (auto* v : {vlb, vrb})
          if (v)
            for (int64_t i = 0; i < n * n; ++i) v[i] = C(nan, nan);
        continue;
      }
      if constexpr (is_complex_v<T>) {  // eigenvectors in the columns of column-major results
        std::copy(wr.begin(), wr.end(), w);
        if (left) transpose(vl.data(), vlb, n, n);
        if (right) transpose(vr.data(), vrb, n, n);
      } else {
        for (int64_t i = 0; i < n; ++i) w[i] = C(wr[size_t(i)], wi[size_t(i)]);
        if (left) complex_vectors(vl.data(), wi.data(), n, vlb);
        if (right) complex_vectors(vr.data(), wi.data(), n, vrb);
      }
    }
  });
}

}  // namespace

void eig_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const bool left = attrs.get_int_or("compute_left_eigenvectors", 1) != 0;
  const bool right = attrs.get_int_or("compute_right_eigenvectors", 1) != 0;
  dispatch_linalg(in[0].dtype, [&](auto t) { eig_batch<decltype(t)>(in[0], out, left, right); });
}

}  // namespace xjax
