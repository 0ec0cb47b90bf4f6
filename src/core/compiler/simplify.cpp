// The algebraic simplification pass: local identities applied while copying the graph, so that
// chains (reshape of reshape of ...) collapse in one sweep.
#include "core/compiler/constant.h"
#include "core/compiler/passes.h"

namespace xjax {

namespace {

// Permutation p of a dot_general's result (batch, lhs free, rhs free) that swaps the two free groups
// and keeps the batch dims in place: the result of the dot with its operands swapped.
bool swaps_free_groups(const std::vector<int64_t>& p, size_t nb, size_t nl) {
  size_t nr = p.size() - nb - nl;
  for (size_t i = 0; i < p.size(); ++i) {
    int64_t want = i < nb ? int64_t(i) : i < nb + nr ? int64_t(nl + i) : int64_t(i - nr);
    if (p[i] != want) return false;
  }
  return true;
}

// Whether dot node d is a product of two float matrices without batch dims, with m, n > 1: the
// products dot_general_add accumulates in place.
bool matrix_product_node(const Graph& g, const Node& d) {
  const TypeInfo& t = d.outputs[0];
  if (d.op != OpId::dot_general_ || t.shape.size() != 2 || t.shape[0] < 2 || t.shape[1] < 2) return false;
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64) return false;
  for (ValueRef v : d.inputs)
    if (g.type(v).shape.size() != 2 || g.type(v).dtype != t.dtype) return false;
  return !d.attrs.has("lhs_batch_dimensions") || d.attrs.get_ints("lhs_batch_dimensions").empty();
}

struct Simplifier {
  Rewriter& r;
  const std::vector<int>& src_uses;  // per node of the source graph
  const Node& def(ValueRef v) { return r.dst().nodes()[v.node]; }
  const TypeInfo& type(ValueRef v) { return r.dst().type(v); }
  bool is_const(ValueRef v, double x) { return def(v).op == OpId::constant_ && constant_all_equal(def(v), x); }

  // The value node n simplifies to, or {-1, 0} to keep it (possibly as a rewritten node `out`).
  ValueRef rewrite(const Node& n, const std::vector<ValueRef>& in, Node& out) {
    const TypeInfo& t = n.outputs.empty() ? TypeInfo{} : n.outputs[0];
    auto same = [&](ValueRef v) { return type(v) == t ? v : ValueRef{}; };
    switch (n.op) {
      case OpId::add_:
        if (is_const(in[1], 0)) return same(in[0]);
        if (is_const(in[0], 0)) return same(in[1]);
        // x + dot(a, b) with the product read nowhere else: the product accumulates onto x (BLAS's
        // beta = 1, in x's buffer when x dies here), instead of a zeroed product and a pass adding it.
        for (int k = 0; k < 2; ++k) {
          const Node& d = def(in[k]);
          ValueRef x = in[1 - k];
          if (src_uses[n.inputs[k].node] != 1 || !matrix_product_node(r.dst(), d) || !(type(x) == t) ||
              op_info(def(x).op).kind == OpKind::Broadcast || def(x).op == OpId::constant_)
            continue;
          out.op = OpId::dot_general_add_;
          out.inputs = {d.inputs[0], d.inputs[1], x};
          out.attrs = d.attrs;
          return {};
        }
        break;
      case OpId::sub_:
        if (is_const(in[1], 0)) return same(in[0]);
        break;
      case OpId::mul_:
        if (is_const(in[1], 1)) return same(in[0]);
        if (is_const(in[0], 1)) return same(in[1]);
        break;
      case OpId::div_:
        if (is_const(in[1], 1)) return same(in[0]);
        break;
      case OpId::neg_:
        if (def(in[0]).op == OpId::neg_) return same(def(in[0]).inputs[0]);
        break;
      case OpId::integer_pow_:
        if (n.attrs.get_int("y") == 1) return same(in[0]);
        break;
      case OpId::convert_element_type_:
        return same(in[0]);
      case OpId::reshape_: {
        if (def(in[0]).op == OpId::reshape_) {
          out.inputs = {def(in[0]).inputs[0]};
          return same(out.inputs[0]);
        }
        return same(in[0]);
      }
      case OpId::transpose_: {
        const auto& perm = n.attrs.get_ints("permutation");
        bool identity = true;
        for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int64_t(i);
        if (identity) return same(in[0]);
        if (def(in[0]).op == OpId::dot_general_ && src_uses[n.inputs[0].node] == 1) {
          // transpose(dot(a, b)) swapping the free dims = dot(b, a): BLAS reads operands transposed
          // in place, so no copy (the cotangents of a matmul's operands have this form).
          const Node& dot = def(in[0]);
          auto dims = [&](const char* name) { return dot.attrs.has(name) ? dot.attrs.get_ints(name) : std::vector<int64_t>{}; };
          std::vector<int64_t> lb = dims("lhs_batch_dimensions"), rb = dims("rhs_batch_dimensions");
          std::vector<int64_t> lc = dims("lhs_contracting_dimensions"), rc = dims("rhs_contracting_dimensions");
          size_t nl = type(dot.inputs[0]).shape.size() - lb.size() - lc.size();
          if (swaps_free_groups(perm, lb.size(), nl)) {
            out.op = OpId::dot_general_;
            out.inputs = {dot.inputs[1], dot.inputs[0]};
            out.attrs = dot.attrs;
            out.attrs.set("lhs_batch_dimensions", rb);
            out.attrs.set("rhs_batch_dimensions", lb);
            out.attrs.set("lhs_contracting_dimensions", rc);
            out.attrs.set("rhs_contracting_dimensions", lc);
            return {};
          }
        }
        if (def(in[0]).op == OpId::transpose_) {
          const auto& inner = def(in[0]).attrs.get_ints("permutation");
          std::vector<int64_t> composed(perm.size());
          for (size_t i = 0; i < perm.size(); ++i) composed[i] = inner[perm[i]];
          out.inputs = {def(in[0]).inputs[0]};
          out.attrs.set("permutation", composed);
          bool back = true;
          for (size_t i = 0; i < composed.size(); ++i) back = back && composed[i] == int64_t(i);
          return back ? same(out.inputs[0]) : ValueRef{};
        }
        break;
      }
      case OpId::broadcast_in_dim_: {
        if (type(in[0]).shape == t.shape) return same(in[0]);
        if (numel(type(in[0]).shape) == numel(t.shape)) {  // only adds or drops size-1 dims
          out.op = OpId::reshape_;
          out.attrs = Attrs();
          out.attrs.set("new_sizes", t.shape);
          return {};
        }
        if (def(in[0]).op == OpId::broadcast_in_dim_) {
          const Node& inner = def(in[0]);
          const auto& d0 = inner.attrs.get_ints("broadcast_dimensions");
          const auto& d1 = n.attrs.get_ints("broadcast_dimensions");
          std::vector<int64_t> composed(d0.size());
          for (size_t k = 0; k < d0.size(); ++k) composed[k] = d1[d0[k]];
          out.inputs = {inner.inputs[0]};
          out.attrs.set("broadcast_dimensions", composed);
          return {};
        }
        break;
      }
      case OpId::select_n_: {
        bool all_same = true;
        for (size_t k = 2; k < in.size(); ++k) all_same = all_same && in[k] == in[1];
        if (all_same) return same(in[1]);
        const Node& w = def(in[0]);
        if (is_splat_constant(w)) {
          std::string b = splat_bytes(w);
          int64_t k = w.outputs[0].dtype == DType::Bool ? int64_t(b[0] != 0) : int64_t(*reinterpret_cast<const int32_t*>(b.data()));
          int64_t cases = int64_t(in.size()) - 1;
          k = k < 0 ? 0 : (k >= cases ? cases - 1 : k);
          return same(in[1 + k]);
        }
        break;
      }
      case OpId::reduce_sum_: case OpId::reduce_prod_: case OpId::reduce_max_: case OpId::reduce_min_:
      case OpId::reduce_and_: case OpId::reduce_or_: case OpId::reduce_xor_:
        if (n.attrs.get_ints("axes").empty()) return same(in[0]);
        break;
      default:
        break;
    }
    return {};
  }
};

}  // namespace

Graph simplify(const Graph& g) {
  Rewriter r(g);
  std::vector<int> uses = use_counts(g);
  Simplifier s{r, uses};
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op == OpId::parameter_ || n.outputs.size() != 1 || op_info(n.op).kind == OpKind::Control) {
      r.copy(int(i));
      continue;
    }
    Node out = n;
    out.inputs = r.inputs(int(i));
    ValueRef v = s.rewrite(n, out.inputs, out);
    if (v.node >= 0) {
      r.replace(int(i), {v});
      continue;
    }
    // A rewritten node gets its types re-inferred (a check that the rewrite is sound).
    if (out.op != n.op || out.inputs != r.inputs(int(i)) || !(out.attrs == n.attrs))
      r.replace(int(i), r.dst().add(out.op, out.inputs, out.attrs));
    else
      r.replace(int(i), r.dst().append(std::move(out)));
  }
  return r.finish();
}

}  // namespace xjax
