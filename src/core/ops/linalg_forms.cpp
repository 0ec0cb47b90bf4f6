// Shape and dtype rules of the matrix forms and Householder products (jax.lax.linalg's schur,
// hessenberg, tridiagonal, tridiagonal_solve, householder_product, ormqr, and the packed QR that
// ormqr reads). Each works on the trailing dims and batches over the leading ones, which every
// operand must have alike; float32, float64, complex64 and complex128 (LAPACK's s, d, c and z
// routines). Messages follow jax.lax.linalg's. Results (of a's dtype, except tridiagonal's d and e,
// real for a complex Hermitian a, as JAX's):
//   schur(a[..., n, n]; compute_schur_vectors) -> t[..., n, n] (quasi-triangular; triangular for
//                                        complex a), and z[..., n, n]
//   hessenberg(a[..., n, n])          -> packed[..., n, n] (H on and above the subdiagonal, the
//                                        reflectors below), taus[..., max(n - 1, 0)]
//   tridiagonal(a[..., n, n]; lower)  -> packed[..., n, n], d[..., n], e[..., n - 1], taus[..., n - 1]; n >= 1
//   tridiagonal_solve(dl, d, du [..., m], b[..., m, k]) -> x[..., m, k] (NaN where singular)
//   householder_product(a[..., m, n], taus[..., k]; m >= n, k <= n) -> q[..., m, n]
//   ormqr(a[..., m, n], taus[..., k], c[..., r, s]; left, transpose) -> Q c, Q^H c, c Q or c Q^H
//   geqrf(a[..., m, n]; pivoting)     -> packed[..., m, n], taus[..., min(m, n)], and with pivoting
//                                        the column order int32[..., n] (0-based)
#include <algorithm>
#include <limits>
#include <string>

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

Shape batch_of(const Shape& s, size_t core_rank) { return Shape(s.begin(), s.end() - int64_t(core_rank)); }

Shape with(Shape batch, std::initializer_list<int64_t> dims) {
  batch.insert(batch.end(), dims);
  return batch;
}

// Checks operand `pos`: at least `rank` dims, a LAPACK float type, sizes within 32-bit ints.
void check_operand(OpId op, const TypeInfo& t, int pos, size_t rank) {
  const std::string name = op_name(op);
  if (t.shape.size() < rank)
    fail_type(op, "Input " + std::to_string(pos) + " to " + name + " must have rank at least " +
                      std::to_string(rank) + ", but got shape=" + shape_str(t.shape));
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64 && !is_complex(t.dtype))
    fail_type(op, name + " does not accept dtype " + dtype_name(t.dtype) + " at position " + std::to_string(pos) +
                      ". Accepted dtypes at position " + std::to_string(pos) +
                      " are float32, float64, complex64 and complex128.");
  int64_t core = 1;
  for (size_t i = t.shape.size() - rank; i < t.shape.size(); ++i) {
    if (t.shape[i] > kMaxInt || (t.shape[i] > 0 && core > kMaxInt / t.shape[i]))
      fail_value(op, "matrices of more than 2**31 - 1 elements are beyond LAPACK's 32-bit sizes, got shape " +
                         shape_str(t.shape));
    core *= t.shape[i];
  }
}

// Every operand of the same dtype and the same batch dims (operand i has ranks[i] core dims).
void check_operands(OpId op, const std::vector<TypeInfo>& in, std::initializer_list<size_t> ranks) {
  const std::string name = op_name(op);
  const std::vector<size_t> core(ranks);
  for (size_t i = 0; i < in.size(); ++i) check_operand(op, in[i], int(i), core[i]);
  const Shape batch = batch_of(in[0].shape, core[0]);
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].dtype != in[0].dtype)
      fail_type(op, name + " requires arguments to have the same dtypes, got " + types_str(in));
    if (in[i].shape.size() - core[i] != batch.size())
      fail_type(op, "All inputs to " + name + " must have the same number of batch dimensions, but got " +
                        types_str(in));
    if (batch_of(in[i].shape, core[i]) != batch)
      fail_value(op, "the batch dimensions of its inputs must be equal, got " + types_str(in));
  }
}

DType real_dtype(DType dt) {
  return dt == DType::Complex64 ? DType::Float32 : dt == DType::Complex128 ? DType::Float64 : dt;
}

int64_t rows(const TypeInfo& t) { return t.shape[t.shape.size() - 2]; }

void check_square(OpId op, const TypeInfo& a, const std::string& what) {
  if (rows(a) != a.shape.back()) fail_value(op, what + " Got shape " + shape_str(a.shape) + ".");
}

std::vector<TypeInfo> infer_schur(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::schur_;
  check_operands(op, in, {2});
  check_square(op, in[0], "The input to schur must be a square matrix.");
  if (bool_attr_or(op, attrs, "compute_schur_vectors", true)) return {in[0], in[0]};
  return {in[0]};
}

std::vector<TypeInfo> infer_hessenberg(const std::vector<TypeInfo>& in, const Attrs&) {
  const OpId op = OpId::hessenberg_;
  check_operands(op, in, {2});
  const TypeInfo& a = in[0];
  if (rows(a) != a.shape.back())
    fail_value(op, "Argument to Hessenberg reduction must have shape [..., n, n], got shape " + shape_str(a.shape));
  return {a, {with(batch_of(a.shape, 2), {std::max<int64_t>(a.shape.back() - 1, 0)}), a.dtype}};
}

std::vector<TypeInfo> infer_tridiagonal(const std::vector<TypeInfo>& in, const Attrs&) {
  const OpId op = OpId::tridiagonal_;
  check_operands(op, in, {2});
  const TypeInfo& a = in[0];
  const int64_t n = a.shape.back();
  if (rows(a) != n || n == 0)
    fail_value(op, "The input to tridiagonal must be a square matrix. Got shape " + shape_str(a.shape) + ".");
  const Shape batch = batch_of(a.shape, 2);
  const DType r = real_dtype(a.dtype);  // (the tridiagonal form of a Hermitian matrix is real)
  return {a, {with(batch, {n}), r}, {with(batch, {n - 1}), r}, {with(batch, {n - 1}), a.dtype}};
}

std::vector<TypeInfo> infer_tridiagonal_solve(const std::vector<TypeInfo>& in, const Attrs&) {
  const OpId op = OpId::tridiagonal_solve_;
  for (int i = 0; i < 3; ++i) check_operand(op, in[size_t(i)], i, 1);
  check_operand(op, in[3], 3, 2);
  for (size_t i = 1; i < 4; ++i)
    if (in[i].dtype != in[0].dtype)
      fail_type(op, "tridiagonal_solve requires arguments to have the same dtypes, got " + types_str(in));
  if (in[0].shape != in[1].shape || in[0].shape != in[2].shape)
    fail_type(op, "tridiagonal_solve requires that all diagonal arguments have the same shape.");
  if (in[0].shape != batch_of(in[3].shape, 1))
    fail_type(op, "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the dimensions of the "
                  "diagonal arguments.");
  return {in[3]};
}

std::vector<TypeInfo> infer_householder_product(const std::vector<TypeInfo>& in, const Attrs&) {
  const OpId op = OpId::householder_product_;
  check_operands(op, in, {2, 1});
  const TypeInfo& a = in[0];
  const int64_t m = rows(a), n = a.shape.back();
  if (m < n)
    fail_value(op, "The first argument to householder_product must have at least as many rows as columns, got shape " +
                       shape_str(a.shape));
  if (in[1].shape.back() > std::min(m, n))
    fail_value(op, "The second argument to householder_product must not have more rows than the minimum of the "
                   "first argument's rows and columns.");
  return {a};
}

std::vector<TypeInfo> infer_ormqr(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::ormqr_;
  check_operands(op, in, {2, 1, 2});
  const TypeInfo &a = in[0], &c = in[2];
  const int64_t m = rows(a);
  const bool left = bool_attr_or(op, attrs, "left", true);
  if (left && rows(c) != m)
    fail_value(op, "ormqr with left=True expects c to have the same number of rows as the Householder matrix a. Got "
                   "a shape " + shape_str(a.shape) + " and c shape " + shape_str(c.shape) + ".");
  if (!left && c.shape.back() != m)
    fail_value(op, "ormqr with left=False expects c to have the same number of columns as the Householder matrix a "
                   "has rows. Got a shape " + shape_str(a.shape) + " and c shape " + shape_str(c.shape) + ".");
  if (in[1].shape.back() > std::min(m, a.shape.back()))
    fail_value(op, "taus of shape " + shape_str(in[1].shape) + " hold more reflectors than a of shape " +
                       shape_str(a.shape) + " has columns");
  return {c};
}

std::vector<TypeInfo> infer_geqrf(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::geqrf_;
  check_operands(op, in, {2});
  const TypeInfo& a = in[0];
  const Shape batch = batch_of(a.shape, 2);
  std::vector<TypeInfo> out{a, {with(batch, {std::min(rows(a), a.shape.back())}), a.dtype}};
  if (bool_attr_or(op, attrs, "pivoting", false)) out.push_back({with(batch, {a.shape.back()}), DType::Int32});
  return out;
}

}  // namespace

void register_linalg_forms_infer(OpTable& t) {
  t.set_infer(OpId::schur_, infer_schur);
  t.set_infer(OpId::hessenberg_, infer_hessenberg);
  t.set_infer(OpId::tridiagonal_, infer_tridiagonal);
  t.set_infer(OpId::tridiagonal_solve_, infer_tridiagonal_solve);
  t.set_infer(OpId::householder_product_, infer_householder_product);
  t.set_infer(OpId::ormqr_, infer_ormqr);
  t.set_infer(OpId::geqrf_, infer_geqrf);
}

}  // namespace xjax
