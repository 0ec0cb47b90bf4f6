// The dot strength reduction pass: a dot_general that is a batch of dot products (no free dims
// bigger than 1) becomes reduce_sum(mul) over broadcasts of its operands. Fusion makes that one
// pass over the operands, where the contraction kernel would run one tiny matrix product per batch
// element (what vmap of a per-example dot of vectors produces). Batches of matrix-vector products
// keep the kernel: measured, the fused reduction over a short axis was no faster.
#include <algorithm>
#include <numeric>

#include "core/compiler/passes.h"

namespace xjax {

namespace {

std::vector<int64_t> ints_or_empty(const Attrs& attrs, const char* name) {
  return attrs.has(name) ? attrs.get_ints(name) : std::vector<int64_t>{};
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t index_of(const std::vector<int64_t>& v, int64_t x) {
  return int64_t(std::find(v.begin(), v.end(), x) - v.begin());
}

std::vector<int64_t> free_dims(size_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < int64_t(rank); ++d)
    if (!contains(batch, d) && !contains(contract, d)) out.push_back(d);
  return out;
}

int64_t extent(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[d];
  return n;
}

// v with its dims permuted (result dim i is v's dim perm[i]): a reshape when only size-1 dims move.
ValueRef permute(Graph& g, ValueRef v, const std::vector<int64_t>& perm) {
  const Shape shape = g.type(v).shape;
  std::vector<int64_t> moved;  // the dims bigger than 1, in their new order
  Shape out;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    identity = identity && perm[i] == int64_t(i);
    out.push_back(shape[perm[i]]);
    if (shape[perm[i]] != 1) moved.push_back(perm[i]);
  }
  if (identity) return v;
  Attrs a;
  if (std::is_sorted(moved.begin(), moved.end())) {
    a.set("new_sizes", out);
    return g.add(OpId::reshape_, {v}, a)[0];
  }
  a.set("permutation", perm);
  return g.add(OpId::transpose_, {v}, a)[0];
}

ValueRef broadcast(Graph& g, ValueRef v, const Shape& shape, const std::vector<int64_t>& dims) {
  Attrs a;
  a.set("shape", shape);
  a.set("broadcast_dimensions", dims);
  return g.add(OpId::broadcast_in_dim_, {v}, a)[0];
}

ValueRef reshape(Graph& g, ValueRef v, const Shape& shape) {
  if (g.type(v).shape == shape) return v;
  Attrs a;
  a.set("new_sizes", shape);
  return g.add(OpId::reshape_, {v}, a)[0];
}

// The value standing for dot node n (operands `in`, already in g), or {} to keep the dot.
ValueRef reduce_dot(Graph& g, const Node& n, const std::vector<ValueRef>& in) {
  const DType dt = n.outputs[0].dtype;
  if (g.type(in[0]).dtype != dt || g.type(in[1]).dtype != dt || (dt != DType::Float32 && dt != DType::Float64))
    return {};
  const Shape ls = g.type(in[0]).shape, rs = g.type(in[1]).shape;
  const std::vector<int64_t> lb = ints_or_empty(n.attrs, "lhs_batch_dimensions");
  const std::vector<int64_t> rb = ints_or_empty(n.attrs, "rhs_batch_dimensions");
  const std::vector<int64_t>& lc = n.attrs.get_ints("lhs_contracting_dimensions");
  const std::vector<int64_t>& rc = n.attrs.get_ints("rhs_contracting_dimensions");
  // Only batches: one product keeps the contraction kernel (and its rounding, which matches JAX's).
  if (extent(ls, lb) < 2) return {};
  if (extent(ls, free_dims(ls.size(), lb, lc)) != 1 || extent(rs, free_dims(rs.size(), rb, rc)) != 1) return {};

  // The product runs over lhs's dims in lhs's layout; rhs's batch and contracting dims are placed
  // on their lhs partners (its free dims all have size 1 and are dropped).
  std::vector<int64_t> rhs_dims, target;  // rhs dims kept, and the lhs dim each lands on
  for (size_t i = 0; i < rb.size(); ++i) rhs_dims.push_back(rb[i]), target.push_back(lb[i]);
  for (size_t i = 0; i < rc.size(); ++i) rhs_dims.push_back(rc[i]), target.push_back(lc[i]);
  std::vector<int64_t> order(rhs_dims.size());  // rhs dims by target: broadcast_in_dim wants them increasing
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return target[a] < target[b]; });
  std::vector<int64_t> perm, dims;
  for (int64_t i : order) perm.push_back(rhs_dims[i]), dims.push_back(target[i]);
  ValueRef y = in[1];
  if (perm.size() < rs.size()) {  // drop the size-1 free dims first: then perm numbers the rest
    std::vector<int64_t> kept(rhs_dims);
    std::sort(kept.begin(), kept.end());
    Shape shape;
    for (int64_t d : kept) shape.push_back(rs[d]);
    y = reshape(g, y, shape);
    for (int64_t& d : perm) d = index_of(kept, d);
  }
  ValueRef prod = g.add(OpId::mul_, {in[0], broadcast(g, permute(g, y, perm), ls, dims)}, Attrs())[0];
  ValueRef sum = prod;
  if (!lc.empty()) {
    std::vector<int64_t> axes = lc;
    std::sort(axes.begin(), axes.end());
    Attrs r;
    r.set("axes", axes);
    sum = g.add(OpId::reduce_sum_, {prod}, r)[0];
  }
  // The sum has lhs's batch and (size-1) free dims in lhs's order; the dot's result has the batch
  // dims in lb's order, then the free dims.
  std::vector<int64_t> left;  // lhs dims the sum keeps
  for (int64_t d = 0; d < int64_t(ls.size()); ++d)
    if (!contains(lc, d)) left.push_back(d);
  std::vector<int64_t> batch_order;
  for (int64_t d : lb) batch_order.push_back(index_of(left, d));
  for (size_t i = 0; i < left.size(); ++i)
    if (!contains(lb, left[i])) batch_order.push_back(int64_t(i));
  return reshape(g, permute(g, sum, batch_order), n.outputs[0].shape);
}

}  // namespace

Graph reduce_small_dots(const Graph& g) {
  Rewriter r(g);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    ValueRef v = n.op == OpId::dot_general_ ? reduce_dot(r.dst(), n, r.inputs(int(i))) : ValueRef{};
    if (v.node >= 0) {
      r.replace(int(i), {v});
    } else {
      r.copy(int(i));
    }
  }
  return r.finish();
}

}  // namespace xjax
