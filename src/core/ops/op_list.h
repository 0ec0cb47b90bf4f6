// The op catalogue: every op the core knows, with its kind and arity (-1: variadic).
// The kind alone decides how the compiler may treat an op (fusion, layout, ...): Elementwise ops
// and Broadcast ops (pure index maps that keep element order: reshape, broadcast_in_dim) fuse into
// one kernel, which may end in Reductions; Effect ops are never removed or reordered; a Barrier
// passes its operands through (its results share their buffers) and is opaque to every pass.
#pragma once

#define XJAX_OP_LIST(X)                                                                          \
  /* elementwise unary */                                                                        \
  X(neg, Elementwise, 1) X(sign, Elementwise, 1) X(floor, Elementwise, 1) X(ceil, Elementwise, 1) \
  X(round, Elementwise, 1) X(is_finite, Elementwise, 1) X(exp, Elementwise, 1)                   \
  X(exp2, Elementwise, 1) X(log, Elementwise, 1) X(log1p, Elementwise, 1) X(expm1, Elementwise, 1) \
  X(tanh, Elementwise, 1) X(logistic, Elementwise, 1) X(sin, Elementwise, 1) X(cos, Elementwise, 1) \
  X(tan, Elementwise, 1) X(asin, Elementwise, 1) X(acos, Elementwise, 1) X(atan, Elementwise, 1)  \
  X(sinh, Elementwise, 1) X(cosh, Elementwise, 1) X(asinh, Elementwise, 1)                       \
  X(acosh, Elementwise, 1) X(atanh, Elementwise, 1) X(sqrt, Elementwise, 1)                      \
  X(rsqrt, Elementwise, 1) X(cbrt, Elementwise, 1) X(abs, Elementwise, 1) X(bitwise_not, Elementwise, 1)  \
  X(erf, Elementwise, 1) X(erfc, Elementwise, 1) X(erf_inv, Elementwise, 1)                      \
  X(lgamma, Elementwise, 1) X(digamma, Elementwise, 1) X(integer_pow, Elementwise, 1)            \
  X(bessel_i0e, Elementwise, 1) X(bessel_i1e, Elementwise, 1)                                    \
  X(square, Elementwise, 1) X(population_count, Elementwise, 1) X(clz, Elementwise, 1)           \
  X(convert_element_type, Elementwise, 1) X(copy, Elementwise, 1)                                \
  X(bitcast_convert_type, Elementwise, 1)                                                        \
  /* complex numbers (core/ops/scalar_complex.h): parts, conjugate, and complex(re, im) */       \
  X(real, Elementwise, 1) X(imag, Elementwise, 1) X(conj, Elementwise, 1) X(complex, Elementwise, 2) \
  /* elementwise binary */                                                                       \
  X(add, Elementwise, 2) X(sub, Elementwise, 2) X(mul, Elementwise, 2) X(div, Elementwise, 2)     \
  X(rem, Elementwise, 2) X(pow, Elementwise, 2) X(max, Elementwise, 2) X(min, Elementwise, 2)     \
  X(atan2, Elementwise, 2) X(nextafter, Elementwise, 2) X(bitwise_and, Elementwise, 2)                   \
  X(bitwise_or, Elementwise, 2) X(bitwise_xor, Elementwise, 2) X(eq, Elementwise, 2) X(ne, Elementwise, 2)        \
  X(lt, Elementwise, 2) X(le, Elementwise, 2) X(gt, Elementwise, 2) X(ge, Elementwise, 2)         \
  X(shift_left, Elementwise, 2) X(shift_right_logical, Elementwise, 2)                           \
  X(shift_right_arithmetic, Elementwise, 2)                                                      \
  /* special functions (core/ops/scalar_special.h): igamma(a, x), polygamma(n, x), zeta(x, q) */ \
  X(igamma, Elementwise, 2) X(igammac, Elementwise, 2) X(igamma_grad_a, Elementwise, 2)          \
  X(polygamma, Elementwise, 2) X(zeta, Elementwise, 2)                                           \
  X(regularized_incomplete_beta, Elementwise, 3) /* (a, b, x) */                                \
  /* elementwise, more operands */                                                               \
  X(select_n, Elementwise, -1) X(clamp, Elementwise, 3)                                          \
  X(fma, Elementwise, 3) /* a * b + c, rounded once (XLA fuses uniform's scaling so) */          \
  X(threefry2x32, Elementwise, 4) /* uint32 key words, counter words -> both result words in a uint64 */ \
  /* sources: graph inputs and generated values */                                              \
  X(parameter, Source, 0)                                                                        \
  X(iota, Source, 0) X(constant, Source, 0)                                                      \
  /* a fresh buffer of unspecified contents, for values written in full before they are read */ \
  X(empty, Source, 0)                                                                            \
  /* reductions over axes, and scans along one axis */                                           \
  X(reduce_sum, Reduction, 1) X(reduce_prod, Reduction, 1) X(reduce_max, Reduction, 1)           \
  X(reduce_min, Reduction, 1) X(reduce_and, Reduction, 1) X(reduce_or, Reduction, 1)             \
  X(reduce_xor, Reduction, 1) X(argmax, Reduction, 1) X(argmin, Reduction, 1)                    \
  X(cumsum, Cumulative, 1) X(cumprod, Cumulative, 1) X(cummax, Cumulative, 1)                    \
  X(cummin, Cumulative, 1) X(cumlogsumexp, Cumulative, 1)                                        \
  /* data movement */                                                                            \
  X(reshape, Broadcast, 1) X(broadcast_in_dim, Broadcast, 1) X(transpose, Layout, 1)             \
  X(slice, Layout, 1) X(dynamic_slice, Layout, -1) X(dynamic_update_slice, Layout, -1)           \
  X(concatenate, Layout, -1) X(pad, Layout, 2) X(rev, Layout, 1)                                 \
  /* indexing */                                                                                 \
  X(gather, Index, 2) X(scatter, Index, 3) X(scatter_add, Index, 3) X(scatter_mul, Index, 3)     \
  X(scatter_min, Index, 3) X(scatter_max, Index, 3)                                              \
  /* contraction and sorting */                                                                  \
  X(dot_general, Contraction, 2) X(conv_general_dilated, Contraction, 2)                         \
  /* dot_general(lhs, rhs) + addend, made by the simplify pass (accumulated in place by BLAS) */  \
  X(dot_general_add, Contraction, 3)                                                             \
  X(sort, Sort, -1) X(top_k, Sort, 1)                                                            \
  /* linear algebra on the last two dims, batched over the leading ones (LAPACK) */            \
  X(cholesky, Linalg, 1) X(lu, Linalg, 1) X(qr, Linalg, 1) X(eigh, Linalg, 1) X(svd, Linalg, 1)   \
  X(eig, Linalg, 1) /* general matrices: complex eigenvalues and left/right eigenvectors (geev) */  \
  X(triangular_solve, Linalg, 2) X(lu_pivots_to_permutation, Linalg, 1)                          \
  /* matrix forms and Householder products (ops/linalg_forms.cpp): gees, gehrd, sytrd, gtsv, */  \
  /* orgqr, ormqr, and geqrf/geqp3's packed form (for ormqr)                                 */  \
  X(schur, Linalg, 1) X(hessenberg, Linalg, 1) X(tridiagonal, Linalg, 1)                          \
  X(tridiagonal_solve, Linalg, 4) X(householder_product, Linalg, 2) X(ormqr, Linalg, 3)           \
  X(geqrf, Linalg, 1)                                                                            \
  /* discrete Fourier transforms over the trailing 1-3 dims, batched over the leading ones */    \
  X(fft, Fft, 1)                                                                                 \
  /* windowed reductions, and max-pool's derivatives */                                          \
  X(reduce_window_sum, Window, 1) X(reduce_window_max, Window, 1) X(reduce_window_min, Window, 1) \
  X(select_and_gather_add, Window, 2) X(select_and_scatter_add, Window, 2)                       \
  /* control flow over subgraphs, and effects (never removed, run in program order) */           \
  X(cond, Control, -1) X(while, Control, -1) X(host_callback, Effect, -1)                        \
  /* a reduction over every process of a multi-process run, through MPI (core/distributed/mpi.h) */        \
  X(all_reduce, Effect, -1)                                                                     \
  /* identity that no pass sees through (remat keeps its recomputation apart from the original) */ \
  X(optimization_barrier, Barrier, -1)
