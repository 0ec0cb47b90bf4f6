// Built-in matrix kernels of dot_general: the fallback when no BLAS is loaded, and the only path
// for integers and bool. They are compiled once per instruction set (contraction_kernels_<isa>.cpp)
// and picked at run time from the CPU's features, so one build runs fast on any x86-64 (elsewhere:
// the generic ones, core/arch.h).
//
// Compute types: float, double, uint32_t, uint64_t (integers wrap around, so signed integers are
// computed with their unsigned twins). All the loops are serial: the caller splits the work.
#pragma once
#include <cstdint>

namespace xjax::contraction {

// Function pointers for one compute type T, from one instruction set.
template <typename T>
struct Kernels {
  int mr, nr;  // register tile of the gemm micro-kernel (rows of A x columns of B)
  int64_t kc;  // depth of one packed block
  int64_t mc;  // rows of A packed at once (a multiple of mr)
  int64_t a_buf;  // elements of the scratch that gemm_block packs A into
  // Packs B[0:kc, 0:nc] (element (k, j) at b[k*rs + j*cs]; rs or cs is 1) into panels of nr
  // columns, panel p at dst + p*nr*kc laid out [k][j], zero-padded to a whole panel.
  void (*pack_b)(const T* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, T* dst);
  // C[0:mc, 0:nc] (= or +=) A[0:mc, 0:kc] * B, B packed by pack_b; mc <= this->mc, kc <= this->kc.
  // a_buf holds this->a_buf elements. accumulate: add to C rather than overwrite it.
  void (*gemm_block)(const T* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, const T* b_packed, int64_t nc,
                     T* c, int64_t ldc, bool accumulate, T* a_buf);
  // Row stride of a packed A panel (KC rounded up past a cache line).
  int64_t ka;
  // C[0:mc, 0:nc] (= or +=) the sum over taps t < nt of A_t[0:mc, 0:kc] B_t, with A's rows read
  // through pointers (the convolution's inputs under each tap, read in place, or im2col rows):
  // row i of A_t at a_rows[t * lda + i], lda >= ceil(mc / mr) * mr, every entry readable (rows past
  // mc: any kc readable elements). B packed by pack_b for nt * kc rows; row i of C at c_rows[i].
  // gemm_block's sums in its order (k = t * kc + j), so with nt = 1 and packed rows its bits.
  void (*gemm_indirect)(int64_t mc, int64_t nt, int64_t kc, const T* const* a_rows, int64_t lda, const T* b_packed,
                        int64_t nc, T* const* c_rows, bool accumulate);
  // C[0:m, 0:n] (= or +=) A[0:m, 0:k] B[0:k, 0:n] with k <= kc, B's rows ldb apart and contiguous,
  // A's rows or columns contiguous (a_cs or a_rs 1), C's rows ldc apart: a product that stays in
  // cache, read in place (no packing) with the same bits as gemm_block. a_buf holds this->a_buf
  // elements, b_buf kc * nr.
  void (*gemm_small)(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
                     int64_t ldb, T* c, int64_t ldc, bool accumulate, T* a_buf, T* b_buf);
  // y[i] = sum_k a[i*lda + k] x[k]  (rows of A contiguous), x contiguous, i < m.
  void (*gemv_rows)(int64_t m, int64_t k, const T* a, int64_t lda, const T* x, T* y);
  // y[i] = sum_k a[k*lda + i] x[k]  (columns of A contiguous), x contiguous, i < m.
  void (*gemv_cols)(int64_t m, int64_t k, const T* a, int64_t lda, const T* x, T* y);
};

// The best kernels this CPU runs (XJAX_CONTRACTION_ISA=avx512|avx2|generic forces one).
template <typename T>
const Kernels<T>& kernels();
const char* kernels_isa();

// One table per instruction set, defined in contraction_kernels_<isa>.cpp.
namespace avx512 { template <typename T> Kernels<T> make_kernels(); }
namespace avx2 { template <typename T> Kernels<T> make_kernels(); }
namespace generic { template <typename T> Kernels<T> make_kernels(); }

}  // namespace xjax::contraction
