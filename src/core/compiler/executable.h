// A compiled graph and the way it runs: asynchronously on the stream, or inline when tiny.
#pragma once
#include <memory>
#include <vector>

#include "core/array.h"
#include "core/graph.h"

namespace xjax {

class Executable : public std::enable_shared_from_this<Executable> {
 public:
  explicit Executable(Graph graph);
  const Graph& graph() const { return graph_; }
  std::vector<TypeInfo> input_types() const;
  std::vector<TypeInfo> output_types() const;

  // Checks the arguments against the parameter types, then queues the computation and returns
  // the results at once (their events fire when done). Errors of the computation surface on wait.
  std::vector<Array> run(const std::vector<Array>& inputs);
  // Runs to completion on the calling thread (used by run, by tests and by C++ embedders).
  void execute(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;

 private:
  void validate(const std::vector<Array>& inputs) const;
  Graph graph_;
  int64_t work_elements_ = 0;  // total elements touched: decides inline vs queued execution
};

// Compiles a graph (verification now; optimisation passes and fusion are added as passes).
std::shared_ptr<Executable> compile(Graph graph);

// Convenience for eager dispatch: a graph of one op over parameters of the given types.
std::shared_ptr<Executable> compile_op(OpId op, const std::vector<TypeInfo>& inputs, const Attrs& attrs);

}  // namespace xjax
