// The dot strength reduction pass: a dot_general that is a batch of dot products (no free dims
// bigger than 1), or of matrix-vector products with a short contraction, becomes reduce_sum(mul)
// over broadcasts of its operands. Fusion makes that one pass over the operands, where the
// contraction kernel would run one tiny matrix product per batch element (what vmap of a
// per-example dot produces).
#include <algorithm>
#include <numeric>

#include "core/compiler/passes.h"

namespace xjax {

namespace {

constexpr int64_t kMaxMatrixVectorK = 16;

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

struct Side {
  ValueRef value;
  Shape shape;
  std::vector<int64_t> batch, contract, free;
};

// The value standing for dot node n (operands `in`, already in g), or {} to keep the dot.
ValueRef reduce_dot(Graph& g, const Node& n, const std::vector<ValueRef>& in) {
  const DType dt = n.outputs[0].dtype;
  if (g.type(in[0]).dtype != dt || g.type(in[1]).dtype != dt || (dt != DType::Float32 && dt != DType::Float64))
    return {};
  Side lhs{in[0], g.type(in[0]).shape, ints_or_empty(n.attrs, "lhs_batch_dimensions"),
           n.attrs.get_ints("lhs_contracting_dimensions"), {}};
  Side rhs{in[1], g.type(in[1]).shape, ints_or_empty(n.attrs, "rhs_batch_dimensions"),
           n.attrs.get_ints("rhs_contracting_dimensions"), {}};
  lhs.free = free_dims(lhs.shape.size(), lhs.batch, lhs.contract);
  rhs.free = free_dims(rhs.shape.size(), rhs.batch, rhs.contract);
  const int64_t m = extent(lhs.shape, lhs.free), k = extent(lhs.shape, lhs.contract);
  const int64_t nn = extent(rhs.shape, rhs.free);
  // Only batches: one product keeps the contraction kernel (and its rounding, which matches JAX's).
  if (extent(lhs.shape, lhs.batch) < 2) return {};
  if (!((m == 1 && nn == 1) || ((m == 1 || nn == 1) && k <= kMaxMatrixVectorK))) return {};

  // The bigger operand keeps its layout; the product space is its dims, then the other's free dims.
  const bool main_is_lhs = numel(lhs.shape) >= numel(rhs.shape);
  const Side& main = main_is_lhs ? lhs : rhs;
  const Side& other = main_is_lhs ? rhs : lhs;
  const int64_t nm = int64_t(main.shape.size());
  Shape space = main.shape;
  for (int64_t d : other.free) space.push_back(other.shape[d]);
  std::vector<int64_t> target(other.shape.size());  // where each dim of `other` lands in the space
  for (size_t i = 0; i < other.batch.size(); ++i) target[other.batch[i]] = main.batch[i];
  for (size_t i = 0; i < other.contract.size(); ++i) target[other.contract[i]] = main.contract[i];
  for (size_t j = 0; j < other.free.size(); ++j) target[other.free[j]] = nm + int64_t(j);
  // broadcast_in_dim wants increasing targets: the other operand is permuted first where they are not.
  std::vector<int64_t> order(other.shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return target[a] < target[b]; });
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(target[d]);
  std::vector<int64_t> main_dims(static_cast<size_t>(nm));
  std::iota(main_dims.begin(), main_dims.end(), 0);
  ValueRef a = broadcast(g, main.value, space, main_dims);
  ValueRef b = broadcast(g, permute(g, other.value, order), space, dims);
  ValueRef prod = g.add(OpId::mul_, {a, b}, Attrs())[0];
  ValueRef sum = prod;
  if (!main.contract.empty()) {
    std::vector<int64_t> axes = main.contract;
    std::sort(axes.begin(), axes.end());
    Attrs r;
    r.set("axes", axes);
    sum = g.add(OpId::reduce_sum_, {prod}, r)[0];
  }
  // The sum's dims are main's batch and free dims (in main's order), then other's free dims; the
  // dot's result is batch dims (in lhs order), lhs free dims, rhs free dims.
  const int64_t nb = int64_t(lhs.batch.size()), nlf = int64_t(lhs.free.size());
  auto free_pos = [&](bool of_lhs, int64_t j) { return nb + (of_lhs ? j : nlf + j); };
  std::vector<int64_t> out_pos;
  for (int64_t d = 0; d < nm; ++d) {
    if (contains(main.contract, d)) continue;
    bool batch = contains(main.batch, d);
    out_pos.push_back(batch ? index_of(main.batch, d) : free_pos(main_is_lhs, index_of(main.free, d)));
  }
  for (size_t j = 0; j < other.free.size(); ++j) out_pos.push_back(free_pos(!main_is_lhs, int64_t(j)));
  std::vector<int64_t> perm(out_pos.size());
  for (size_t r = 0; r < out_pos.size(); ++r) perm[out_pos[r]] = int64_t(r);
  return permute(g, sum, perm);
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
