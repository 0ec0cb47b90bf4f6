// The pack_loops pass: a while loop carrying many values of one type (a scan over a tuple of
// scalars; under grad also their residuals and cotangents) carries each such group as one array
// with the lanes last, and its body computes the group's new values as array ops wherever every
// lane computes the same thing (horizontal vectorisation). An iteration then runs one fused kernel
// over m lanes instead of per-leaf work, and the executor moves one buffer per group instead of m.
// Each lane computes exactly what its leaf did, so the bits do not change.
#include <algorithm>
#include <exception>
#include <map>

#include "core/compiler/passes.h"

namespace xjax {

namespace {

// Fewer carries of a type than this stay as they are: packing them saves less than the slices and
// the concatenate outside the loop cost.
constexpr size_t kMinLanes = 4;
// A group's lanes may be read from runs of another's (the lanes the group left out between them);
// more runs than this fail the packing.
constexpr size_t kMaxRuns = 4;
// Outside a loop, lanes computed alike are packed as one array op this many ops deep, where the
// packed array has at most so many elements (the work may be done twice: the lanes stay used).
constexpr int kOutsideDepth = 8;
constexpr int64_t kOutsideElements = int64_t(1) << 12;
// Larger carries stay apart: a body reading one lane of a packed array elsewhere (a product, a
// reduction) reads it strided, which on large lanes costs more than a carry's bookkeeping.
constexpr int64_t kMaxLaneElements = int64_t(1) << 16;

using Lanes = std::vector<ValueRef>;
// Lane values of a packed array, by the node that unpacks them: (packed array, lane).
using Unpacked = std::map<int, std::pair<ValueRef, int>>;

Shape with_lanes(Shape s, size_t m) {
  s.push_back(int64_t(m));
  return s;
}

ValueRef add1(Graph& g, OpId op, const std::vector<ValueRef>& in, const Attrs& a) { return g.add(op, in, a)[0]; }

// Lane j of packed array p (of type t plus a last dimension of lanes).
ValueRef unpack(Graph& g, Unpacked& unpacked, ValueRef p, int j, const TypeInfo& t) {
  std::vector<int64_t> start(t.shape.size(), 0), limit(t.shape);
  start.push_back(j);
  limit.push_back(j + 1);
  Attrs sa, ra;
  sa.set("start_indices", start);
  sa.set("limit_indices", limit);
  ra.set("new_sizes", std::vector<int64_t>(t.shape));
  ValueRef v = add1(g, OpId::reshape_, {add1(g, OpId::slice_, {p}, sa)}, ra);
  unpacked[v.node] = {p, j};
  return v;
}

// Builds the packed array of given lane values (all of one type) in g. In a loop body (`strict`)
// only as array ops over packed operands: a lane that computes something else fails the packing.
// Outside, where it runs once, lanes nothing simpler fits are concatenated.
struct Packer {
  Graph& g;
  Unpacked& unpacked;
  bool strict;
  bool failed = false;
  int depth = 0;
  std::map<std::vector<std::pair<int, int>>, ValueRef> memo;

  const Node& def(ValueRef v) const { return g.nodes()[v.node]; }

  ValueRef zero_index(DType dt) {
    Attrs a;
    a.set("dtype", std::string(dtype_name(dt)));
    a.set("shape", std::vector<int64_t>{});
    a.set("value", int64_t(0));
    return add1(g, OpId::constant_, {}, a);
  }

  // The lanes' operand k, packed; operands at positions >= `shared_from` must be the same value in
  // every lane (index operands), and are returned as they are.
  bool operands(const Lanes& lanes, size_t shared_from, std::vector<ValueRef>& out) {
    const Node n0 = def(lanes[0]);  // (a copy: packing adds nodes to g)
    for (size_t k = 0; k < n0.inputs.size(); ++k) {
      Lanes in;
      for (ValueRef l : lanes) {
        ValueRef v = def(l).inputs[k];
        if (k >= shared_from ? v != n0.inputs[k] : !(g.type(v) == g.type(n0.inputs[k]))) return false;
        in.push_back(v);
      }
      out.push_back(k >= shared_from ? n0.inputs[k] : pack(in));
    }
    return !failed;
  }

  // The lanes as one array op over packed operands, or {-1, 0}.
  ValueRef vectorise(const Lanes& lanes, const Shape& packed) {
    const Node n0 = def(lanes[0]);  // (a copy: packing adds nodes to g)
    for (ValueRef l : lanes)
      if (l.index != 0 || def(l).op != n0.op || !(def(l).attrs == n0.attrs) ||
          def(l).inputs.size() != n0.inputs.size())
        return {};
    const size_t r = packed.size() - 1;
    Attrs a = n0.attrs;
    std::vector<ValueRef> in;
    switch (n0.op) {
      case OpId::reshape_:
        a.set("new_sizes", std::vector<int64_t>(packed));
        if (!operands(lanes, 1, in)) return {};
        break;
      case OpId::broadcast_in_dim_: {
        std::vector<int64_t> dims = n0.attrs.get_ints("broadcast_dimensions");
        dims.push_back(int64_t(r));
        a.set("shape", std::vector<int64_t>(packed));
        a.set("broadcast_dimensions", dims);
        if (!operands(lanes, 1, in)) return {};
        break;
      }
      case OpId::dynamic_slice_: {  // the same starts in every lane, the whole lane dimension
        std::vector<int64_t> sizes = n0.attrs.get_ints("slice_sizes");
        sizes.push_back(int64_t(lanes.size()));
        a.set("slice_sizes", sizes);
        if (!operands(lanes, 1, in)) return {};
        in.push_back(zero_index(in.size() > 1 ? g.type(in.back()).dtype : DType::Int32));
        break;
      }
      case OpId::dynamic_update_slice_:
        if (!operands(lanes, 2, in)) return {};
        in.push_back(zero_index(in.size() > 2 ? g.type(in.back()).dtype : DType::Int32));
        break;
      default:  // elementwise ops whose operands are of the result's shape or 0-d (not a bitcast's width change)
        if (op_info(n0.op).kind != OpKind::Elementwise) return {};
        for (ValueRef v : n0.inputs)
          if (g.type(v).shape != n0.outputs[0].shape && !g.type(v).shape.empty()) return {};
        if (!operands(lanes, n0.inputs.size(), in)) return {};
        for (ValueRef& v : in)  // a 0-d operand of lanes that are arrays: a lane vector, broadcast
          if (g.type(v).shape.size() == 1 && r > 0) {
            Attrs b;
            b.set("shape", std::vector<int64_t>(packed));
            b.set("broadcast_dimensions", std::vector<int64_t>{int64_t(r)});
            v = add1(g, OpId::broadcast_in_dim_, {v}, b);
          }
    }
    try {
      return add1(g, n0.op, in, a);
    } catch (const std::exception&) {  // an op whose rule refuses the packed operands: not packed
      return {};
    }
  }

  ValueRef pack(const Lanes& lanes) {
    if (failed) return lanes[0];
    std::vector<std::pair<int, int>> key;
    for (ValueRef l : lanes) key.push_back({l.node, l.index});
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    const TypeInfo t = g.type(lanes[0]);
    const Shape packed = with_lanes(t.shape, lanes.size());
    ValueRef v = whole(lanes, t, packed);
    // Outside the loop, small lanes computed alike are computed as one array too (a loop's initial
    // cotangents from another's results), a few ops deep; what is left is concatenated.
    const bool outside_too = depth < kOutsideDepth && numel(packed) <= kOutsideElements;
    if (v.node < 0 && (strict || outside_too)) {
      ++depth;
      v = vectorise(lanes, packed);
      --depth;
    }
    if (v.node < 0 && strict) failed = true;
    if (v.node < 0 && !strict) v = concatenated(lanes, t);
    if (failed) return lanes[0];
    memo[key] = v;
    return v;
  }

  // Lanes that are one value, one constant or `empty` everywhere, or lanes of a packed array
  // evenly spaced: no work per lane. Else {-1, 0}.
  ValueRef whole(const Lanes& lanes, const TypeInfo& t, const Shape& packed) {
    const Node& n0 = def(lanes[0]);
    bool same = true, same_source = n0.op == OpId::empty_ || n0.op == OpId::constant_;
    for (ValueRef l : lanes) {
      same = same && l == lanes[0];
      same_source = same_source && def(l).op == n0.op && def(l).attrs == n0.attrs;
    }
    if (n0.op == OpId::empty_ && same_source) {
      Attrs a = n0.attrs;
      a.set("shape", std::vector<int64_t>(packed));
      return add1(g, OpId::empty_, {}, a);
    }
    if (same || same_source) {
      std::vector<int64_t> dims;
      for (size_t d = 0; d < t.shape.size(); ++d) dims.push_back(int64_t(d));
      Attrs a;
      a.set("shape", std::vector<int64_t>(packed));
      a.set("broadcast_dimensions", dims);
      return add1(g, OpId::broadcast_in_dim_, {lanes[0]}, a);
    }
    auto first = unpacked.find(lanes[0].node);
    if (first == unpacked.end()) return {};
    const ValueRef p = first->second.first;
    std::vector<int> index;
    for (ValueRef l : lanes) {
      auto u = unpacked.find(l.node);
      if (u == unpacked.end() || u->second.first != p) return {};
      index.push_back(u->second.second);
    }
    if (g.type(p).shape == packed && index[0] == 0 && index.back() == int(lanes.size()) - 1 && evenly(index, 0, index.size()))
      return p;
    // Runs of evenly spaced lanes of p (a scan's residuals: several per leaf), each one slice; a
    // few of them (lanes of p that a group left out) concatenated.
    std::vector<ValueRef> runs;
    for (size_t j = 0, end; j < index.size(); j = end) {
      for (end = j + 1; end < index.size() && evenly(index, j, end + 1);) ++end;
      runs.push_back(lane_slice(p, t, index[j], end - j > 1 ? index[j + 1] - index[j] : 1, end - j));
    }
    if (runs.size() == 1) return runs[0];
    if (runs.size() > kMaxRuns) return {};
    Attrs ca;
    ca.set("dimension", int64_t(t.shape.size()));
    return add1(g, OpId::concatenate_, runs, ca);
  }

  // Whether index[from, to) steps by one positive amount.
  static bool evenly(const std::vector<int>& index, size_t from, size_t to) {
    for (size_t j = from + 1; j < to; ++j)
      if (index[j] - index[j - 1] != index[from + 1] - index[from] || index[j] <= index[j - 1]) return false;
    return true;
  }

  // Lanes lane, lane + step, ... (n of them) of packed array p of lanes of type t.
  ValueRef lane_slice(ValueRef p, const TypeInfo& t, int lane, int step, size_t n) {
    std::vector<int64_t> start(t.shape.size(), 0), limit(with_lanes(t.shape, 1)), strides(t.shape.size() + 1, 1);
    start.push_back(lane);
    limit.back() = lane + int64_t(step) * int64_t(n - 1) + 1;
    strides.back() = step;
    Attrs a;
    a.set("start_indices", start);
    a.set("limit_indices", limit);
    a.set("strides", strides);
    return add1(g, OpId::slice_, {p}, a);
  }

  ValueRef concatenated(const Lanes& lanes, const TypeInfo& t) {
    std::vector<ValueRef> parts;
    Attrs ra, ca;
    ra.set("new_sizes", std::vector<int64_t>(with_lanes(t.shape, 1)));
    for (ValueRef l : lanes) parts.push_back(add1(g, OpId::reshape_, {l}, ra));
    ca.set("dimension", int64_t(t.shape.size()));
    return add1(g, OpId::concatenate_, parts, ca);
  }
};

// The loop's carries regrouped: each new carry is one old carry, or a group of them as lanes.
struct Layout {
  std::vector<std::vector<int>> carries;  // per new carry: the old carries it holds (several: packed)
  bool packed(size_t c) const { return carries[c].size() > 1; }
};

Layout layout_of(const std::vector<std::vector<int>>& groups, size_t n) {
  std::vector<int> group_of(n, -1);
  for (size_t gi = 0; gi < groups.size(); ++gi)
    for (int k : groups[gi]) group_of[k] = int(gi);
  Layout l;
  for (size_t k = 0; k < n; ++k) {
    if (group_of[k] < 0) l.carries.push_back({int(k)});
    else if (groups[group_of[k]][0] == int(k)) l.carries.push_back(groups[group_of[k]]);
  }
  return l;
}

// The subgraph (condition or body) over the new carries. For the body, each group's results are
// packed too; `failed` gets the new carries whose packing failed (none: the graph is good).
Graph regroup(const Graph& sub, const Layout& l, bool body, std::vector<size_t>& failed) {
  Rewriter r(sub);
  Graph& g = r.dst();
  Unpacked unpacked;
  std::vector<ValueRef> old_param(sub.parameters().size());
  std::vector<ValueRef> params;
  for (const std::vector<int>& c : l.carries) {
    TypeInfo t = sub.type({sub.parameters()[c[0]], 0});
    if (c.size() > 1) t.shape = with_lanes(t.shape, c.size());
    params.push_back(g.parameter(t));
  }
  for (size_t c = 0; c < l.carries.size(); ++c)
    for (size_t j = 0; j < l.carries[c].size(); ++j) {
      int k = l.carries[c][j];
      old_param[k] = l.packed(c) ? unpack(g, unpacked, params[c], int(j), sub.type({sub.parameters()[k], 0}))
                                 : params[c];
    }
  for (size_t i = 0; i < sub.nodes().size(); ++i) {
    const Node& n = sub.nodes()[i];
    if (n.op == OpId::parameter_) r.replace(int(i), {old_param[n.attrs.get_int("index")]});
    else r.copy(int(i));
  }
  std::vector<ValueRef> outs;
  if (!body) {
    for (ValueRef v : sub.outputs()) outs.push_back(r.get(v));
  } else {
    for (size_t c = 0; c < l.carries.size(); ++c) {
      Lanes lanes;
      for (int k : l.carries[c]) lanes.push_back(r.get(sub.outputs()[k]));
      if (!l.packed(c)) {
        outs.push_back(lanes[0]);
        continue;
      }
      Packer p{g, unpacked, true};
      outs.push_back(p.pack(lanes));
      if (p.failed) failed.push_back(c);
    }
  }
  g.set_outputs(outs);
  return std::move(g);
}

// Per node of g, a hash of the work that computes it (ops, attributes, constants' values, down
// to the parameters, which count by type only): lanes whose results differ in it cannot pack.
std::vector<size_t> hashes_of_work(const Graph& g) {
  std::vector<size_t> h(g.nodes().size());
  for (size_t i = 0; i < h.size(); ++i) {
    const Node& n = g.nodes()[i];
    size_t x = std::hash<std::string>()(std::string(op_name(n.op)) + attrs_str(n.attrs));
    if (n.op == OpId::parameter_) x = std::hash<std::string>()(types_str(n.outputs));
    for (ValueRef v : n.inputs) x = x * 1000003u ^ (h[v.node] + size_t(v.index) * 0x9e3779b97f4a7c15ull);
    h[i] = x;
  }
  return h;
}

// Carries of one type whose results are computed alike (the same work, or the carry passed
// through): the candidates for lanes of one array, in carry order. Carries the condition
// reads stay apart (a counted loop's counter is recognised as a carry of its own).
std::vector<std::vector<int>> candidate_groups(const Graph& cond, const Graph& body) {
  std::vector<char> read(body.parameters().size(), 0);
  for (const Node& n : cond.nodes())
    for (ValueRef v : n.inputs)
      if (cond.nodes()[v.node].op == OpId::parameter_) read[cond.nodes()[v.node].attrs.get_int("index")] = 1;
  for (ValueRef v : cond.outputs())
    if (cond.nodes()[v.node].op == OpId::parameter_) read[cond.nodes()[v.node].attrs.get_int("index")] = 1;
  const std::vector<size_t> work = hashes_of_work(body);
  std::map<std::string, std::vector<int>> by_kind;
  std::vector<std::string> order;
  for (size_t k = 0; k < body.outputs().size(); ++k) {
    if (read[k] || numel(body.type(body.outputs()[k]).shape) > kMaxLaneElements) continue;
    ValueRef out = body.outputs()[k];
    const TypeInfo& t = body.type(out);
    std::string key = std::string(dtype_name(t.dtype)) + shape_str(t.shape);
    if (out.node == body.parameters()[k]) key += " passed";
    else key += " " + std::to_string(work[out.node]) + "." + std::to_string(out.index);
    if (!by_kind.count(key)) order.push_back(key);
    by_kind[key].push_back(int(k));
  }
  std::vector<std::vector<int>> groups;
  for (const std::string& key : order)
    if (by_kind[key].size() >= kMinLanes) groups.push_back(by_kind[key]);
  return groups;
}

// Replaces while node i by the loop over packed groups, or returns false (nothing packs).
bool pack_loop(Rewriter& r, Unpacked& unpacked, const Node& n, int i) {
  const Graph& cond = *n.subgraphs[0];
  const Graph& body = *n.subgraphs[1];
  std::vector<std::vector<int>> groups = candidate_groups(cond, body);
  Graph new_body;
  Layout l;
  // Packing a group may rely on another being packed: drop failing groups until all left succeed.
  while (!groups.empty()) {
    l = layout_of(groups, n.inputs.size());
    std::vector<size_t> failed;
    new_body = regroup(body, l, true, failed);
    if (failed.empty()) break;
    std::vector<std::vector<int>> kept;
    for (const std::vector<int>& grp : groups) {
      bool bad = false;
      for (size_t c : failed) bad = bad || l.carries[c] == grp;
      if (!bad) kept.push_back(grp);
    }
    groups = std::move(kept);
  }
  if (groups.empty()) return false;
  std::vector<size_t> none;
  Graph new_cond = regroup(cond, l, false, none);
  Graph& g = r.dst();
  Packer outside{g, unpacked, false};
  std::vector<ValueRef> in;
  for (const std::vector<int>& c : l.carries) {
    Lanes lanes;
    for (int k : c) lanes.push_back(r.get(n.inputs[k]));
    in.push_back(c.size() > 1 ? outside.pack(lanes) : lanes[0]);
  }
  std::vector<ValueRef> res = g.add_subgraph_op(
      OpId::while_, in, n.attrs,
      {std::make_shared<const Graph>(std::move(new_cond)), std::make_shared<const Graph>(std::move(new_body))});
  std::vector<ValueRef> old(n.outputs.size());
  for (size_t c = 0; c < l.carries.size(); ++c)
    for (size_t j = 0; j < l.carries[c].size(); ++j) {
      int k = l.carries[c][j];
      old[k] = l.packed(c) ? unpack(g, unpacked, res[c], int(j), n.outputs[k]) : res[c];
    }
  r.replace(i, old);
  return true;
}

}  // namespace

Graph pack_loop_carries(const Graph& g) {
  Rewriter r(g);
  Unpacked unpacked;  // of the new graph: a second loop reads the first one's lanes as its packed array
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (n.op != OpId::while_ || !pack_loop(r, unpacked, n, int(i))) r.copy(int(i));
  }
  return r.finish();
}

}  // namespace xjax
