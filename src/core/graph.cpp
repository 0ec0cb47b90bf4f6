#include "core/graph.h"

#include <cstdio>

#include "core/size.h"

namespace xjax {

namespace {

std::string types_list(const std::vector<TypeInfo>& t) { return "[" + types_str(t) + "]"; }

}  // namespace

std::vector<TypeInfo> control_op_types(OpId op, const std::vector<TypeInfo>& in,
                                       const std::vector<std::shared_ptr<const Graph>>& subs) {
  for (const auto& g : subs)
    if (!g) fail_value(op, "subgraph is missing");
  if (op == OpId::cond_) {
    if (in.empty()) fail_value(op, "needs an index operand");
    if (!in[0].shape.empty() || (in[0].dtype != DType::Int32 && in[0].dtype != DType::Bool))
      fail_type(op, "index must be a 0-d int32 or bool, got " + types_str({in[0]}));
    if (subs.empty()) fail_value(op, "needs at least one branch");
    std::vector<TypeInfo> operands(in.begin() + 1, in.end());
    std::vector<TypeInfo> out = subs[0]->output_types();
    for (size_t b = 0; b < subs.size(); ++b) {
      if (subs[b]->parameter_types() != operands)
        fail_type(op, "branch " + std::to_string(b) + " takes " + types_list(subs[b]->parameter_types()) +
                          " but the operands are " + types_list(operands));
      if (subs[b]->output_types() != out)
        fail_type(op, "branch " + std::to_string(b) + " returns " + types_list(subs[b]->output_types()) +
                          " but branch 0 returns " + types_list(out));
    }
    return out;
  }
  if (op == OpId::while_) {
    if (subs.size() != 2) fail_value(op, "needs two subgraphs (cond, body), got " + std::to_string(subs.size()));
    const Graph& c = *subs[0];
    const Graph& b = *subs[1];
    if (c.parameter_types() != in)
      fail_type(op, "cond takes " + types_list(c.parameter_types()) + " but the carried values are " + types_list(in));
    if (c.output_types() != std::vector<TypeInfo>{TypeInfo{{}, DType::Bool}})
      fail_type(op, "cond must return one 0-d bool, got " + types_list(c.output_types()));
    if (b.parameter_types() != in || b.output_types() != in)
      fail_type(op, "body must take and return the carried types " + types_list(in) + ", got " +
                        types_list(b.parameter_types()) + " -> " + types_list(b.output_types()));
    return in;
  }
  fail_value(op, "is not a control op over subgraphs");
}

namespace {

std::string value_str(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  if (auto* l = std::get_if<std::vector<int64_t>>(&v)) return shape_str(*l);
  const std::string& s = std::get<std::string>(v);
  for (unsigned char c : s)
    if (c < 32 || c > 126) return "<" + std::to_string(s.size()) + " bytes>";
  return s;
}

void print(const Graph& g, const std::string& indent, std::string& out) {
  auto ref = [](ValueRef v) { return "%" + std::to_string(v.node) + (v.index ? "." + std::to_string(v.index) : ""); };
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    out += indent + "%" + std::to_string(i) + " = " + op_name(n.op) + "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) out += (k ? ", " : "") + ref(n.inputs[k]);
    out += ")";
    if (!n.attrs.items().empty()) out += " " + attrs_str(n.attrs);
    out += " : " + types_str(n.outputs) + "\n";
    for (size_t s = 0; s < n.subgraphs.size(); ++s) {
      out += indent + "  subgraph " + std::to_string(s) + ":\n";
      print(*n.subgraphs[s], indent + "    ", out);
    }
  }
  out += indent + "return";
  for (size_t k = 0; k < g.outputs().size(); ++k) out += (k ? ", " : " ") + ref(g.outputs()[k]);
  out += "\n";
}

}  // namespace

std::string attrs_str(const Attrs& attrs) {
  std::string s = "{";
  bool first = true;
  for (const auto& [name, v] : attrs.items()) {
    s += (first ? "" : ", ") + name + "=" + value_str(v);
    first = false;
  }
  return s + "}";
}

void Graph::check(ValueRef v) const {
  if (v.node < 0 || v.node >= int(nodes_.size()) || v.index < 0 || v.index >= int(nodes_[v.node].outputs.size()))
    throw ValueError("[graph] reference to a value that does not exist: node " + std::to_string(v.node) +
                     ", result " + std::to_string(v.index));
}

ValueRef Graph::parameter(const TypeInfo& type) {
  checked_size(type.shape, type.dtype, "parameter");
  Node n{OpId::parameter_, {}, {}, {type}, {}};
  n.attrs.set("index", int64_t(parameters_.size()));
  nodes_.push_back(std::move(n));
  parameters_.push_back(int(nodes_.size()) - 1);
  return {int(nodes_.size()) - 1, 0};
}

std::vector<ValueRef> Graph::add(OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs) {
  if (op == OpId::parameter_) throw ValueError("[graph] use parameter() to add graph inputs");
  if (op_info(op).kind == OpKind::Control)
    throw ValueError(std::string("[graph] ") + op_name(op) + " takes subgraphs: use add_subgraph_op()");
  std::vector<TypeInfo> in;
  in.reserve(inputs.size());
  for (ValueRef v : inputs) {
    check(v);
    in.push_back(type(v));
  }
  return append(Node{op, inputs, attrs, infer_types(op, in, attrs), {}});
}

std::vector<ValueRef> Graph::add_subgraph_op(OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs,
                                             std::vector<std::shared_ptr<const Graph>> subgraphs) {
  if (op_info(op).kind != OpKind::Control)
    throw ValueError(std::string("[graph] ") + op_name(op) + " is not a control op over subgraphs");
  std::vector<TypeInfo> in;
  for (ValueRef v : inputs) {
    check(v);
    in.push_back(type(v));
  }
  std::vector<TypeInfo> out = control_op_types(op, in, subgraphs);
  return append(Node{op, inputs, attrs, std::move(out), std::move(subgraphs)});
}

std::vector<ValueRef> Graph::append(Node node) {
  for (ValueRef v : node.inputs) check(v);
  if (node.op == OpId::parameter_) {
    node.attrs.set("index", int64_t(parameters_.size()));
    parameters_.push_back(int(nodes_.size()));
  }
  nodes_.push_back(std::move(node));
  std::vector<ValueRef> out;
  out.reserve(nodes_.back().outputs.size());
  for (size_t i = 0; i < nodes_.back().outputs.size(); ++i) out.push_back({int(nodes_.size()) - 1, int(i)});
  return out;
}

void Graph::set_outputs(const std::vector<ValueRef>& outputs) {
  for (ValueRef v : outputs) check(v);
  outputs_ = outputs;
}

std::vector<TypeInfo> Graph::parameter_types() const {
  std::vector<TypeInfo> out;
  for (int p : parameters_) out.push_back(nodes_[p].outputs[0]);
  return out;
}

std::vector<TypeInfo> Graph::output_types() const {
  std::vector<TypeInfo> out;
  for (ValueRef v : outputs_) out.push_back(type(v));
  return out;
}

std::string Graph::text() const {
  std::string out;
  print(*this, "", out);
  return out;
}

}  // namespace xjax
