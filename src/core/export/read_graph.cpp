// Reading the graphs of an .xjx file: every node is re-added through Graph::add (or parameter /
// add_subgraph_op), so the same shape rules that check what Python builds check what a file says.
#include <algorithm>

#include "core/export/reader.h"
#include "core/size.h"

namespace xjax::xjx {

namespace {

constexpr size_t kMinNodeBytes = 20;   // op, and the counts of inputs, outputs, attributes, subgraphs
constexpr size_t kMinGraphBytes = 8;   // the counts of nodes and outputs
constexpr size_t kMinTypeBytes = 8;    // dtype and rank
constexpr size_t kMinAttrBytes = 17;   // name length, tag, an 8-byte value

ValueRef read_ref(Cursor& c, int num_nodes, const std::vector<int>& num_results, const char* what) {
  size_t at = c.offset();
  uint32_t node = c.u32(what);
  uint32_t index = c.u32(what);
  if (node >= uint32_t(num_nodes))
    c.fail_at(at, std::string(what) + " refers to node " + std::to_string(node) + ", but only " +
                      std::to_string(num_nodes) + " precede it");
  if (index >= uint32_t(num_results[node]))
    c.fail_at(at, std::string(what) + " refers to result " + std::to_string(index) + " of node " +
                      std::to_string(node) + ", which has " + std::to_string(num_results[node]));
  return {int(node), int(index)};
}

AttrValue read_attr_value(Cursor& c) {
  size_t at = c.offset();
  uint8_t tag = c.u8("attribute tag");
  switch (AttrTag(tag)) {
    case AttrTag::Int: return c.i64("int attribute");
    case AttrTag::Float: return c.f64("float attribute");
    case AttrTag::Ints: {
      uint32_t n = c.count("int list length", 8);
      std::vector<int64_t> v(n);
      for (auto& x : v) x = c.i64("int list entry");
      return v;
    }
    case AttrTag::String: return c.str("string attribute");
  }
  c.fail_at(at, "unknown attribute tag " + std::to_string(tag));
}

struct GraphReader {
  Cursor& c;
  const Tables& t;
  const ReadOptions& options;
  std::vector<std::shared_ptr<const Graph>> graphs;
  std::vector<int> depth;
  std::vector<char> used;      // per graph: already a subgraph of some node
  int64_t constant_bytes = 0;  // of every constant node so far (compile time materialises them)

  std::shared_ptr<const Graph> read_graph(uint32_t gi) {
    auto g = std::make_shared<Graph>();
    int d = 1;
    uint32_t n = c.count("node count", kMinNodeBytes);
    std::vector<int> num_results;
    for (uint32_t i = 0; i < n; ++i) {
      c.context = "graph " + std::to_string(gi) + ", node " + std::to_string(i);
      d = std::max(d, read_node(*g, gi, int(i), num_results));
    }
    c.context = "graph " + std::to_string(gi) + " outputs";
    uint32_t k = c.count("output count", 8);
    std::vector<ValueRef> outs(k);
    for (auto& v : outs) v = read_ref(c, int(n), num_results, "output");
    g->set_outputs(outs);
    depth.push_back(d);
    return g;
  }

  // Reads node i and adds it to g; returns the nesting depth it brings (1 + its deepest subgraph).
  int read_node(Graph& g, uint32_t gi, int i, std::vector<int>& num_results) {
    size_t at = c.offset();
    uint32_t op_index = c.u32("op");
    if (op_index >= t.ops.size())
      c.fail_at(at, "op " + std::to_string(op_index) + " is not in the op table of " + std::to_string(t.ops.size()));
    const OpId op = t.ops[op_index];
    c.context += std::string(" (") + op_name(op) + ")";
    if (op == OpId::host_callback_)
      c.fail_at(at, "a host callback cannot be loaded (it calls a function of the process that exported it)");
    uint32_t n_in = c.count("operand count", 8);
    std::vector<ValueRef> inputs(n_in);
    for (auto& v : inputs) v = read_ref(c, i, num_results, "operand");
    uint32_t n_out = c.count("result count", kMinTypeBytes);
    std::vector<TypeInfo> stored(n_out);
    for (auto& ty : stored) ty = read_type(c, t, options.max_array_bytes);
    uint32_t n_attr = c.count("attribute count", kMinAttrBytes);
    Attrs attrs;
    for (uint32_t a = 0; a < n_attr; ++a) {
      size_t name_at = c.offset();
      std::string name = c.text("attribute name", kMaxNameBytes);
      if (attrs.has(name)) c.fail_at(name_at, "attribute '" + name + "' appears twice");
      attrs.set(name, read_attr_value(c));
    }
    uint32_t n_sub = c.count("subgraph count", 4);
    std::vector<std::shared_ptr<const Graph>> subs;
    int d = 1;
    for (uint32_t s = 0; s < n_sub; ++s) {
      size_t sub_at = c.offset();
      uint32_t si = c.u32("subgraph");
      if (si >= gi)
        c.fail_at(sub_at, "subgraph " + std::to_string(si) + " must be an earlier graph than this one (" +
                              std::to_string(gi) + ")");
      if (used[si]) c.fail_at(sub_at, "subgraph " + std::to_string(si) + " is used by a second node");
      used[si] = 1;
      subs.push_back(graphs[si]);
      d = std::max(d, 1 + depth[si]);
    }
    if (d > kMaxSubgraphDepth)
      c.fail_at(at, "subgraphs nest " + std::to_string(d) + " deep, more than " + std::to_string(kMaxSubgraphDepth));
    add(g, op, inputs, attrs, std::move(subs), stored, at);
    num_results.push_back(int(stored.size()));
    return d;
  }

  void add(Graph& g, OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs,
           std::vector<std::shared_ptr<const Graph>> subs, const std::vector<TypeInfo>& stored, size_t at) {
    const OpKind kind = op_info(op).kind;
    std::vector<ValueRef> refs;
    try {
      if (op == OpId::parameter_) {
        if (!inputs.empty() || !attrs.items().empty() || !subs.empty() || stored.size() != 1)
          c.fail_at(at, "a parameter has one result and no operands, attributes or subgraphs");
        refs = {g.parameter(stored[0])};
      } else if (kind == OpKind::Control) {
        refs = g.add_subgraph_op(op, inputs, attrs, std::move(subs));
      } else {
        if (!subs.empty()) c.fail_at(at, std::string(op_name(op)) + " takes no subgraphs");
        refs = g.add(op, inputs, attrs);
      }
    } catch (const FormatError&) {
      throw;
    } catch (const std::exception& e) {
      c.fail_at(at, std::string("the op's rule rejects it: ") + e.what());
    }
    const Node& node = g.nodes().back();
    if (node.outputs != stored)
      c.fail_at(at, "the file says it gives [" + types_str(stored) + "], its rule infers [" + types_str(node.outputs) +
                        "]");
    if (op == OpId::constant_) {
      constant_bytes += checked_size(stored[0].shape, stored[0].dtype, "constant").bytes;
      if (constant_bytes > options.max_array_bytes)
        c.fail_at(at, "the constants need more than " + std::to_string(options.max_array_bytes) + " bytes");
    }
  }
};

}  // namespace

TypeInfo read_type(Cursor& c, const Tables& t, int64_t max_bytes) {
  size_t at = c.offset();
  uint32_t dt = c.u32("dtype");
  if (dt >= t.dtypes.size())
    c.fail_at(at, "dtype " + std::to_string(dt) + " is not in the dtype table of " + std::to_string(t.dtypes.size()));
  uint32_t rank = c.count("rank", 8);
  if (rank > kMaxRank) c.fail_at(at, "rank " + std::to_string(rank) + " is more than " + std::to_string(kMaxRank));
  TypeInfo type{Shape(rank), t.dtypes[dt]};
  for (auto& d : type.shape) d = c.i64("dimension");
  int64_t bytes = 0;
  try {
    bytes = checked_size(type.shape, type.dtype, "xjx").bytes;
  } catch (const std::exception& e) {
    c.fail_at(at, e.what());
  }
  if (bytes > max_bytes)
    c.fail_at(at, std::string(dtype_name(type.dtype)) + shape_str(type.shape) + " needs " + std::to_string(bytes) +
                      " bytes, more than the " + std::to_string(max_bytes) + " allowed");
  return type;
}

std::vector<std::shared_ptr<const Graph>> read_graphs(Cursor& c, const Tables& t, const ReadOptions& options) {
  c.context = "graph list";
  uint32_t n = c.count("graph count", kMinGraphBytes);
  GraphReader r{c, t, options, {}, {}, std::vector<char>(n, 0)};
  for (uint32_t gi = 0; gi < n; ++gi) r.graphs.push_back(r.read_graph(gi));
  c.context.clear();
  return std::move(r.graphs);
}

}  // namespace xjax::xjx
