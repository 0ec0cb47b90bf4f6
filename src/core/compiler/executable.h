// A compiled graph and the way it runs: asynchronously on the stream, or inline when tiny.
// compile() runs the graph passes, fuses, plans steps, lowers them for the CPU and plans buffers
// once; run() only allocates the buffers of the plan and walks its steps.
#pragma once
#include <memory>
#include <vector>

#include "core/array.h"
#include "core/compiler/plan.h"
#include "core/graph.h"

namespace xjax {

class Executable : public std::enable_shared_from_this<Executable> {
 public:
  Executable(Graph graph, const CompileOptions& options);
  // The optimised graph the plan was built from.
  const Graph& graph() const { return graph_; }
  std::vector<TypeInfo> input_types() const { return graph_.parameter_types(); }
  std::vector<TypeInfo> output_types() const { return graph_.output_types(); }
  const Plan& plan() const { return plan_; }
  int num_kernels() const { return plan_.num_kernels(); }
  std::string plan_text() const { return plan_.text(graph_, cpu_.get()); }
  bool is_reference() const { return options_.reference; }

  // Checks the arguments against the parameter types, then queues the computation and returns
  // the results at once (their events fire when done). Errors of the computation surface on wait.
  std::vector<Array> run(const std::vector<Array>& inputs);
  // Whether run() returns within microseconds whatever happens: it never waits (for inputs, other
  // processes or callbacks) and runs at most kBriefElements elements, without loops. A caller may
  // hold its own lock (Python's GIL) across such a run.
  bool brief() const;
  static constexpr int64_t kBriefElements = int64_t(1) << 14;
  // Runs to completion on the calling thread (after waiting for the inputs); returns the results.
  std::vector<Array> run_now(const std::vector<Array>& inputs) const;
  // Runs on several CPU devices at once (core/devices.h), inputs[i] on devices[i], each on its
  // device's host thread and share of the cores; returns when all are done: outputs per device.
  std::vector<std::vector<Array>> run_on_devices(const std::vector<std::vector<Array>>& inputs,
                                                 const std::vector<int>& devices) const;
  // Runs to completion on the calling thread, filling the given output arrays. Checks the arguments
  // as run() does and each output: its type, a buffer of its own size, neither read-only nor
  // shared with an argument or another output.
  void execute(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;
  // Runs the plan on ready input buffers. outputs[i] set: filled; null: set to the buffer holding
  // output i (possibly an input's or a constant's: never write to it). `pool`, when given, keeps
  // the intermediate buffers from one run to the next (a loop body's runs): its buffers that nobody
  // else holds are reused.
  void run_plan(const std::shared_ptr<Buffer>* inputs, std::shared_ptr<Buffer>* outputs,
                std::vector<std::shared_ptr<Buffer>>* pool = nullptr) const;
  // Whether output i is written into a buffer of its own (not an input's, a constant's, or a donated
  // parameter's that it updates in place): then a caller-supplied buffer for it saves an allocation
  // and no copy (a loop hands each iteration the buffer its carry left).
  bool output_takes_buffer(size_t i) const;

 private:
  void validate(const std::vector<Array>& inputs) const;
  std::vector<Array> make_outputs(const std::vector<Array>& inputs, const std::shared_ptr<Event>& event,
                                  std::vector<std::shared_ptr<Buffer>>& given) const;
  void validate_outputs(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;
  struct Frame;
  // run_plan in two parts, so that a loop binds its body's frame once: bind_fixed refers to the
  // buffers that stay put across runs (parameters, constants, pooled buffers, by the address of
  // their shared_ptr); run_bound binds the rest, runs the steps, hands out the results and unbinds
  // what it bound.
  void prepare_pool(std::vector<std::shared_ptr<Buffer>>& pool) const;
  void bind_fixed(Frame& f, const std::shared_ptr<Buffer>* inputs, std::vector<std::shared_ptr<Buffer>>& pool) const;
  // run_bound hands out the outputs listed in `results` (all_outputs_, or a loop's own_ outputs).
  void run_bound(Frame& f, std::shared_ptr<Buffer>* outputs, const std::vector<int>& results) const;
  // Reads the data pointers of the parameters listed in `changed` (all when it is null).
  void read_params(Frame& f, const std::shared_ptr<Buffer>* inputs, const std::vector<int>* changed) const;
  void run_step(int s, Frame& f) const;
  void run_control(const Step& step, Frame& f) const;
  void run_while(const Step& step, std::vector<std::shared_ptr<Buffer>>& carried) const;
  void run_callback(const Step& step, Frame& f) const;

  Graph graph_;
  CompileOptions options_;
  Plan plan_;
  std::shared_ptr<const CpuPlan> cpu_;  // the plan's CPU lowering (backend.h); null: another backend's plan
  std::vector<int> bound_fixed_;                // parameters, constants, pooled buffers: bound once per frame
  std::vector<int> bound_next_;                 // values written over donated parameters, then fresh outputs
  std::vector<int> per_run_;                    // storages a run binds and unbinds (all but bound_fixed_)
  // Storages that steps read or write, bound by reference: their data pointers are read per run,
  // those of parameters only where the caller says the buffer changed (a loop's carried values).
  std::vector<int> touched_;
  std::vector<std::pair<int, int>> touched_params_;  // (parameter, storage)
  std::vector<int> param_touched_;                    // per parameter: its storage there, or -1
  // Outputs: all; those that are not parameter i itself as output i (passed through, or updated
  // in its window: a loop body's carried buffer that stays where it is); each one's storage. Per
  // step: the storages of its inputs, then of its outputs.
  std::vector<int> all_outputs_, own_outputs_, output_storage_;
  std::vector<std::vector<int>> step_storages_;
};

// The default options: every graph pass, fusion, buffer reuse.
CompileOptions default_compile_options();
// Compiles a graph (with the default options unless given).
std::shared_ptr<Executable> compile(Graph graph);
std::shared_ptr<Executable> compile(const Graph& graph, const CompileOptions& options);

// Convenience for eager dispatch: a graph of one op over parameters of the given types.
std::shared_ptr<Executable> compile_op(OpId op, const std::vector<TypeInfo>& inputs, const Attrs& attrs);

}  // namespace xjax
