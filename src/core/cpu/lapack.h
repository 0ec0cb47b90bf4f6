// LAPACK (and the Fortran BLAS routines the factorizations use), resolved from the same
// scipy-openblas library that load_blas opens. Fortran calling convention: column-major arrays,
// every argument by pointer, 32-bit integers (scipy-openblas32's), and one hidden length per
// character argument (passed as 1; harmless where the routine was not compiled from Fortran).
#pragma once
#include <complex>
#include <cstddef>
#include <type_traits>

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

// ---- complex routines (c*: complex<float>, z*: complex<double>) ----------------------------------
// The Hermitian and unitary counterparts of the real ones, where the arguments differ: real
// eigenvalues, singular values and herk scalars (R), the real workspaces (rwork) of geqp3, heevd,
// gesdd and geev, and geev's eigenvalues in one complex array.
template <typename R>
struct LapackFns<std::complex<R>> {
  using T = std::complex<R>;
  using Len = size_t;
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, Len);
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info);
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork, int* info);
  void (*geqp3)(const int* m, const int* n, T* a, const int* lda, int* jpvt, T* tau, T* work, const int* lwork,
                R* rwork, int* info);
  void (*ungqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,
                const int* lwork, int* info);
  void (*heevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, R* w, T* work,
                const int* lwork, R* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, Len, Len);
  void (*gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, R* s, T* u, const int* ldu,
                T* vt, const int* ldvt, T* work, const int* lwork, R* rwork, int* iwork, int* info, Len);
  void (*geev)(const char* jobvl, const char* jobvr, const int* n, T* a, const int* lda, T* w, T* vl,
               const int* ldvl, T* vr, const int* ldvr, T* work, const int* lwork, R* rwork, int* info, Len, Len);
  void (*trsm)(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
               const int* n, const T* alpha, const T* a, const int* lda, T* b, const int* ldb, Len, Len, Len, Len);
  void (*gemm)(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* alpha, const T* a,
               const int* lda, const T* b, const int* ldb, const T* beta, T* c, const int* ldc, Len, Len);
  void (*herk)(const char* uplo, const char* trans, const int* n, const int* k, const R* alpha, const T* a,
               const int* lda, const R* beta, T* c, const int* ldc, Len, Len);
  void (*laswp)(const int* n, T* a, const int* lda, const int* k1, const int* k2, const int* ipiv, const int* incx);
  // Matrix forms and Householder products: gees gives the eigenvalues in one complex array and
  // takes a real workspace; hetrd's tridiagonal form (d, e) is real; unmqr applies Q or Q^H ('C').
  void (*gees)(const char* jobvs, const char* sort, void* select, const int* n, T* a, const int* lda, int* sdim,
               T* w, T* vs, const int* ldvs, T* work, const int* lwork, R* rwork, int* bwork, int* info, Len, Len);
  void (*gehrd)(const int* n, const int* ilo, const int* ihi, T* a, const int* lda, T* tau, T* work,
                const int* lwork, int* info);
  void (*hetrd)(const char* uplo, const int* n, T* a, const int* lda, R* d, R* e, T* tau, T* work, const int* lwork,
                int* info, Len);
  void (*gtsv)(const int* n, const int* nrhs, T* dl, T* d, T* du, T* b, const int* ldb, int* info);
  void (*unmqr)(const char* side, const char* trans, const int* m, const int* n, const int* k, const T* a,
                const int* lda, const T* tau, T* c, const int* ldc, T* work, const int* lwork, int* info, Len, Len);
};

struct LapackApi {
  LapackFns<float> s;
  LapackFns<double> d;
  LapackFns<std::complex<float>> c;
  LapackFns<std::complex<double>> z;
  template <typename T>
  const LapackFns<T>& fns() const {
    if constexpr (std::is_same_v<T, float>) return s;
    else if constexpr (std::is_same_v<T, double>) return d;
    else if constexpr (std::is_same_v<T, std::complex<float>>) return c;
    else return z;
  }
};

// Resolves the routines from an opened library handle (called by load_blas); false when one is
// missing, and LAPACK then stays unavailable.
bool load_lapack(void* lib);
// The loaded routines, or nullptr.
const LapackApi* lapack_api();
bool lapack_loaded();

}  // namespace xjax
