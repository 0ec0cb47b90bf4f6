// The fusion pass. Nodes are visited in topological order; an Elementwise node joins (and merges)
// the groups of the producers it reads element for element, a Reduction joins the group of its
// operand's producer; a merge is refused when it would make the group graph cyclic. Views
// (Broadcast nodes and static slices) belong to no group: fused consumers read through them, and
// they are materialised (as steps of their own) only where some consumer cannot.
#include "core/compiler/fusion.h"

#include <algorithm>
#include <array>
#include <map>
#include <queue>

#include "core/compiler/constant.h"
#include "core/compiler/passes.h"
#include "core/ops/dynamic_window.h"

namespace xjax {

namespace {
constexpr size_t kMaxGroupNodes = 96;
// Sibling groups merge only over index spaces this small: there a kernel's fixed cost (a step,
// its scheduling, a tile's set-up) weighs as much as its work. Larger kernels gain nothing.
constexpr int64_t kMaxSiblingDomain = 1 << 15;
// A lone elementwise op over at most this many elements (one tile) runs as a fused program.
constexpr int64_t kSmallLoneDomain = 1024;
constexpr size_t kMaxSiblingGroups = 4096;  // bounds the pass's cost (a reachability walk per merge)

bool is_broadcast(const Graph& g, int node) { return op_info(g.nodes()[node].op).kind == OpKind::Broadcast; }

// Leaves the flat view of a value of shape `shape`: index over its dims from here on.
void unflatten(Resolved& r, const Shape& shape) {
  r.flat = false;
  r.space = shape;
  r.dims.resize(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) r.dims[d] = int(d);
  r.step.assign(shape.size(), 1);
  r.start.assign(shape.size(), 0);
}

// Composes a slice (same rank in and out) into r, which indexes the slice's result.
void through_slice(Resolved& r, const Node& s) {
  const auto& lo = s.attrs.get_ints("start_indices");
  std::vector<int64_t> st = s.attrs.has("strides") ? s.attrs.get_ints("strides") : std::vector<int64_t>(lo.size(), 1);
  for (size_t d = 0; d < r.dims.size(); ++d)
    if (r.dims[d] >= 0) r.step[d] *= st[r.dims[d]];
  for (size_t j = 0; j < lo.size(); ++j) r.start[j] = lo[j] + st[j] * r.start[j];
}
}  // namespace

bool is_view(const Graph& g, int node) { return is_broadcast(g, node) || g.nodes()[node].op == OpId::slice_; }

std::vector<int64_t> Resolved::strides(const Shape& root_shape) const {
  std::vector<int64_t> cs = contiguous_strides(root_shape), st(space.size(), 0);
  for (size_t d = 0; d < space.size(); ++d)
    if (dims[d] >= 0 && root_shape[dims[d]] != 1) st[d] = cs[dims[d]] * step[d];
  return st;
}

int64_t Resolved::offset(const Shape& root_shape) const {
  std::vector<int64_t> cs = contiguous_strides(root_shape);
  int64_t off = 0;
  for (size_t j = 0; j < start.size(); ++j) off += start[j] * cs[j];
  return off;
}

Resolved resolve(const Graph& g, ValueRef v) {
  Resolved r;
  r.root = v;
  while (is_view(g, r.root.node)) {
    const Node& b = g.nodes()[r.root.node];
    ValueRef x = b.inputs[0];
    const Shape& xs = g.type(x).shape;
    const Shape& cur = b.outputs[0].shape;
    bool keeps_size = numel(xs) == numel(cur);
    if (r.flat && keeps_size) {  // a reshape, a broadcast that only adds size-1 dims, a whole slice
      r.root = x;
      continue;
    }
    if (r.flat) unflatten(r, cur);
    if (b.op == OpId::slice_) {
      through_slice(r, b);
      r.root = x;
      continue;
    }
    // Map dims of `cur` to dims of x.
    std::vector<int> to_x(cur.size(), -1);
    if (b.op == OpId::broadcast_in_dim_) {
      const auto& bd = b.attrs.get_ints("broadcast_dimensions");
      for (size_t k = 0; k < bd.size(); ++k)
        if (xs[k] != 1) to_x[bd[k]] = int(k);
    } else {  // a reshape composes only when it just adds or drops size-1 dims
      size_t k = 0;
      bool ok = true;
      for (size_t d = 0; d < cur.size() && ok; ++d) {
        if (cur[d] == 1) continue;
        while (k < xs.size() && xs[k] == 1) ++k;
        ok = k < xs.size() && xs[k] == cur[d];
        if (ok) to_x[d] = int(k++);
      }
      if (!ok) break;
    }
    std::vector<int64_t> start(xs.size(), 0);  // dims of x that cur drops or broadcasts are at 0
    for (size_t d = 0; d < cur.size(); ++d)
      if (to_x[d] >= 0) start[to_x[d]] = r.start[d];
    r.start = std::move(start);
    for (int& d : r.dims) d = d < 0 ? -1 : to_x[d];
    r.root = x;
  }
  return r;
}

bool reduction_split(const Shape& shape, const std::vector<int64_t>& axes, int64_t& k0, int64_t& r, int64_t& k1) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  std::vector<std::pair<int64_t, bool>> runs;  // merged (extent, reduced) runs, size-1 dims dropped
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!runs.empty() && runs.back().second == reduced[i]) runs.back().first *= shape[i];
    else runs.push_back({shape[i], reduced[i]});
  }
  k0 = r = k1 = 1;
  size_t i = 0;
  if (i < runs.size() && !runs[i].second) k0 = runs[i++].first;
  if (i < runs.size() && runs[i].second) r = runs[i++].first;
  if (i < runs.size() && !runs[i].second) k1 = runs[i++].first;
  return i == runs.size();
}

bool reduction_op(OpId op, RedOp& out) {
  switch (op) {
    case OpId::reduce_sum_: out = RedOp::Sum; return true;
    case OpId::reduce_prod_: out = RedOp::Prod; return true;
    case OpId::reduce_max_: out = RedOp::Max; return true;
    case OpId::reduce_min_: out = RedOp::Min; return true;
    case OpId::reduce_and_: out = RedOp::And; return true;
    case OpId::reduce_or_: out = RedOp::Or; return true;
    case OpId::reduce_xor_: out = RedOp::Xor; return true;
    default: return false;
  }
}

bool generated_in_kernel(const Graph& g, const Resolved& v) {
  return v.flat && g.nodes()[v.root.node].op == OpId::iota_;
}

bool fusible(const Graph& g, const Node& n, const BackendCaps& caps) {
  OpKind kind = op_info(n.op).kind;
  if (n.outputs.size() != 1) return false;
  if (kind == OpKind::Reduction) {
    RedOp op;
    int64_t k0, r, k1;
    if (n.inputs.size() != 1 || !reduction_op(n.op, op) ||
        !reduction_split(g.type(n.inputs[0]).shape, n.attrs.get_ints("axes"), k0, r, k1))
      return false;
  } else if (kind != OpKind::Elementwise || n.inputs.empty() || n.inputs.size() > 12) {
    return false;
  }
  std::vector<DType> in;
  for (ValueRef v : n.inputs) in.push_back(g.type(v).dtype);
  // float8 values are only moved and converted: the conversions fuse with the widened float32 ops
  // around them (fused loads and stores move bytes); what else moves them runs op by op.
  bool float8 = is_float8(n.outputs[0].dtype);
  for (DType d : in) float8 = float8 || is_float8(d);
  if (float8 && n.op != OpId::convert_element_type_) return false;
  return caps.can_fuse(n.op, in, n.outputs[0].dtype, n.attrs);
}

bool windowed_update(const Graph& g, int n) {
  const Node& u = g.nodes()[n];
  if (u.op != OpId::dynamic_update_slice_) return false;
  ValueRef buf = u.inputs[0];
  if (g.nodes()[buf.node].op != OpId::parameter_ || !contiguous_window(g.type(buf).shape, g.type(u.inputs[1]).shape))
    return false;
  int uses = 0;  // the kernel writes over the parameter's buffer: nothing else may read it
  for (const Node& m : g.nodes())
    for (ValueRef v : m.inputs) uses += v == buf;
  for (ValueRef v : g.outputs()) uses += v == buf;
  return uses == 1;
}

namespace {

struct Group {
  std::vector<int> nodes;
  bool fusible = false;
  int64_t domain = 0;
  bool has_reduction = false;
  int64_t k0 = 0, r = 0, k1 = 0;
  std::vector<int> succ;   // group ids (possibly merged since: look up with find)
  std::vector<int> whole;  // groups whose finished results it reads (not element for element)
};

struct Fuser {
  const Graph& g;
  const BackendCaps& caps;
  bool windows;  // windowed updates fuse
  std::vector<Group> groups;
  std::vector<int> parent;
  std::vector<int> group_of;
  int last_effect = -1;

  Fuser(const Graph& graph, const BackendCaps& backend, bool windowed_updates)
      : g(graph), caps(backend), windows(windowed_updates), group_of(graph.nodes().size(), -1) {}

  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  int group(int node) { return group_of[node] < 0 ? -1 : find(group_of[node]); }
  int new_group(int node, bool fusible_group) {
    groups.push_back(Group());
    parent.push_back(int(groups.size()) - 1);
    Group& gr = groups.back();
    gr.nodes = {node};
    gr.fusible = fusible_group;
    gr.domain = g.nodes()[node].outputs.empty() ? 0 : numel(g.nodes()[node].outputs[0].shape);
    group_of[node] = int(groups.size()) - 1;
    return group_of[node];
  }
  // The node that really provides v: through every view.
  int deep_root(ValueRef v) {
    int n = v.node;
    while (is_view(g, n)) n = g.nodes()[n].inputs[0].node;
    return n;
  }
  // Whether some group outside `merged` is reachable from `merged` and leads back into it or
  // into one of `feeders` (the groups the new node reads).
  bool cyclic(const std::vector<int>& merged, const std::vector<int>& feeders) {
    auto in = [](const std::vector<int>& s, int x) { return std::find(s.begin(), s.end(), x) != s.end(); };
    std::vector<int> stack;
    std::vector<bool> seen(groups.size(), false);
    for (int m : merged)
      for (int s : groups[m].succ)
        if (!in(merged, find(s))) stack.push_back(find(s));
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      if (seen[x]) continue;
      seen[x] = true;
      if (in(feeders, x)) return true;
      for (int s : groups[x].succ) {
        int y = find(s);
        if (in(merged, y)) return true;
        stack.push_back(y);
      }
    }
    return false;
  }
  // Whether group a reads a finished result of group b.
  bool needs_whole(int a, int b) {
    for (int w : groups[a].whole)
      if (find(w) == b) return true;
    return false;
  }
  int merge(const std::vector<int>& ids) {
    int into = ids[0];
    for (size_t i = 1; i < ids.size(); ++i) {
      Group& a = groups[into];
      Group& b = groups[ids[i]];
      a.nodes.insert(a.nodes.end(), b.nodes.begin(), b.nodes.end());
      a.succ.insert(a.succ.end(), b.succ.begin(), b.succ.end());
      a.whole.insert(a.whole.end(), b.whole.begin(), b.whole.end());
      if (b.has_reduction) {
        a.has_reduction = true;
        a.k0 = b.k0, a.r = b.r, a.k1 = b.k1;
      }
      b.nodes.clear();
      b.succ.clear();
      b.whole.clear();
      parent[ids[i]] = into;
    }
    return into;
  }
  void add_edges(int node) {
    int me = group(node);
    for (ValueRef v : g.nodes()[node].inputs) {
      int from = group(deep_root(v));
      if (from >= 0 && from != me) groups[from].succ.push_back(me);
    }
  }

  void place(int i);
  void place_fused(int i, bool reduction);
  void merge_siblings();
};

void Fuser::place(int i) {
  const Node& n = g.nodes()[i];
  OpKind kind = op_info(n.op).kind;
  // Iotas too: fused readers generate their values; one is a step of its own only where some
  // reader needs it in memory (below).
  if (n.op == OpId::parameter_ || n.op == OpId::constant_ || n.op == OpId::iota_ || is_view(g, i)) return;
  bool reduction = kind == OpKind::Reduction;
  if ((kind == OpKind::Elementwise || reduction) && fusible(g, n, caps)) return place_fused(i, reduction);
  if (windows && windowed_update(g, i)) return place_fused(i, false);
  int gi = new_group(i, false);
  add_edges(i);
  if (has_effects(n)) {  // effects keep their program order: an edge from the previous one
    if (last_effect >= 0) groups[last_effect].succ.push_back(gi);
    last_effect = gi;
  }
}

void Fuser::place_fused(int i, bool reduction) {
  const Node& n = g.nodes()[i];
  // A windowed update stores its update (operand 1) over that operand's index space; its buffer and
  // start indices are read whole, before the kernel runs.
  const bool update = n.op == OpId::dynamic_update_slice_;
  int64_t domain = reduction || update ? numel(g.type(n.inputs[reduction ? 0 : 1]).shape) : numel(n.outputs[0].shape);
  int64_t k0 = 0, r = 0, k1 = 0;
  if (reduction) reduction_split(g.type(n.inputs[0]).shape, n.attrs.get_ints("axes"), k0, r, k1);
  std::vector<int> cands, feeders, banned;
  for (size_t a = 0; a < n.inputs.size(); ++a) {
    ValueRef v = n.inputs[a];
    Resolved res = resolve(g, v);
    int root_group = group(res.root.node);
    int deep = group(deep_root(v));
    const Node& root = g.nodes()[res.root.node];
    bool element_for_element = (!update || a == 1) && res.flat && root_group >= 0 && groups[root_group].fusible &&
                               op_info(root.op).kind == OpKind::Elementwise &&
                               groups[root_group].domain == domain;
    if (element_for_element) {
      if (std::find(cands.begin(), cands.end(), root_group) == cands.end()) cands.push_back(root_group);
    } else {
      if (deep >= 0) banned.push_back(deep);  // needs that group's finished result
    }
    if (deep >= 0) feeders.push_back(deep);
  }
  std::vector<int> ok;
  size_t total = 1;
  for (int c : cands) {
    const Group& gr = groups[c];
    bool compatible = std::find(banned.begin(), banned.end(), c) == banned.end();
    if (reduction && gr.has_reduction) compatible = compatible && gr.k0 == k0 && gr.r == r && gr.k1 == k1;
    if (compatible && total + gr.nodes.size() <= kMaxGroupNodes) {
      ok.push_back(c);
      total += gr.nodes.size();
    }
  }
  // Groups merge only when neither needs the other's finished result, and reductions of
  // different splits cannot share a group.
  std::vector<int> chosen;
  for (int c : ok) {
    bool clash = false;
    for (int d : chosen) {
      if (groups[c].has_reduction && groups[d].has_reduction &&
          (groups[c].k0 != groups[d].k0 || groups[c].r != groups[d].r || groups[c].k1 != groups[d].k1))
        clash = true;
      if (needs_whole(c, d) || needs_whole(d, c)) clash = true;
    }
    if (!clash) chosen.push_back(c);
  }
  int target = -1;
  if (!chosen.empty() && !cyclic(chosen, feeders)) {
    target = merge(chosen);
  } else {
    for (int c : chosen)
      if (!cyclic({c}, feeders)) {
        target = c;
        break;
      }
  }
  if (target < 0) {
    target = new_group(i, true);
    groups[target].domain = domain;
  } else {
    groups[target].nodes.push_back(i);
    group_of[i] = target;
  }
  for (int b : banned) groups[target].whole.push_back(b);
  if (reduction) {
    Group& gr = groups[target];
    gr.has_reduction = true;
    gr.k0 = k0, gr.r = r, gr.k1 = k1;
  }
  add_edges(i);
}

// Independent fused groups over one small index space (with equal reduction splits) become one
// kernel with several outputs: unrolled and vmapped code makes many such siblings (a dot per
// output element), and one pass over them beats a kernel each. Greedy in program order: a group
// joins the last open group of its kind unless one depends on the other.
void Fuser::merge_siblings() {
  std::map<std::array<int64_t, 4>, int> open;  // (domain, k0, r, k1) -> the group being filled
  size_t seen = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    Group& gr = groups[i];
    if (!gr.fusible || find(int(i)) != int(i) || gr.nodes.empty() || gr.domain > kMaxSiblingDomain) continue;
    if (++seen > kMaxSiblingGroups) return;
    std::array<int64_t, 4> key{gr.domain, gr.has_reduction ? gr.k0 : -1, gr.r, gr.k1};
    auto it = open.find(key);
    if (it == open.end()) {
      open[key] = int(i);
      continue;
    }
    int into = find(it->second);
    auto linked = [&](int a, int b) {
      for (int s : groups[a].succ)
        if (find(s) == b) return true;
      return needs_whole(a, b);
    };
    bool ok = groups[into].nodes.size() + gr.nodes.size() <= kMaxGroupNodes && !linked(into, int(i)) &&
              !linked(int(i), into) && !cyclic({into, int(i)}, {});
    it->second = ok ? merge({into, int(i)}) : int(i);
  }
}

}  // namespace

Fusion fuse(const Graph& g, bool enabled, const BackendCaps& caps, bool windowed_updates) {
  const auto& nodes = g.nodes();
  Fuser f(g, caps, windowed_updates);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (enabled) {
      f.place(int(i));
    } else if (nodes[i].op != OpId::parameter_ && nodes[i].op != OpId::constant_) {
      f.new_group(int(i), false);
    }
  }
  if (enabled) f.merge_siblings();

  // Which values must live in buffers: outputs, operands of unfused nodes, and what fused groups
  // read from outside themselves. A materialised view becomes a step of its own.
  // A fused group of one node that reads its operands directly runs the node's own kernel, unless
  // it is one elementwise op over a small index space: a fused program finds its loop when it is
  // lowered, where the op's kernel looks its loop up per call (a jitted `a * b + 2.0` over 4
  // elements: 1.02 -> 0.93 us), and the kernel's longer blocks gain nothing there.
  for (size_t i = 0; i < f.groups.size(); ++i) {
    Group& gr = f.groups[i];
    if (!gr.fusible || gr.nodes.size() != 1 || f.find(int(i)) != int(i)) continue;
    const Node& n = nodes[gr.nodes[0]];
    if (op_info(n.op).kind == OpKind::Elementwise && gr.domain <= kSmallLoneDomain) continue;
    bool direct = true;
    for (ValueRef v : n.inputs) direct = direct && resolve(g, v).root == v;
    if (direct) gr.fusible = false;
  }

  Fusion out;
  out.materialized.assign(nodes.size(), false);
  std::vector<int> pending;
  auto mark = [&](int node) {
    if (!out.materialized[node]) {
      out.materialized[node] = true;
      pending.push_back(node);
    }
  };
  for (ValueRef v : g.outputs()) mark(v.node);
  // What steps write: results of unfused nodes, reductions, windowed updates.
  for (size_t i = 0; i < nodes.size(); ++i) {
    int gi = f.group(int(i));
    if (gi >= 0 && (!f.groups[gi].fusible || op_info(nodes[i].op).kind != OpKind::Elementwise)) mark(int(i));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    int gi = f.group(int(i));
    if (gi < 0) continue;
    bool in_fused = f.groups[gi].fusible;
    bool update = nodes[i].op == OpId::dynamic_update_slice_;
    for (size_t a = 0; a < nodes[i].inputs.size(); ++a) {
      ValueRef v = nodes[i].inputs[a];
      if (!in_fused || (update && a != 1)) {  // (a windowed update's buffer and starts: in memory)
        mark(v.node);
        continue;
      }
      Resolved res = resolve(g, v);
      if (f.group(res.root.node) == gi && res.flat) continue;
      if (is_splat_constant(nodes[res.root.node])) continue;  // filled from its value
      if (generated_in_kernel(g, res)) continue;
      mark(res.root.node);
    }
  }
  while (!pending.empty()) {
    int b = pending.back();
    pending.pop_back();
    if (f.group_of[b] < 0 && is_view(g, b)) {
      f.new_group(b, false);
      mark(nodes[b].inputs[0].node);
    } else if (f.group_of[b] < 0 && nodes[b].op == OpId::iota_) {
      f.new_group(b, false);
    }
  }

  // Order the groups: Kahn's algorithm over their dependencies (and effects in program order),
  // earliest first node first.
  std::vector<int> ids;
  for (size_t i = 0; i < f.groups.size(); ++i)
    if (f.find(int(i)) == int(i) && !f.groups[i].nodes.empty()) ids.push_back(int(i));
  std::vector<int> index(f.groups.size(), -1);
  for (size_t k = 0; k < ids.size(); ++k) {
    std::sort(f.groups[ids[k]].nodes.begin(), f.groups[ids[k]].nodes.end());
    index[ids[k]] = int(k);
  }
  std::vector<std::vector<int>> succ(ids.size());
  std::vector<int> indeg(ids.size(), 0);
  auto edge = [&](int a, int b) {
    if (a == b) return;
    succ[a].push_back(b);
    ++indeg[b];
  };
  int last_effect = -1;
  for (size_t k = 0; k < ids.size(); ++k) {
    const Group& gr = f.groups[ids[k]];
    for (int u : gr.nodes) {
      for (ValueRef v : nodes[u].inputs) {
        int provider = v.node;
        if (gr.fusible) provider = resolve(g, v).root.node;
        int pg = f.group(provider);
        if (pg >= 0) edge(index[pg], int(k));
      }
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!has_effects(nodes[i])) continue;
    int k = index[f.group(int(i))];
    if (last_effect >= 0) edge(last_effect, k);
    last_effect = k;
  }
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ready;
  for (size_t k = 0; k < ids.size(); ++k)
    if (indeg[k] == 0) ready.push({f.groups[ids[k]].nodes[0], int(k)});
  out.group_of.assign(nodes.size(), -1);
  while (!ready.empty()) {
    int k = ready.top().second;
    ready.pop();
    const Group& gr = f.groups[ids[k]];
    FusionGroup fg;
    fg.nodes = gr.nodes;
    fg.fused = gr.fusible;
    for (int u : fg.nodes) out.group_of[u] = int(out.groups.size());
    out.groups.push_back(std::move(fg));
    for (int s : succ[k])
      if (--indeg[s] == 0) ready.push({f.groups[ids[s]].nodes[0], s});
  }
  if (out.groups.size() != ids.size()) {  // never expected: then run unfused
    if (enabled) return fuse(g, false, caps, windowed_updates);
    throw std::logic_error("[fuse] the node graph has a cycle");
  }
  return out;
}

}  // namespace xjax
