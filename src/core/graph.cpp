#include "core/graph.h"

namespace xjax {

void Graph::check(ValueRef v) const {
  if (v.node < 0 || v.node >= int(nodes_.size()) || v.index < 0 || v.index >= int(nodes_[v.node].outputs.size()))
    throw ValueError("[graph] reference to a value that does not exist: node " + std::to_string(v.node) +
                     ", result " + std::to_string(v.index));
}

ValueRef Graph::parameter(const TypeInfo& type) {
  for (int64_t d : type.shape)
    if (d < 0) throw ValueError("[graph] parameter with negative dimension " + shape_str(type.shape));
  Node n{OpId::parameter_, {}, {}, {type}};
  n.attrs.set("index", int64_t(parameters_.size()));
  nodes_.push_back(std::move(n));
  parameters_.push_back(int(nodes_.size()) - 1);
  return {int(nodes_.size()) - 1, 0};
}

std::vector<ValueRef> Graph::add(OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs) {
  if (op == OpId::parameter_) throw ValueError("[graph] use parameter() to add graph inputs");
  std::vector<TypeInfo> in;
  in.reserve(inputs.size());
  for (ValueRef v : inputs) {
    check(v);
    in.push_back(type(v));
  }
  Node n{op, inputs, attrs, infer_types(op, in, attrs)};
  nodes_.push_back(std::move(n));
  std::vector<ValueRef> out;
  for (size_t i = 0; i < nodes_.back().outputs.size(); ++i) out.push_back({int(nodes_.size()) - 1, int(i)});
  return out;
}

void Graph::set_outputs(const std::vector<ValueRef>& outputs) {
  for (ValueRef v : outputs) check(v);
  outputs_ = outputs;
}

}  // namespace xjax
