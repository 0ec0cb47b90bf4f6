// The BLAS entry points resolved by load_blas (core/cpu/blas.h), for the contraction kernels.
// Row-major calls only; sizes are 32-bit (scipy-openblas32's blasint). BLAS runs single-threaded
// on its caller's thread (blas.cpp): callers split big products over their own pool.
#pragma once

namespace xjax {

struct BlasApi {
  enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
  void (*sgemm)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                const float* b, int ldb, float beta, float* c, int ldc);
  void (*dgemm)(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                const double* b, int ldb, double beta, double* c, int ldc);
  bool avx512_kernels;  // BLAS runs AVX-512 gemm kernels on this CPU (from its core name)
};

// The loaded BLAS, or nullptr: the kernels then use their built-in fallbacks.
const BlasApi* blas_api();

}  // namespace xjax
