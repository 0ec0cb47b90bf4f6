// Shape and dtype rules of the linear-algebra ops. Each works on the last two dims (the matrix)
// and batches over the leading ones; float32, float64, complex64 and complex128 (what LAPACK
// computes). Messages follow jax.lax.linalg's. Eigenvalues (eigh) and
// singular values (svd) are real: of the real dtype of a complex operand (real_dtype). Results:
//   cholesky(a[..., n, n])            -> l[..., n, n] (lower; NaN where a is not positive definite)
//   lu(a[..., m, n])                  -> lu[..., m, n], pivots int32[..., min(m, n)], permutation int32[..., m]
//   qr(a[..., m, n]; full_matrices, pivoting)
//                                     -> q[..., m, k], r[..., k, n]; k = m if full_matrices else min(m, n);
//                                        and with pivoting, p int32[..., n]: A[:, p] = Q R
//   eigh(a[..., n, n]; lower)         -> v[..., n, n] (eigenvectors in columns), w[..., n] (ascending)
//   svd(a[..., m, n]; full_matrices, compute_uv)
//                                     -> s[..., k] (descending), u[..., m, m|k], vt[..., n|k, n]; k = min(m, n)
//   triangular_solve(a[..., m, m], b[..., m, n] (left_side) or b[..., n, m]) -> x, shaped as b
//   lu_pivots_to_permutation(pivots int32[..., k]; permutation_size) -> int32[..., permutation_size]
#include <algorithm>
#include <limits>
#include <string>

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

// Checks the rank and dtype of operand `pos` and that its matrices fit LAPACK's 32-bit sizes.
void check_matrix(OpId op, const TypeInfo& t, int pos) {
  const std::string name = op_name(op);
  if (t.shape.size() < 2)
    fail_type(op, "Input " + std::to_string(pos) + " to " + name + " must have rank at least 2, but got shape=" +
                      shape_str(t.shape));
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64 && !is_complex(t.dtype))
    fail_type(op, name + " does not accept dtype " + dtype_name(t.dtype) + " at position " + std::to_string(pos) +
                      ". Accepted dtypes are float32, float64, complex64 and complex128.");
  const int64_t m = t.shape[t.shape.size() - 2], n = t.shape.back();
  if (m > kMaxInt || n > kMaxInt || (n > 0 && m > kMaxInt / n))
    fail_value(op, "matrices of more than 2**31 - 1 elements are beyond LAPACK's 32-bit sizes, got shape " +
                       shape_str(t.shape));
}

DType real_dtype(DType dt) {
  return dt == DType::Complex64 ? DType::Float32 : dt == DType::Complex128 ? DType::Float64 : dt;
}

Shape batch_of(const Shape& s, size_t core_rank) { return Shape(s.begin(), s.end() - int64_t(core_rank)); }

Shape with(Shape batch, std::initializer_list<int64_t> dims) {
  batch.insert(batch.end(), dims);
  return batch;
}

std::vector<TypeInfo> infer_cholesky(const std::vector<TypeInfo>& in, const Attrs&) {
  const TypeInfo& a = in[0];
  check_matrix(OpId::cholesky_, a, 0);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back();
  if (m != n)
    fail_value(OpId::cholesky_, "The input to cholesky must be a square matrix. Got shape " + shape_str(a.shape) + ".");
  return {a};
}

std::vector<TypeInfo> infer_lu(const std::vector<TypeInfo>& in, const Attrs&) {
  const TypeInfo& a = in[0];
  check_matrix(OpId::lu_, a, 0);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back();
  const Shape batch = batch_of(a.shape, 2);
  return {a, {with(batch, {std::min(m, n)}), DType::Int32}, {with(batch, {m}), DType::Int32}};
}

std::vector<TypeInfo> infer_qr(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& a = in[0];
  check_matrix(OpId::qr_, a, 0);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back();
  const int64_t k = bool_attr_or(OpId::qr_, attrs, "full_matrices", true) ? m : std::min(m, n);
  if (m > kMaxInt / std::max<int64_t>(k, 1))
    fail_value(OpId::qr_, "q of shape (" + std::to_string(m) + ", " + std::to_string(k) +
                              ") is beyond LAPACK's 32-bit sizes");
  const Shape batch = batch_of(a.shape, 2);
  std::vector<TypeInfo> out{{with(batch, {m, k}), a.dtype}, {with(batch, {k, n}), a.dtype}};
  if (bool_attr_or(OpId::qr_, attrs, "pivoting", false)) out.push_back({with(batch, {n}), DType::Int32});
  return out;
}

std::vector<TypeInfo> infer_eigh(const std::vector<TypeInfo>& in, const Attrs&) {
  const TypeInfo& a = in[0];
  check_matrix(OpId::eigh_, a, 0);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back();
  if (m != n)
    fail_value(OpId::eigh_, "Argument to symmetric eigendecomposition must have shape [..., n, n], got shape " +
                                shape_str(a.shape));
  return {a, {with(batch_of(a.shape, 2), {n}), real_dtype(a.dtype)}};
}

// eig: complex eigenvalues, then the left and the right eigenvectors if asked for.
std::vector<TypeInfo> infer_eig(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& a = in[0];
  check_matrix(OpId::eig_, a, 0);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back();
  if (m != n)
    fail_value(OpId::eig_, "Argument to nonsymmetric eigendecomposition must have shape [..., n, n], got shape " +
                               shape_str(a.shape));
  const DType c = real_dtype(a.dtype) == DType::Float64 ? DType::Complex128 : DType::Complex64;
  const Shape batch = batch_of(a.shape, 2);
  std::vector<TypeInfo> out{{with(batch, {n}), c}};
  for (const char* which : {"compute_left_eigenvectors", "compute_right_eigenvectors"})
    if (bool_attr_or(OpId::eig_, attrs, which, true)) out.push_back({with(batch, {n, n}), c});
  return out;
}

std::vector<TypeInfo> infer_svd(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const TypeInfo& a = in[0];
  check_matrix(OpId::svd_, a, 0);
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n);
  const bool full = bool_attr_or(OpId::svd_, attrs, "full_matrices", true);
  const Shape batch = batch_of(a.shape, 2);
  std::vector<TypeInfo> out{{with(batch, {k}), real_dtype(a.dtype)}};
  if (bool_attr_or(OpId::svd_, attrs, "compute_uv", true)) {
    const int64_t uc = full ? m : k, vr = full ? n : k;
    if (m > kMaxInt / std::max<int64_t>(uc, 1) || n > kMaxInt / std::max<int64_t>(vr, 1))
      fail_value(OpId::svd_, "singular vectors of " + shape_str(a.shape) + " are beyond LAPACK's 32-bit sizes");
    out.push_back({with(batch, {m, uc}), a.dtype});
    out.push_back({with(batch, {vr, n}), a.dtype});
  }
  return out;
}

std::vector<TypeInfo> infer_triangular_solve(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::triangular_solve_;
  const TypeInfo &a = in[0], &b = in[1];
  check_matrix(op, a, 0);
  if (a.dtype != b.dtype)
    fail_type(op, std::string("lax.triangular_solve requires arguments to have the same dtypes, got ") +
                      dtype_name(a.dtype) + ", " + dtype_name(b.dtype) + ".");
  check_matrix(op, b, 1);
  const size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra != rb)
    fail_type(op, "All inputs to triangular_solve must have the same number of batch dimensions, but got [" +
                      std::to_string(ra - 2) + ", " + std::to_string(rb - 2) + "] batch dimensions for the inputs.");
  if (a.shape[ra - 2] != a.shape[ra - 1])
    fail_value(op, "The first input to triangular_solve must be a square matrix. Got shape " + shape_str(a.shape) +
                       ".");
  const bool left = bool_attr_or(op, attrs, "left_side", false);
  if (a.shape[ra - 1] != b.shape[left ? rb - 2 : rb - 1])
    fail_value(op, "Incompatible shapes for arguments to triangular_solve: " + shape_str(a.shape) + " and " +
                       shape_str(b.shape) + ".");
  if (batch_of(a.shape, 2) != batch_of(b.shape, 2))
    fail_value(op, "the batch dimensions of its inputs must be equal, got " + types_str(in));
  return {b};
}

std::vector<TypeInfo> infer_lu_pivots_to_permutation(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::lu_pivots_to_permutation_;
  const TypeInfo& p = in[0];
  if (p.shape.empty())
    fail_type(op, "Input 0 to lu_pivots_to_permutation must have rank at least 1, but got shape=" + shape_str(p.shape));
  if (p.dtype != DType::Int32)
    fail_type(op, std::string("lu_pivots_to_permutation does not accept dtype ") + dtype_name(p.dtype) +
                      " at position 0. Accepted dtypes at position 0 are subtypes of int32.");
  const int64_t size = int_attr(op, attrs, "permutation_size");
  if (size < p.shape.back())
    fail_value(op, "Output permutation size " + std::to_string(size) +
                       " has to exceed the trailing dimension of the pivots. Got pivots size " +
                       std::to_string(p.shape.back()));
  if (size > kMaxInt) fail_value(op, "permutation_size " + std::to_string(size) + " does not fit in int32");
  Shape out = p.shape;
  out.back() = size;
  return {{out, DType::Int32}};
}

}  // namespace

void register_linalg_infer(OpTable& t) {
  t.set_infer(OpId::cholesky_, infer_cholesky);
  t.set_infer(OpId::lu_, infer_lu);
  t.set_infer(OpId::qr_, infer_qr);
  t.set_infer(OpId::eigh_, infer_eigh);
  t.set_infer(OpId::svd_, infer_svd);
  t.set_infer(OpId::eig_, infer_eig);
  t.set_infer(OpId::triangular_solve_, infer_triangular_solve);
  t.set_infer(OpId::lu_pivots_to_permutation_, infer_lu_pivots_to_permutation);
}

}  // namespace xjax
