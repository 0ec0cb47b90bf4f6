// A function read from an .xjx file, compiled for this machine: the graph as stored (before any
// optimisation) goes through today's compiler, so a newer xjax runs an old file better.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/executable.h"
#include "core/export/format.h"

namespace xjax {

class LoadedFunction {
 public:
  // Compiles def (its weights are module_weights[def.weights[k]]), or shares the executable of
  // `same_graph`, a function over the same graph. Throws FormatError when the graph does not
  // compile or its buffers would take more than max_plan_bytes at run time.
  LoadedFunction(FunctionDef def, const std::vector<Array>& module_weights, int64_t max_plan_bytes,
                 const LoadedFunction* same_graph = nullptr);
  const FunctionDef& def() const { return def_; }
  // Checks the arguments against the signature (ValueError naming the function, the argument, the
  // types), then runs. call: queued on the core's stream (results complete when their events fire);
  // call_now: on the calling thread, the results computed on return.
  std::vector<Array> call(const std::vector<Array>& inputs) const;
  std::vector<Array> call_now(const std::vector<Array>& inputs) const;
  // The argument check alone.
  void check(const std::vector<Array>& inputs) const;

 private:
  std::vector<Array> with_weights(const std::vector<Array>& inputs) const;
  std::vector<Array> results(std::vector<Array> unique) const;

  FunctionDef def_;
  std::shared_ptr<Executable> exe_;  // null: no outputs
  std::vector<int> out_pos_;         // result i is the executable's output out_pos_[i]
  std::vector<Array> weights_;
};

// Compiles every function of a module, in order; each graph once, however many records use it.
// max_plan_bytes bounds the buffers any one run may allocate (FormatError past it).
std::vector<std::shared_ptr<LoadedFunction>> compile_module(const ModuleDef& m,
                                                            int64_t max_plan_bytes = ReadOptions().max_array_bytes);

}  // namespace xjax
