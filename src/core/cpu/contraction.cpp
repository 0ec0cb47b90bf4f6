// CPU kernel of dot_general. Each operand is seen as a batch of matrices: lhs as [batch, M, K]
// (batch dims, free dims, contracting dims) and rhs as [batch, K, N]; the result [batch, M, N] is
// exactly the row-major output. An operand is used in place when each group of its dims
// collapses to one stride and one of the matrix strides is 1 (BLAS's transpose flags and leading
// dimensions cover the rest); otherwise it is copied (and converted) into a scratch buffer.
//
// Compute types: float16/bfloat16 (and integers with a float preferred_element_type) compute in
// float32, float64 in float64; integers in uint32/uint64 (wrap-around, as XLA), bool as a count of
// true products (then != 0).
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "core/cpu/compute_types.h"
#include "core/cpu/contraction_gemm.h"
#include "core/cpu/kernels.h"
#include "core/ops/ops.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

using contraction::BatchDims;
using contraction::Mat;

const std::vector<int64_t>& ints_or_empty(const Attrs& attrs, const char* name) {
  static const std::vector<int64_t> none;
  return attrs.has(name) ? attrs.get_ints(name) : none;
}

std::vector<int64_t> free_dims(size_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < int64_t(rank); ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contract.begin(), contract.end(), d) == contract.end())
      out.push_back(d);
  return out;
}

int64_t extent(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[d];
  return n;
}

// The one stride of a group of dims read as a single index (row-major over the group), or -1
// when the group does not collapse. A group of size-1 dims has stride 0.
int64_t group_stride(const Shape& shape, const std::vector<int64_t>& strides, const std::vector<int64_t>& dims) {
  int64_t stride = 0, expect = -1;
  for (size_t i = dims.size(); i-- > 0;) {
    const int64_t d = dims[i];
    if (shape[d] == 1) continue;
    if (expect >= 0 && strides[d] != expect) return -1;
    if (expect < 0) stride = strides[d];
    expect = strides[d] * shape[d];
  }
  return stride;
}

// Makes (rs, cs) usable by the kernels and BLAS: one of them 1, the other at least the extent of
// its dimension. False when the layout cannot be used in place.
bool normalise(int64_t rows, int64_t& rs, int64_t cols, int64_t& cs) {
  if (rows <= 1 && cols <= 1) {
    rs = cs = 1;
  } else if (rows <= 1) {
    rs = cs == 1 ? cols : 1;
  } else if (cols <= 1) {
    cs = rs == 1 ? rows : 1;
  } else {
    return (cs == 1 && rs >= cols) || (rs == 1 && cs >= rows);
  }
  return true;
}

// Element offsets of every index of a group of dims (row-major over the group).
std::vector<int64_t> group_offsets(const Shape& shape, const std::vector<int64_t>& strides,
                                   const std::vector<int64_t>& dims) {
  std::vector<int64_t> out{0};
  for (int64_t d : dims) {
    std::vector<int64_t> next;
    next.reserve(out.size() * size_t(shape[d]));
    for (int64_t base : out)
      for (int64_t i = 0; i < shape[d]; ++i) next.push_back(base + i * strides[d]);
    out.swap(next);
  }
  return out;
}

// One operand prepared for the product: a matrix view (into the tensor or a scratch copy) and the
// strides of its batch dims.
template <typename C>
struct Operand {
  Mat<C> mat;
  std::vector<int64_t> batch_strides;
  std::unique_ptr<C[]> copy;
};

// Sees `t` as [batch][rows][cols] over the given groups of dims.
template <typename C>
Operand<C> prepare(const Tensor& t, const std::vector<int64_t>& batch, const std::vector<int64_t>& row_dims,
                   const std::vector<int64_t>& col_dims) {
  Operand<C> op;
  const std::vector<int64_t> strides = contiguous_strides(t.shape);
  const int64_t rows = extent(t.shape, row_dims), cols = extent(t.shape, col_dims);
  int64_t rs = group_stride(t.shape, strides, row_dims), cs = group_stride(t.shape, strides, col_dims);
  if (same_storage<C>(t.dtype) && rs >= 0 && cs >= 0 && normalise(rows, rs, cols, cs)) {
    op.mat = Mat<C>{static_cast<const C*>(t.data), rs, cs};
    for (int64_t d : batch) op.batch_strides.push_back(strides[d]);
    return op;
  }
  // Copy into [batch][rows][cols], or [batch][cols][rows] when the rows vary fastest in memory,
  // so that the copy reads memory mostly in order.
  auto min_stride = [&](const std::vector<int64_t>& dims) {
    int64_t s = INT64_MAX;
    for (int64_t d : dims)
      if (t.shape[d] > 1) s = std::min(s, strides[d]);
    return s;
  };
  const bool rows_inner = min_stride(row_dims) < min_stride(col_dims);
  const std::vector<int64_t>& outer_dims = rows_inner ? col_dims : row_dims;
  const std::vector<int64_t>& inner_dims = rows_inner ? row_dims : col_dims;
  const int64_t n_outer = rows_inner ? cols : rows, n_inner = rows_inner ? rows : cols;
  const int64_t n_batch = extent(t.shape, batch), matrix = rows * cols;
  op.mat = rows_inner ? Mat<C>{nullptr, 1, std::max<int64_t>(rows, 1)} : Mat<C>{nullptr, std::max<int64_t>(cols, 1), 1};
  normalise(rows, op.mat.rs, cols, op.mat.cs);
  op.copy.reset(new C[size_t(std::max<int64_t>(n_batch * matrix, 1))]);
  op.mat.data = op.copy.get();
  int64_t acc = matrix;
  op.batch_strides.assign(batch.size(), 0);
  for (size_t i = batch.size(); i-- > 0;) op.batch_strides[i] = acc, acc *= t.shape[batch[i]];

  // Rows of the copy are indexed by (batch, outer); their source offsets come by mixed radix.
  std::vector<int64_t> row_sizes, row_strides;
  for (const auto* dims : {&batch, &outer_dims})
    for (int64_t d : *dims) row_sizes.push_back(t.shape[d]), row_strides.push_back(strides[d]);
  const int64_t inner_stride = group_stride(t.shape, strides, inner_dims);
  const std::vector<int64_t> inner_off =
      inner_stride >= 0 ? std::vector<int64_t>{} : group_offsets(t.shape, strides, inner_dims);
  C* dst = op.copy.get();
  dispatch_dtype(t.dtype, [&](auto tag) {
    using S = decltype(tag);
    const S* src = static_cast<const S*>(t.data);
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / n_inner);
    parallel_for(n_batch * n_outer, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        int64_t off = 0, q = r;
        for (size_t i = row_sizes.size(); i-- > 0; q /= row_sizes[i]) off += (q % row_sizes[i]) * row_strides[i];
        const S* s = src + off;
        C* d = dst + r * n_inner;
        if (inner_stride >= 0) {
          for (int64_t i = 0; i < n_inner; ++i) d[i] = to_compute<C>(s[i * inner_stride]);
        } else {
          for (int64_t i = 0; i < n_inner; ++i) d[i] = to_compute<C>(s[inner_off[size_t(i)]]);
        }
      }
    });
  });
  return op;
}

struct Problem {
  std::vector<int64_t> lhs_batch, lhs_free, lhs_contract, rhs_batch, rhs_contract, rhs_free;
  int64_t m, n, k;
};

template <typename C>
void run(const Problem& p, const Tensor& lhs, const Tensor& rhs, const Tensor& out) {
  Operand<C> a = prepare<C>(lhs, p.lhs_batch, p.lhs_free, p.lhs_contract);
  Operand<C> b = prepare<C>(rhs, p.rhs_batch, p.rhs_contract, p.rhs_free);
  BatchDims batch;
  for (int64_t d : p.lhs_batch) batch.sizes.push_back(lhs.shape[d]);
  batch.a_strides = a.batch_strides;
  batch.b_strides = b.batch_strides;

  const int64_t total = out.size();
  std::unique_ptr<C[]> result;
  C* c = static_cast<C*>(out.data);
  if (!same_storage<C>(out.dtype)) {
    result.reset(new C[size_t(total)]);
    c = result.get();
  }
  contraction::batched_matmul<C>(batch, p.m, p.n, p.k, a.mat, b.mat, c);
  if (!result) return;
  dispatch_dtype(out.dtype, [&](auto tag) {
    using Y = decltype(tag);
    Y* y = static_cast<Y*>(out.data);
    parallel_for(total, 1 << 15, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = from_compute<Y>(c[i]);
    });
  });
}

// A product of two float32/float64 matrices (no batch dims) straight to the matrix product: the
// common case inside loops, where building the general problem (a dozen small vectors) costs as much
// as a 16x64x64 product. `lc`, `rc`: the contracting dim of each. False when it is not one.
bool matrix_product_at(const Tensor& lhs, const Tensor& rhs, const Tensor& res, int64_t lc, int64_t rc,
                       bool accumulate) {
  if (lhs.shape.size() != 2 || rhs.shape.size() != 2 || lhs.dtype != res.dtype || rhs.dtype != res.dtype ||
      (res.dtype != DType::Float32 && res.dtype != DType::Float64) || res.size() == 0 || lc > 1 || rc > 1)
    return false;
  // lhs as m x k and rhs as k x n, read in place with their strides (BLAS's transpose flags).
  const int64_t l0 = lhs.shape[1], r0 = rhs.shape[1];  // row strides of the row-major operands
  const int64_t m = lhs.shape[1 - lc], k = lhs.shape[lc], n = rhs.shape[1 - rc];
  if (k == 0) return false;
  int64_t ars = lc == 1 ? l0 : 1, acs = lc == 1 ? 1 : l0;
  int64_t brs = rc == 0 ? r0 : 1, bcs = rc == 0 ? 1 : r0;
  if (!normalise(m, ars, k, acs) || !normalise(k, brs, n, bcs)) return false;
  if (accumulate) {  // res += lhs rhs (the simplify pass makes these only for products with m, n > 1)
    if (m < 2 || n < 2) return false;
    if (res.dtype == DType::Float32)
      contraction::matmul_accumulate<float>(m, n, k, Mat<float>{static_cast<const float*>(lhs.data), ars, acs},
                                            Mat<float>{static_cast<const float*>(rhs.data), brs, bcs},
                                            static_cast<float*>(res.data));
    else
      contraction::matmul_accumulate<double>(m, n, k, Mat<double>{static_cast<const double*>(lhs.data), ars, acs},
                                             Mat<double>{static_cast<const double*>(rhs.data), brs, bcs},
                                             static_cast<double*>(res.data));
    return true;
  }
  contraction::BatchDims none;
  if (res.dtype == DType::Float32) {
    contraction::batched_matmul<float>(none, m, n, k, Mat<float>{static_cast<const float*>(lhs.data), ars, acs},
                                       Mat<float>{static_cast<const float*>(rhs.data), brs, bcs},
                                       static_cast<float*>(res.data));
  } else {
    contraction::batched_matmul<double>(none, m, n, k, Mat<double>{static_cast<const double*>(lhs.data), ars, acs},
                                        Mat<double>{static_cast<const double*>(rhs.data), brs, bcs},
                                        static_cast<double*>(res.data));
  }
  return true;
}

// The contracting dims of a plain matrix product (one each, no batch dims), read from the
// attributes; false for any other contraction.
bool matrix_dims(const Attrs& attrs, int64_t& lc, int64_t& rc) {
  // The names made once: from literals, each lookup built (and freed) a heap string.
  static const std::string kLhsBatch = "lhs_batch_dimensions", kLhsContract = "lhs_contracting_dimensions",
                           kRhsContract = "rhs_contracting_dimensions";
  if (attrs.has(kLhsBatch) && !attrs.get_ints(kLhsBatch).empty()) return false;
  const auto& l = attrs.get_ints(kLhsContract);
  const auto& r = attrs.get_ints(kRhsContract);
  if (l.size() != 1 || r.size() != 1) return false;
  lc = l[0], rc = r[0];
  return true;
}

bool matrix_product(const Tensor& lhs, const Tensor& rhs, const Tensor& res, const Attrs& attrs, bool accumulate = false) {
  int64_t lc, rc;
  return matrix_dims(attrs, lc, rc) && matrix_product_at(lhs, rhs, res, lc, rc, accumulate);
}

// A complex product from four real ones over the parts' planes (re = ar br - ai bi, im = ar bi + ai br),
// so it runs on the real GEMMs (BLAS or built-in, threaded as they are). A complex tensor of shape S
// is read as a real one of shape S + [2]: `prepare` gathers one part's plane when the view starts at
// the part and leaves the trailing dim out of every group.
template <typename P>
void run_complex(const Problem& p, const Tensor& lhs, const Tensor& rhs, const Tensor& out) {
  auto plane = [](const Tensor& t, int part) {
    Shape shape = t.shape;
    shape.push_back(2);
    return Tensor{static_cast<char*>(t.data) + part * sizeof(P), shape, dtype_of<P>()};
  };
  auto operand = [&](const Tensor& t, int part, const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
                     const std::vector<int64_t>& cols) { return prepare<P>(plane(t, part), batch, rows, cols); };
  Operand<P> ar = operand(lhs, 0, p.lhs_batch, p.lhs_free, p.lhs_contract);
  Operand<P> ai = operand(lhs, 1, p.lhs_batch, p.lhs_free, p.lhs_contract);
  Operand<P> br = operand(rhs, 0, p.rhs_batch, p.rhs_contract, p.rhs_free);
  Operand<P> bi = operand(rhs, 1, p.rhs_batch, p.rhs_contract, p.rhs_free);
  BatchDims batch;
  for (int64_t d : p.lhs_batch) batch.sizes.push_back(lhs.shape[d]);
  batch.a_strides = ar.batch_strides;
  batch.b_strides = br.batch_strides;
  const int64_t total = out.size();
  std::unique_ptr<P[]> prods(new P[size_t(4 * total)]);
  P *rr = prods.get(), *ii = rr + total, *ri = ii + total, *ir = ri + total;
  contraction::batched_matmul<P>(batch, p.m, p.n, p.k, ar.mat, br.mat, rr);
  contraction::batched_matmul<P>(batch, p.m, p.n, p.k, ai.mat, bi.mat, ii);
  contraction::batched_matmul<P>(batch, p.m, p.n, p.k, ar.mat, bi.mat, ri);
  contraction::batched_matmul<P>(batch, p.m, p.n, p.k, ai.mat, br.mat, ir);
  auto* c = static_cast<std::complex<P>*>(out.data);
  parallel_for(total, 1 << 15, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) c[i] = std::complex<P>(rr[i] - ii[i], ri[i] + ir[i]);
  });
}

void dot_general_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &lhs = in[0], &rhs = in[1], &res = out[0];
  if (matrix_product(lhs, rhs, res, attrs)) return;
  Problem p;
  p.lhs_contract = attrs.get_ints("lhs_contracting_dimensions");
  p.rhs_contract = attrs.get_ints("rhs_contracting_dimensions");
  p.lhs_batch = ints_or_empty(attrs, "lhs_batch_dimensions");
  p.rhs_batch = ints_or_empty(attrs, "rhs_batch_dimensions");
  p.lhs_free = free_dims(lhs.shape.size(), p.lhs_batch, p.lhs_contract);
  p.rhs_free = free_dims(rhs.shape.size(), p.rhs_batch, p.rhs_contract);
  p.m = extent(lhs.shape, p.lhs_free);
  p.n = extent(rhs.shape, p.rhs_free);
  p.k = extent(lhs.shape, p.lhs_contract);
  if (res.size() == 0) return;
  if (p.k == 0) {  // empty sums: zeros (all-zero bits in every dtype)
    std::memset(res.data, 0, size_t(res.size()) * itemsize(res.dtype));
    return;
  }
  if (res.dtype == DType::Complex64) return run_complex<float>(p, lhs, rhs, res);
  if (res.dtype == DType::Complex128) return run_complex<double>(p, lhs, rhs, res);
  dispatch_compute(lhs.dtype, res.dtype, p.k, [&](auto tag) { run<decltype(tag)>(p, lhs, rhs, res); });
}

// addend + lhs rhs: the addend is copied into the result unless they are one buffer (the plan lets
// the result take a dying addend's buffer), then the product is accumulated onto it.
void dot_general_add_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &addend = in[2], &res = out[0];
  if (res.data != addend.data && res.size())
    std::memcpy(res.data, addend.data, size_t(res.size()) * itemsize(res.dtype));
  if (!matrix_product(in[0], in[1], res, attrs, true))
    throw std::logic_error("[dot_general_add] only float matrix products with m, n > 1 are made into it");
}

// The kernels of a plain matrix product whose contracting dims the lowering read once (LC, RC): a
// product in a loop body runs without looking its attributes up each iteration. Operands of other
// ranks or dtypes take the general path.
template <int LC, int RC>
void matrix_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  if (!matrix_product_at(in[0], in[1], out[0], LC, RC, false)) dot_general_cpu(in, out, attrs);
}

template <int LC, int RC>
void matrix_add_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &addend = in[2], &res = out[0];
  if (res.data != addend.data && res.size())
    std::memcpy(res.data, addend.data, size_t(res.size()) * itemsize(res.dtype));
  if (!matrix_product_at(in[0], in[1], res, LC, RC, true)) dot_general_add_cpu(in, out, attrs);
}

template <bool Add>
CpuKernel specialize_matrix(const Attrs& attrs) {
  static const CpuKernel kernels[2][2] = {
      {Add ? matrix_add_kernel<0, 0> : matrix_kernel<0, 0>, Add ? matrix_add_kernel<0, 1> : matrix_kernel<0, 1>},
      {Add ? matrix_add_kernel<1, 0> : matrix_kernel<1, 0>, Add ? matrix_add_kernel<1, 1> : matrix_kernel<1, 1>}};
  int64_t lc, rc;
  if (!matrix_dims(attrs, lc, rc) || lc < 0 || lc > 1 || rc < 0 || rc > 1) return nullptr;
  return kernels[lc][rc];
}

}  // namespace

void register_contraction_cpu(CpuKernelTable& t) {
  t.set_cpu(OpId::dot_general_, dot_general_cpu);
  t.set_cpu(OpId::dot_general_add_, dot_general_add_cpu);
  t.set_specializer(OpId::dot_general_, specialize_matrix<false>);
  t.set_specializer(OpId::dot_general_add_, specialize_matrix<true>);
}

}  // namespace xjax
