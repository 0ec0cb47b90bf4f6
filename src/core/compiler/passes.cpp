// The structural passes (verify, dead code, common subexpressions), the pass registry and the
// Rewriter the passes share.
#include "core/compiler/passes.h"

#include <functional>
#include <unordered_map>

namespace xjax {

std::vector<ValueRef> Rewriter::inputs(int old_node) const {
  std::vector<ValueRef> in;
  in.reserve(src_.nodes()[old_node].inputs.size());
  for (ValueRef v : src_.nodes()[old_node].inputs) in.push_back(get(v));
  return in;
}

void Rewriter::copy(int i) {
  Node n = src_.nodes()[i];
  n.inputs = inputs(i);
  map_[i] = dst_.append(std::move(n));
}

Graph Rewriter::finish() {
  std::vector<ValueRef> outs;
  for (ValueRef v : src_.outputs()) outs.push_back(get(v));
  dst_.set_outputs(outs);
  return std::move(dst_);
}

bool has_effects(const Node& n) {
  OpKind kind = op_info(n.op).kind;
  if (kind == OpKind::Effect) return true;
  if (kind != OpKind::Control) return false;
  for (const auto& g : n.subgraphs)
    for (const Node& m : g->nodes())
      if (has_effects(m)) return true;
  return false;
}

namespace {

[[noreturn]] void fail_verify(int node, const std::string& msg) {
  throw ValueError("[verify] node %" + std::to_string(node) + ": " + msg);
}

}  // namespace

void verify(const Graph& g) {
  const auto& nodes = g.nodes();
  int64_t params = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    std::vector<TypeInfo> in;
    for (ValueRef v : n.inputs) {
      if (v.node < 0 || v.node >= int(i) || v.index < 0 || v.index >= int(nodes[v.node].outputs.size()))
        fail_verify(int(i), "operand %" + std::to_string(v.node) + "." + std::to_string(v.index) +
                                " is not an earlier node's result");
      in.push_back(nodes[v.node].outputs[v.index]);
    }
    if (n.op == OpId::parameter_) {
      if (n.attrs.get_int_or("index", -1) != params || params >= int64_t(g.parameters().size()) ||
          g.parameters()[params] != int(i))
        fail_verify(int(i), "parameter numbered out of order");
      ++params;
      continue;
    }
    std::vector<TypeInfo> want;
    try {
      if (op_info(n.op).kind == OpKind::Control) {
        for (const auto& sub : n.subgraphs) verify(*sub);
        want = control_op_types(n.op, in, n.subgraphs);
      } else {
        want = infer_types(n.op, in, n.attrs);
      }
    } catch (const std::exception& e) {
      fail_verify(int(i), std::string(op_name(n.op)) + " is invalid: " + e.what());
    }
    if (want != n.outputs)
      fail_verify(int(i), std::string(op_name(n.op)) + " records types " + types_str(n.outputs) +
                              " but its rule gives " + types_str(want));
  }
  if (params != int64_t(g.parameters().size())) throw ValueError("[verify] parameter list does not match the nodes");
  for (ValueRef v : g.outputs())
    if (v.node < 0 || v.node >= int(nodes.size()) || v.index < 0 || v.index >= int(nodes[v.node].outputs.size()))
      throw ValueError("[verify] output %" + std::to_string(v.node) + "." + std::to_string(v.index) + " does not exist");
}

Graph eliminate_dead_code(const Graph& g) {
  const auto& nodes = g.nodes();
  std::vector<bool> live(nodes.size(), false);
  for (ValueRef v : g.outputs()) live[v.node] = true;
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& n = nodes[i];
    if (n.op == OpId::parameter_ || has_effects(n)) live[i] = true;
    if (!live[i]) continue;
    for (ValueRef v : n.inputs) live[v.node] = true;
  }
  Rewriter r(g);
  for (size_t i = 0; i < nodes.size(); ++i)
    if (live[i]) r.copy(int(i));
  return r.finish();
}

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

size_t hash_attrs(const Attrs& a) {
  size_t h = a.items().size();
  for (const auto& [name, v] : a.items()) {
    h = mix(h, std::hash<std::string>()(name));
    h = mix(h, v.index());
    if (auto* i = std::get_if<int64_t>(&v)) h = mix(h, std::hash<int64_t>()(*i));
    else if (auto* d = std::get_if<double>(&v)) h = mix(h, std::hash<double>()(*d));
    else if (auto* l = std::get_if<std::vector<int64_t>>(&v)) for (int64_t x : *l) h = mix(h, std::hash<int64_t>()(x));
    else h = mix(h, std::hash<std::string>()(std::get<std::string>(v)));
  }
  return h;
}

}  // namespace

Graph eliminate_common_subexpressions(const Graph& g) {
  const auto& nodes = g.nodes();
  Rewriter r(g);
  // Hash of (op, operands, attributes) -> new nodes with that hash.
  std::unordered_multimap<size_t, int> seen;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    OpKind kind = op_info(n.op).kind;
    // Each `empty` is a buffer of its own: merged, two loop results would share one (and be copied).
    if (n.op == OpId::parameter_ || n.op == OpId::empty_ || kind == OpKind::Control || kind == OpKind::Effect) {
      r.copy(int(i));
      continue;
    }
    std::vector<ValueRef> in = r.inputs(int(i));
    size_t h = mix(size_t(n.op), hash_attrs(n.attrs));
    for (ValueRef v : in) h = mix(mix(h, size_t(v.node)), size_t(v.index));
    int found = -1;
    auto range = seen.equal_range(h);
    for (auto it = range.first; it != range.second && found < 0; ++it) {
      const Node& m = r.dst().nodes()[it->second];
      if (m.op == n.op && m.inputs == in && m.attrs == n.attrs) found = it->second;
    }
    if (found >= 0) {
      std::vector<ValueRef> vals;
      for (size_t k = 0; k < n.outputs.size(); ++k) vals.push_back({found, int(k)});
      r.replace(int(i), vals);
      continue;
    }
    r.copy(int(i));
    seen.emplace(h, int(r.dst().nodes().size()) - 1);
  }
  return r.finish();
}

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.nodes().size(), 0);
  for (const Node& n : g.nodes())
    for (ValueRef v : n.inputs) ++uses[v.node];
  for (ValueRef v : g.outputs()) ++uses[v.node];
  return uses;
}

const std::vector<std::string>& default_passes() {
  // (contract after cse and dce: the uses it counts are final; fold after it: the negated constants)
  static const std::vector<std::string> passes = {"pack_loops", "simplify", "dot_reduce", "fold", "simplify", "cse", "dce",
                                                  "contract", "fold", "dce"};
  return passes;
}

Graph run_passes(const Graph& g, const std::vector<std::string>& passes) {
  Graph cur = g;
  for (const std::string& p : passes) {
    if (p == "verify") verify(cur);
    else if (p == "dce") cur = eliminate_dead_code(cur);
    else if (p == "cse") cur = eliminate_common_subexpressions(cur);
    else if (p == "fold") cur = fold_constants(cur);
    else if (p == "simplify") cur = simplify(cur);
    else if (p == "dot_reduce") cur = reduce_small_dots(cur);
    else if (p == "widen_float8") cur = widen_float8(cur);
    else if (p == "pack_loops") cur = pack_loop_carries(cur);
    else if (p == "contract") cur = contract_multiply_adds(cur);
    else throw ValueError("[compile] unknown pass '" + p + "' (passes: verify, widen_float8, pack_loops, simplify, dot_reduce, fold, cse, dce, contract)");
  }
  return cur;
}

}  // namespace xjax
