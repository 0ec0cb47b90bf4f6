// The IR: a DAG of op nodes in topological order; values are (node, result index) pairs.
// Control ops (cond, while) carry subgraphs; compiler passes build new graphs from old ones.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

struct ValueRef {
  int node = -1;
  int index = 0;
  bool operator==(const ValueRef& o) const { return node == o.node && index == o.index; }
  bool operator!=(const ValueRef& o) const { return !(*this == o); }
};

class Graph;

struct Node {
  OpId op;
  std::vector<ValueRef> inputs;
  Attrs attrs;
  std::vector<TypeInfo> outputs;
  std::vector<std::shared_ptr<const Graph>> subgraphs;  // cond branches; while's (cond, body)
};

class Graph {
 public:
  // Adds the next graph input.
  ValueRef parameter(const TypeInfo& type);
  // Adds a node after checking its operands (types inferred and validated by the op's rule).
  std::vector<ValueRef> add(OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs);
  // Adds a control op (cond, while) over subgraphs; checks their signatures against the operands.
  std::vector<ValueRef> add_subgraph_op(OpId op, const std::vector<ValueRef>& inputs, const Attrs& attrs,
                                        std::vector<std::shared_ptr<const Graph>> subgraphs);
  // Appends a node whose types are already known (for compiler passes; operands must precede it).
  std::vector<ValueRef> append(Node node);
  void set_outputs(const std::vector<ValueRef>& outputs);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& parameters() const { return parameters_; }
  const std::vector<ValueRef>& outputs() const { return outputs_; }
  const TypeInfo& type(ValueRef v) const { return nodes_.at(v.node).outputs.at(v.index); }
  std::vector<TypeInfo> parameter_types() const;
  std::vector<TypeInfo> output_types() const;

  // One line per node ("%3 = mul(%1, %2) {..} : float32(4,)"), then the outputs; subgraphs indented.
  std::string text() const;

 private:
  void check(ValueRef v) const;
  std::vector<Node> nodes_;
  std::vector<int> parameters_;
  std::vector<ValueRef> outputs_;
};

// The result types of cond / while after checking the subgraphs' signatures against the operands.
std::vector<TypeInfo> control_op_types(OpId op, const std::vector<TypeInfo>& in,
                                       const std::vector<std::shared_ptr<const Graph>>& subgraphs);

// Text of an attribute value and of a node's attributes ("{axes=(0, 1), y=2}"), for messages.
std::string attrs_str(const Attrs& attrs);

}  // namespace xjax
