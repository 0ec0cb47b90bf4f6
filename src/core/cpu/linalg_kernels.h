// The CPU kernels of the linear-algebra ops (shape rules and conventions: core/ops/linalg.cpp).
#pragma once
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

void cholesky_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void lu_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void lu_pivots_to_permutation_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void qr_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void eig_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void eigh_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void svd_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void triangular_solve_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
// Matrix forms (linalg_schur.cpp) and Householder products and the tridiagonal solve (linalg_householder.cpp).
void schur_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void hessenberg_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void tridiagonal_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void geqrf_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void householder_product_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void ormqr_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void tridiagonal_solve_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

}  // namespace xjax
