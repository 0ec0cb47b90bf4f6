// Helpers shared by the linear-algebra kernels (linalg_*.cpp): the LAPACK routines or a clear
// error, the split of a batch of matrices over the current pool, workspace sizes queried once per
// shape, and the layout copies between our row-major matrices and LAPACK's column-major ones.
#pragma once
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/cpu/lapack.h"
#include "core/ops/ops.h"

namespace xjax::linalg {

// Element types: float, double and the complex ones; R is the real type of T (of eigenvalues,
// singular values and norms). One templated kernel per factorization serves the four, where
// the complex case calls the Hermitian / unitary routine (`if constexpr (is_complex_v<T>)`).
template <typename T>
struct RealOf { using type = T; };
template <typename R>
struct RealOf<std::complex<R>> { using type = R; };
template <typename T>
using real_of = typename RealOf<T>::type;
template <typename T>
constexpr bool is_complex_v = !std::is_same_v<T, real_of<T>>;

// "T" for a real matrix, "C" (conjugate transpose) for a complex one: the adjoint either way.
template <typename T>
constexpr const char* adjoint_op() {
  return is_complex_v<T> ? "C" : "T";
}

template <typename T>
bool finite_value(const T& x) {
  if constexpr (is_complex_v<T>) return std::isfinite(x.real()) && std::isfinite(x.imag());
  else return std::isfinite(x);
}

// Calls f(T{}) for the four dtypes the linear-algebra ops take (their shape rules refuse others).
template <typename F>
decltype(auto) dispatch_linalg(DType dt, F&& f) {
  switch (dt) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Complex64: return f(std::complex<float>{});
    case DType::Complex128: return f(std::complex<double>{});
    default: throw std::logic_error(std::string("linalg kernel: unexpected dtype ") + dtype_name(dt));
  }
}

// The LAPACK routines; throws (naming the op) when LAPACK is not loaded.
const LapackApi& lapack(OpId op);
template <typename T>
const LapackFns<T>& lapack_fns(OpId op) {
  return lapack(op).fns<T>();
}

// The number of matrices (or vectors, core_rank 1) in a batch of `shape`.
inline int64_t batch_count(const Shape& shape, size_t core_rank) {
  int64_t count = 1;  // (a product in place: a temporary Shape here set off GCC 12's -Wfree-nonheap-object)
  for (size_t i = 0; i + core_rank < shape.size(); ++i) count *= shape[i];
  return count;
}

// Runs fn(b0, b1) over a batch of `count` matrices on the current pool. `cost`: the work of one
// matrix (about its flop count), so that small matrices go to the threads in groups.
void for_batch(int64_t count, double cost, const std::function<void(int64_t, int64_t)>& fn);

// Workspace sizes by (routine, dtype, dims): `query` (a LAPACK call with lwork = -1) runs once
// per key in the process; its two sizes (e.g. lwork and liwork) are kept.
enum class Routine : int { geqrf, geqp3, orgqr, syevd, geev, gesdd };
std::array<int, 2> workspace(Routine r, DType dt, std::array<int64_t, 4> dims,
                             const std::function<std::array<int, 2>()>& query);

// LAPACK returns workspace sizes as floating-point numbers (the real part of a complex one);
// rounds up, and throws if too large.
template <typename T>
int lwork_of(T w, OpId op) {
  const double v = std::ceil(double(std::real(w)));
  if (!(v <= double(std::numeric_limits<int>::max())))
    throw std::runtime_error(std::string("[") + op_name(op) + "] LAPACK's workspace does not fit in 32 bits");
  return std::max(1, int(v));
}

// dst (cols x rows, row-major) = transpose of src (rows x cols, row-major), for src's rows
// [r0, r1): also the conversion between a row-major matrix and a column-major one (leading
// dimension = rows). In 8 x 8 blocks through registers: wider tiles thrash the cache when a
// dimension is a power of two.
template <typename T>
void transpose_rows(const T* src, T* dst, int64_t rows, int64_t cols, int64_t r0, int64_t r1) {
  constexpr int64_t B = 8;
  int64_t i0 = r0;
  for (; i0 + B <= r1; i0 += B) {
    int64_t j0 = 0;
    for (; j0 + B <= cols; j0 += B) {
      T t[B][B];
      for (int64_t i = 0; i < B; ++i)
        for (int64_t j = 0; j < B; ++j) t[j][i] = src[(i0 + i) * cols + j0 + j];
      for (int64_t j = 0; j < B; ++j)
        for (int64_t i = 0; i < B; ++i) dst[(j0 + j) * rows + i0 + i] = t[j][i];
    }
    for (int64_t i = i0; i < i0 + B; ++i)
      for (int64_t j = j0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
  }
  for (int64_t i = i0; i < r1; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
}

template <typename T>
void transpose(const T* src, T* dst, int64_t rows, int64_t cols) {
  transpose_rows(src, dst, rows, cols, 0, rows);
}

// The same over the current pool (inline inside a parallel region, or when small).
void parallel_rows(int64_t rows, int64_t cols, const std::function<void(int64_t, int64_t)>& fn);
template <typename T>
void transpose_parallel(const T* src, T* dst, int64_t rows, int64_t cols) {
  parallel_rows(rows, cols, [&](int64_t r0, int64_t r1) { transpose_rows(src, dst, rows, cols, r0, r1); });
}

template <typename T>
void transpose_square_in_place(T* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) std::swap(a[i * n + j], a[j * n + i]);
}

template <typename T>
void fill(T* p, int64_t n, T v) {
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

template <typename T>
T nan_value() {
  const real_of<T> nan = std::numeric_limits<real_of<T>>::quiet_NaN();
  if constexpr (is_complex_v<T>) return T(nan, nan);
  else return nan;
}

template <typename T>
void fill_nan(T* p, int64_t n) {
  fill(p, n, nan_value<T>());
}

// The identity (rows x cols, row-major).
template <typename T>
void eye(T* p, int64_t rows, int64_t cols) {
  fill(p, rows * cols, T(0));
  for (int64_t i = 0; i < std::min(rows, cols); ++i) p[i * cols + i] = T(1);
}

// Factorizations of one large matrix split over the current pool (linalg_blocked.cpp): the
// right-looking blocked algorithms LAPACK uses, with the trailing updates (trsm, gemm, syrk) shared
// out by fixed blocks of columns. Every matrix of at least that order takes this route, whatever the
// thread count or batch size, so that its factors (and pivots) are the same bits everywhere.
bool use_blocked(int64_t order);
template <typename T>
int blocked_potrf_upper(const LapackFns<T>& f, T* a, int64_t n);  // column-major; potrf's info
template <typename T>
void blocked_getrf(const LapackFns<T>& f, T* a, int64_t m, int64_t n, int* ipiv);  // column-major, ld m

// The row swaps of LU pivots (0-based) applied in order to the identity permutation of size m, as
// jax.lax.linalg.lu_pivots_to_permutation: a negative pivot counts from the end, a read out of
// range is clamped, a write out of range is dropped.
void pivots_to_permutation(const int32_t* pivots, int64_t k, int32_t* perm, int64_t m);

}  // namespace xjax::linalg
