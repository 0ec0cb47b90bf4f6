// LAPACK (and the Fortran BLAS routines the factorizations use), resolved from the same
// scipy-openblas library that load_blas opens. Fortran calling convention: column-major arrays,
// every argument by pointer, 32-bit integers (scipy-openblas32's), and one hidden length per
// character argument (passed as 1; harmless where the routine was not compiled from Fortran).
#pragma once
#include <cstddef>

namespace xjax {

// The routines for one element type T (float: the s* routines, double: the d* ones).
template <typename T>
struct LapackFns {
  using Len = size_t;
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, Len);
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);
  void (*geqp3)(const int* m, const int* n, T* a, const int* lda, int* jpvt, T* tau, T* work, const int* lwork,
                int* info);
  void (*orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,
                const int* lwork, int* info);
  void (*syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,
                const int* lwork, int* iwork, const int* liwork, int* info, Len, Len);
  void (*geev)(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* wr, T* wi, T* vl,
               const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, int* info, Len, Len);
  void (*gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, const int* ldu,
                T* vt, const int* ldvt, T* work, const int* lwork, int* iwork, int* info, Len);
  void (*trsm)(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
               const int* n, const T* alpha, const T* a, const int* lda, T* b, const int* ldb, Len, Len, Len, Len);
  void (*gemm)(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* alpha, const T* a,
               const int* lda, const T* b, const int* ldb, const T* beta, T* c, const int* ldc, Len, Len);
  void (*syrk)(const char* uplo, const char* trans, const int* n, const int* k, const T* alpha, const T* a,
               const int* lda, const T* beta, T* c, const int* ldc, Len, Len);
  void (*laswp)(const int* n, T* a, const int* lda, const int* k1, const int* k2, const int* ipiv, const int* incx);
  // Matrix forms and Householder products (schur, hessenberg, tridiagonal, tridiagonal_solve, ormqr).
  // gees's `select` is a LOGICAL function, never called with sort = 'N' (bwork is then unused too).
  void (*gees)(const char* jobvs, const char* sort, void* select, const int* n, T* a, const int* lda, int* sdim,
               T* wr, T* wi, T* vs, const int* ldvs, T* work, const int* lwork, int* bwork, int* info, Len, Len);
  void (*gehrd)(const int* n, const int* ilo, const int* ihi, T* a, const int* lda, T* tau, T* work,
                const int* lwork, int* info);
  void (*sytrd)(const char* uplo, const int* n, T* a, const int* lda, T* d, T* e, T* tau, T* work, const int* lwork,
                int* info, Len);
  void (*gtsv)(const int* n, const int* nrhs, T* dl, T* d, T* du, T* b, const int* ldb, int* info);
  void (*ormqr)(const char* side, const char* trans, const int* m, const int* n, const int* k, const T* a,
                const int* lda, const T* tau, T* c, const int* ldc, T* work, const int* lwork, int* info, Len, Len);
};

struct LapackApi {
  LapackFns<float> s;
  LapackFns<double> d;
  template <typename T>
  const LapackFns<T>& fns() const {
    if constexpr (sizeof(T) == sizeof(float)) return s;
    else return d;
  }
};

// Resolves the routines from an opened library handle (called by load_blas); false when one is
// missing, and LAPACK then stays unavailable.
bool load_lapack(void* lib);
// The loaded routines, or nullptr.
const LapackApi* lapack_api();
bool lapack_loaded();

}  // namespace xjax
