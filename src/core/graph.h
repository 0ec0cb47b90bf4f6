// The IR: a DAG of op nodes in topological order; values are (node, result index) pairs.
#pragma once
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

struct ValueRef {
  int node = -1;
  int index = 0;
  bool operator==(const ValueRef& o) const { return node == o.node && index == o.index; }
};

struct Node {
  OpId op;
  std::vector<ValueRef> inputs;
  Attrs attrs;
  std::vector<TypeInfo> outputs;
};

class Graph {
 public:
  // Adds the next graph input.
  ValueRef parameter(const TypeInfo& type);
  // Adds a node after checking its operands (types inferred and validated by the op's rule).
  std::vector<ValueRef> add(OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs);
  void set_outputs(const std::vector<ValueRef>& outputs);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& parameters() const { return parameters_; }
  const std::vector<ValueRef>& outputs() const { return outputs_; }
  const TypeInfo& type(ValueRef v) const { return nodes_.at(v.node).outputs.at(v.index); }

 private:
  void check(ValueRef v) const;
  std::vector<Node> nodes_;
  std::vector<int> parameters_;
  std::vector<ValueRef> outputs_;
};

}  // namespace xjax
