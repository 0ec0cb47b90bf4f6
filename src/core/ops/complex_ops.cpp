#include "core/ops/complex_ops.h"

#include <string>

#include "core/errors.h"

namespace xjax {

bool accepts_complex(OpId op) {
  switch (op) {
    // values, data movement and control: the kernels move elements as bytes (cpu/bytes16.h)
    case OpId::parameter_: case OpId::constant_: case OpId::empty_: case OpId::reshape_:
    case OpId::broadcast_in_dim_: case OpId::transpose_: case OpId::slice_: case OpId::dynamic_slice_:
    case OpId::dynamic_update_slice_: case OpId::concatenate_: case OpId::pad_: case OpId::rev_:
    case OpId::gather_: case OpId::scatter_: case OpId::scatter_add_: case OpId::select_n_: case OpId::copy_: case OpId::optimization_barrier_:
    case OpId::cond_: case OpId::while_: case OpId::host_callback_:
    // the complex elementwise loops (cpu/elementwise_complex.cpp; values: ops/scalar_complex.h)
    case OpId::convert_element_type_: case OpId::complex_: case OpId::real_: case OpId::imag_: case OpId::conj_:
    case OpId::add_: case OpId::sub_: case OpId::mul_: case OpId::div_: case OpId::neg_: case OpId::eq_:
    case OpId::ne_: case OpId::abs_: case OpId::sign_: case OpId::square_: case OpId::integer_pow_:
    case OpId::exp_: case OpId::log_: case OpId::sqrt_: case OpId::rsqrt_: case OpId::expm1_: case OpId::log1p_:
    case OpId::exp2_: case OpId::logistic_: case OpId::pow_: case OpId::atan2_: case OpId::sin_: case OpId::cos_: case OpId::tan_:
    case OpId::sinh_: case OpId::cosh_: case OpId::tanh_: case OpId::asin_: case OpId::acos_: case OpId::atan_:
    case OpId::asinh_: case OpId::acosh_: case OpId::atanh_:
    // reductions
    case OpId::max_: case OpId::min_:
    case OpId::reduce_sum_: case OpId::reduce_prod_: case OpId::reduce_max_: case OpId::reduce_min_:
    // contractions (cpu/contraction.cpp: four real products over the parts)
    case OpId::dot_general_:
    // linear algebra (cpu/linalg_*.cpp: LAPACK's c/z routines; eig: complex results of real matrices too)
    case OpId::cholesky_: case OpId::lu_: case OpId::qr_: case OpId::eigh_: case OpId::svd_:
    case OpId::triangular_solve_: case OpId::eig_:
    // the matrix forms and Householder products (cpu/linalg_schur.cpp, linalg_householder.cpp)
    case OpId::schur_: case OpId::hessenberg_: case OpId::tridiagonal_: case OpId::tridiagonal_solve_:
    case OpId::householder_product_: case OpId::ormqr_: case OpId::geqrf_:
    // Fourier transforms (cpu/fft.cpp; types checked by ops/fft.cpp)
    case OpId::fft_:
    // sort: a complex key is its real and imaginary parts as two float keys (cpu/sort_keys.h)
    case OpId::sort_:
    // cumulative sums, products and logsumexps (cpu/cumulative.cpp: scalar_complex.h's add, mul, logaddexp)
    case OpId::cumsum_: case OpId::cumprod_: case OpId::cumlogsumexp_:
    // convolution (cpu/convolution.cpp: four real convolutions over the parts)
    case OpId::conv_general_dilated_:
    // scatters that combine (cpu/index_scatter.cpp: scalar_complex.h's mul, max, min)
    case OpId::scatter_mul_: case OpId::scatter_min_: case OpId::scatter_max_:
    // clamp (scalar_complex.h: XLA's, by the real parts)
    case OpId::clamp_:
    // windowed sums, maxima and minima (cpu/window.cpp: scalar_complex.h's add, max, min)
    case OpId::reduce_window_sum_: case OpId::reduce_window_max_: case OpId::reduce_window_min_:
      return true;
    default:
      return false;
  }
}

void check_complex_support(OpId op, const std::vector<TypeInfo>& in, const std::vector<TypeInfo>& out) {
  if (accepts_complex(op)) return;
  for (const auto* types : {&in, &out})
    for (const TypeInfo& t : *types)
      if (is_complex(t.dtype))
        throw NotImplementedError(std::string("[") + op_name(op) + "] does not support " + dtype_name(t.dtype) +
                                  " operands yet");
}

}  // namespace xjax
