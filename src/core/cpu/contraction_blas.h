// The CBLAS entry points resolved by load_blas (core/cpu/blas.h), for the contraction kernels.
// Row-major calls only; sizes are 32-bit (scipy-openblas32's blasint).
#pragma once

namespace xjax {

struct BlasApi {
  enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
  void (*sgemm)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                const float* b, int ldb, float beta, float* c, int ldc);
  void (*dgemm)(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                const double* b, int ldb, double beta, double* c, int ldc);
  void (*sgemv)(int order, int trans, int m, int n, float alpha, const float* a, int lda, const float* x,
                int incx, float beta, float* y, int incy);
  void (*dgemv)(int order, int trans, int m, int n, double alpha, const double* a, int lda, const double* x,
                int incx, double beta, double* y, int incy);
  float (*sdot)(int n, const float* x, int incx, const float* y, int incy);
  double (*ddot)(int n, const double* x, int incx, const double* y, int incy);
  // Optional (OpenBLAS >= 0.3.30): many same-shaped gemms spread over BLAS's threads, one each.
  void (*sgemm_batch_strided)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a,
                              int lda, int stride_a, const float* b, int ldb, int stride_b, float beta,
                              float* c, int ldc, int stride_c, int count);
  void (*dgemm_batch_strided)(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a,
                              int lda, int stride_a, const double* b, int ldb, int stride_b, double beta,
                              double* c, int ldc, int stride_c, int count);
  int num_threads;  // BLAS's own pool size, set at load to the xjax pool's
};

// The loaded BLAS, or nullptr: the kernels then use their built-in fallbacks.
const BlasApi* blas_api();

}  // namespace xjax
