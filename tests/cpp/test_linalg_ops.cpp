// The linear-algebra kernels that need no LAPACK (triangular_solve's substitution, the small LU,
// lu_pivots_to_permutation) over batches split on the pool, against plain loops; and the clear
// error of the ops that need LAPACK when it is not loaded (these tests never load it): the target
// of the sanitizer builds for these kernels. With XJAX_TEST_BLAS=<path of libscipy_openblas.so>
// the LAPACK ops run too, one large matrix included (the blocked algorithms over the pool).
#include <dlfcn.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "core/array.h"
#include "core/cpu/blas.h"
#include "core/cpu/kernels.h"
#include "core/cpu/lapack.h"
#include "core/ops/ops.h"
#include "check.h"

using namespace xjax;

namespace {

Array random_array(const Shape& shape, std::mt19937& rng, double diagonal = 0) {
  Array a = Array::empty(shape, DType::Float64);
  std::uniform_real_distribution<double> d(-1, 1);
  double* p = static_cast<double*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = d(rng);
  const int64_t n = shape.back();
  if (diagonal != 0 && shape.size() >= 2 && shape[shape.size() - 2] == n)
    for (int64_t i = 0; i < a.size(); i += n * n)
      for (int64_t j = 0; j < n; ++j) p[i + j * n + j] += diagonal;
  return a;
}

std::vector<Array> run(OpId op, const std::vector<Array>& in, const Attrs& attrs) {
  std::vector<TypeInfo> types;
  for (const Array& a : in) types.push_back({a.shape, a.dtype});
  std::vector<Array> outs;
  std::vector<Tensor> ti, to;
  for (const TypeInfo& t : infer_types(op, types, attrs)) {
    outs.push_back(Array::empty(t.shape, t.dtype));
    to.push_back(Tensor{outs.back().data(), t.shape, t.dtype});
  }
  for (const Array& a : in) ti.push_back(Tensor{a.data(), a.shape, a.dtype});
  cpu_kernel(op)(ti, to, attrs);
  return outs;
}

const double* f64(const Array& a) { return static_cast<const double*>(a.data()); }

// Lower-triangular left solve, every flag off but lower: L X = B checked by multiplying back.
void test_triangular_solve(int64_t batch, int64_t m, int64_t n, std::mt19937& rng) {
  Array a = random_array({batch, m, m}, rng, 4), b = random_array({batch, m, n}, rng);
  Attrs attrs;
  attrs.set("left_side", int64_t(1));
  attrs.set("lower", int64_t(1));
  Array x = run(OpId::triangular_solve_, {a, b}, attrs)[0];
  double worst = 0;
  for (int64_t k = 0; k < batch; ++k)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t t = 0; t <= i; ++t) s += f64(a)[k * m * m + i * m + t] * f64(x)[k * m * n + t * n + j];
        worst = std::max(worst, std::abs(s - f64(b)[k * m * n + i * n + j]));
      }
  CHECK(worst < 1e-10);
}

// P A = L U, checked by multiplying back, for LU's in-place small-matrix path.
void test_small_lu(int64_t batch, int64_t m, int64_t n, std::mt19937& rng) {
  Array a = random_array({batch, m, n}, rng);
  std::vector<Array> outs = run(OpId::lu_, {a}, Attrs{});
  const int64_t k = std::min(m, n);
  double worst = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const double* lu = f64(outs[0]) + b * m * n;
    const int32_t* perm = static_cast<const int32_t*>(outs[2].data()) + b * m;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t t = 0; t <= std::min({i, j, k - 1}); ++t) s += (t == i ? 1.0 : lu[i * n + t]) * lu[t * n + j];
        worst = std::max(worst, std::abs(s - f64(a)[b * m * n + perm[i] * n + j]));
      }
  }
  CHECK(worst < 1e-12);
}

void test_needs_lapack() {
  Array a = Array::empty({40, 40}, DType::Float64);
  for (OpId op : {OpId::cholesky_, OpId::qr_, OpId::eigh_, OpId::svd_, OpId::lu_, OpId::schur_, OpId::hessenberg_,
                  OpId::tridiagonal_, OpId::geqrf_}) {
    bool raised = false;
    try {
      run(op, {a}, Attrs{});
    } catch (const std::runtime_error& e) {
      raised = std::string(e.what()).find("needs LAPACK") != std::string::npos;
    }
    CHECK(raised);
  }
}

// The same for complex matrices; and a library without the routines (here: the program itself)
// leaves LAPACK unavailable.
void test_complex_needs_lapack() {
  Array a = Array::empty({40, 40}, DType::Complex64);
  for (OpId op : {OpId::cholesky_, OpId::qr_, OpId::eigh_, OpId::svd_, OpId::lu_, OpId::eig_}) {
    bool raised = false;
    try {
      run(op, {a}, Attrs{});
    } catch (const std::runtime_error& e) {
      raised = std::string(e.what()).find("needs LAPACK") != std::string::npos;
    }
    CHECK(raised);
  }
  void* self = dlopen(nullptr, RTLD_NOW);
  CHECK(!load_lapack(self) && !lapack_loaded());
}

// Complex types: eigh's and svd's values are of the parts' real dtype, the other results keep the
// operand's; eig's are complex of the operand's precision.
void test_complex_types() {
  const TypeInfo c64{{2, 3, 3}, DType::Complex64}, c128{{4, 5}, DType::Complex128};
  CHECK(infer_types(OpId::eigh_, {c64}, Attrs{})[1].dtype == DType::Float32);
  CHECK(infer_types(OpId::eigh_, {c64}, Attrs{})[0].dtype == DType::Complex64);
  const auto svd = infer_types(OpId::svd_, {c128}, Attrs{});
  CHECK(svd[0].dtype == DType::Float64 && svd[1].dtype == DType::Complex128 && svd[2].dtype == DType::Complex128);
  CHECK(infer_types(OpId::cholesky_, {c64}, Attrs{})[0].dtype == DType::Complex64);
  CHECK(infer_types(OpId::qr_, {c128}, Attrs{})[1].dtype == DType::Complex128);
  CHECK(infer_types(OpId::lu_, {c128}, Attrs{})[0].dtype == DType::Complex128);
  const auto eig = infer_types(OpId::eig_, {c64}, Attrs{});
  CHECK(eig.size() == 3 && eig[0].dtype == DType::Complex64 && eig[2].shape == Shape({2, 3, 3}));
}

// Complex triangular solves by substitution (no LAPACK): conj(A)^T X = B, checked by multiplying back.
void test_complex_triangular_solve(int64_t batch, int64_t m, int64_t n, std::mt19937& rng) {
  using C = std::complex<double>;
  std::uniform_real_distribution<double> d(-1, 1);
  Array a = Array::empty({batch, m, m}, DType::Complex128), b = Array::empty({batch, m, n}, DType::Complex128);
  C* pa = static_cast<C*>(a.data());
  C* pb = static_cast<C*>(b.data());
  for (int64_t i = 0; i < a.size(); ++i) pa[i] = C(d(rng), d(rng)) + ((i % (m * m)) % (m + 1) == 0 ? 4.0 : 0.0);
  for (int64_t i = 0; i < b.size(); ++i) pb[i] = C(d(rng), d(rng));
  Attrs attrs;
  attrs.set("left_side", int64_t(1));
  attrs.set("lower", int64_t(1));
  attrs.set("transpose_a", int64_t(1));
  attrs.set("conjugate_a", int64_t(1));
  Array x = run(OpId::triangular_solve_, {a, b}, attrs)[0];
  const C* px = static_cast<const C*>(x.data());
  double worst = 0;
  for (int64_t k = 0; k < batch; ++k)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        C s = 0;  // (L^H X)[i, j] = sum over t >= i of conj(L[t, i]) X[t, j]
        for (int64_t t = i; t < m; ++t) s += std::conj(pa[k * m * m + t * m + i]) * px[k * m * n + t * n + j];
        worst = std::max(worst, std::abs(s - pb[k * m * n + i * n + j]));
      }
  CHECK(worst < 1e-10);
}

// With LAPACK: A = L L^T and P A = L U for one large matrix (the blocked paths) and a batch.
void test_lapack(std::mt19937& rng) {
  for (int64_t n : {int64_t(300), int64_t(40)}) {
    const int64_t batch = n > 100 ? 1 : 8;
    Array g = random_array({batch, n, n}, rng);
    Array a = Array::empty({batch, n, n}, DType::Float64);
    double* p = static_cast<double*>(a.data());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = i == j ? double(n) : 0.0;
          for (int64_t t = 0; t < n; ++t) s += f64(g)[b * n * n + i * n + t] * f64(g)[b * n * n + j * n + t];
          p[b * n * n + i * n + j] = s;
        }
    Array l = run(OpId::cholesky_, {a}, Attrs{})[0];
    double worst = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int64_t t = 0; t <= j; ++t) s += f64(l)[b * n * n + i * n + t] * f64(l)[b * n * n + j * n + t];
          worst = std::max(worst, std::abs(s - p[b * n * n + i * n + j]));
        }
    CHECK(worst < 1e-9 * n);
    test_small_lu(batch, n, n, rng);  // the LAPACK and blocked LU here: same check
  }
}

// With LAPACK: A = Z T Z^T (schur) for a batch split over the pool, T quasi-triangular.
void test_schur(std::mt19937& rng) {
  const int64_t batch = 6, n = 9;
  Array a = random_array({batch, n, n}, rng);
  std::vector<Array> tz = run(OpId::schur_, {a}, Attrs{});
  double worst = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const double *t = f64(tz[0]) + b * n * n, *z = f64(tz[1]) + b * n * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if (i > j + 1) CHECK(t[i * n + j] == 0);
        double s = 0;
        for (int64_t p = 0; p < n; ++p)
          for (int64_t q = 0; q < n; ++q) s += z[i * n + p] * t[p * n + q] * z[j * n + q];
        worst = std::max(worst, std::abs(s - f64(a)[b * n * n + i * n + j]));
      }
  }
  CHECK(worst < 1e-12);
}

}  // namespace

int main() {
  std::mt19937 rng(0);
  test_triangular_solve(1, 3, 2, rng);
  test_triangular_solve(300, 5, 1, rng);  // a batch split over the pool
  test_triangular_solve(1, 0, 3, rng);
  test_small_lu(500, 4, 4, rng);
  test_small_lu(64, 6, 3, rng);
  test_small_lu(64, 3, 7, rng);
  test_complex_types();
  test_complex_triangular_solve(50, 6, 2, rng);
  {
    Array piv = Array::empty({200, 3}, DType::Int32);
    for (int64_t i = 0; i < piv.size(); ++i) static_cast<int32_t*>(piv.data())[i] = int32_t(i % 7) - 2;
    Attrs attrs;
    attrs.set("permutation_size", int64_t(4));
    Array perm = run(OpId::lu_pivots_to_permutation_, {piv}, attrs)[0];
    CHECK(perm.shape == Shape({200, 4}));
  }
  if (const char* path = std::getenv("XJAX_TEST_BLAS")) {
    CHECK(load_blas(path) && lapack_loaded());
    test_lapack(rng);
    test_schur(rng);
  } else {
    test_needs_lapack();
    test_complex_needs_lapack();
  }
  return check_report();
}
