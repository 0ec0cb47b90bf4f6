// Matrix products for dot_general: one product or a batch of them, on BLAS (float/double, when
// loaded) or on the built-in kernels, split over the thread pool.
#pragma once
#include <cstdint>
#include <vector>

namespace xjax::contraction {

// A strided matrix: element (i, j) at data[i*rs + j*cs], with rs == 1 or cs == 1, and the other
// stride at least the extent of its dimension (what BLAS calls the leading dimension).
template <typename T>
struct Mat {
  const T* data;
  int64_t rs, cs;
};

// The batch dimensions of a product: element offsets of batch index b, by mixed radix.
struct BatchDims {
  std::vector<int64_t> sizes, a_strides, b_strides;
  int64_t count() const;
  void offsets(int64_t b, int64_t* a_off, int64_t* b_off) const;
};

// c[b] = a[b] * b[b] for every batch index b: a[b] is m x k, b[b] is k x n, c[b] is row-major
// m x n at c + b*m*n. k > 0. T is float, double, uint32_t or uint64_t (integers wrap around).
template <typename T>
void batched_matmul(const BatchDims& batch, int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c);

// c = a * b (row-major m x n) with the built-in kernels, never BLAS: for callers that split their
// work over the pool themselves (the convolution kernels); inside their parallel regions it runs
// on the calling thread. k > 0.
template <typename T>
void matmul_serial(int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c);

// c += a * b for one product with m > 1 and n > 1 (a matrix product, not a matrix-vector one);
// T is float or double. Called from outside the thread pool's parallel regions.
template <typename T>
void matmul_accumulate(int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c);

}  // namespace xjax::contraction
