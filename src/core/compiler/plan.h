// The execution plan of a compiled graph: steps (fused kernels, single-op kernels, control flow,
// callbacks) in order, and where every value lives. The plan is backend-neutral: a fused step is
// described by its FusedKernelSpec, a kernel step by its op; each backend lowers the steps its
// own way, once (backend.h). Values that a fused kernel keeps in its tiles have no storage; a
// reshape shares its operand's storage. Intermediate storages are packed into a few pooled
// buffers: a buffer is reused once the last reader of its previous value has run, or overwritten
// in place by a step whose lowering reads its value element for element.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/compiler/fusion.h"
#include "core/compiler/kernel_spec.h"
#include "core/compiler/passes.h"

namespace xjax {

class Executable;

struct CompileOptions {
  std::vector<std::string> passes;  // graph passes by name (passes.h)
  bool fuse = true;                 // false: every node its own step
  bool reuse_buffers = true;        // false: every intermediate its own buffer
  bool reference = false;           // run the reference interpreter instead of a plan
  // The caller hands over the parameters' buffers: steps may update them in place (while
  // bodies, whose carried buffers the loop owns).
  bool donate_params = false;
  // What the target's fused kernels compute (fusion.h); null: the CPU's. Subgraphs inherit it.
  const BackendCaps* caps = nullptr;
};

struct Storage {
  enum class Kind : uint8_t {
    Param,     // a graph input (index: parameter number)
    Constant,  // a constant materialised at compile time (index: into Plan::constants)
    Output,    // holds a graph output: allocated per run, handed to the caller
    Pool,      // an intermediate (index: its pooled buffer)
    Dynamic,   // a control op's result, bound to the buffer its subgraph returns
    Fresh,     // an `empty` value: a zero-filled buffer allocated per run, not pooled (a loop may take it over)
    View,      // a contiguous window of another storage's buffer, placed by a View step at run time
  };
  Kind kind;
  int index = -1;
  size_t nbytes = 0;
};

// A fused step's operand read, or result written, in a window of a larger buffer that start
// indices place at run time: a dynamic_slice read in place, a dynamic_update_slice written in
// place. The CPU's executor places them (CUDA's plans have none); the kernel sees a contiguous array.
struct StepWindow {
  bool output = false;      // the window of outputs[index], else of inputs[index]
  int index = -1;
  Shape whole, part;        // the buffer's shape and the window's (contiguous_window holds)
  size_t elem = 0;          // bytes per element
  std::vector<int> starts;  // per dim of `whole`: the index into the step's inputs of its start
  int same_as = -1;         // an earlier window of the step placed alike (its offset serves)
};

struct Step {
  // View: a dynamic_slice whose window is contiguous, read in place (inputs: operand, start indices).
  enum class Kind : uint8_t { Fused, Kernel, Cond, While, Callback, View };
  Kind kind;
  std::vector<int> nodes;    // the graph nodes it computes
  std::vector<int> inputs;   // values read (a fused step: its program's inputs, in order)
  std::vector<int> outputs;  // values written (a fused step: its program's outputs, in order)
  std::shared_ptr<const FusedKernelSpec> spec;  // a fused step: what it computes
  OpId op = OpId::kCount;                       // any other step: its node's op
  Attrs attrs;
  std::vector<std::shared_ptr<Executable>> subs;  // cond branches; while (cond, body)
  std::vector<char> consumed;  // while: per input, read here for the last time (the loop takes its buffer)
  CountedLoop counted;         // while: its condition when recognize_counted_loop finds one
  std::vector<StepWindow> windows;  // fused: operands and results in windows (their starts are inputs too)
  int64_t work = 0;                               // elements touched, for the inline decision
};

struct Plan {
  std::vector<TypeInfo> value_type;  // per value: (node, result) numbered by value_base
  std::vector<int> value_storage;    // per value: its storage, -1 when it lives only in tiles
  std::vector<int> value_base;       // per node: the id of its first result
  std::vector<Storage> storages;
  std::vector<Array> constants;
  std::vector<size_t> pool;          // sizes of the pooled buffers
  std::vector<int> reused_in_place;  // per storage: the storage whose buffer it overwrites, or -1
  std::vector<int> donated;          // parameters whose buffers the plan overwrites (donate_params)
  std::vector<Step> steps;
  std::vector<int> outputs;          // value ids of the graph outputs
  int64_t work = 0;
  bool has_effects = false;  // host callbacks somewhere (in subplans too): runs inline when it can

  int value(ValueRef v) const { return value_base[v.node] + v.index; }
  int num_kernels() const;  // fused and single-op kernel steps
  // The steps and storages, one a line; with `cpu`, each fused step's CPU program too.
  std::string text(const Graph& g, const CpuPlan* cpu = nullptr) const;
};

// Builds the plan of an optimised graph (subgraphs of control ops are compiled with `options`):
// its steps and storages, not yet its buffers (plan_buffers, once a backend has lowered it).
Plan build_plan(const Graph& g, const CompileOptions& options);
// Assigns the Pool storages to pooled buffers, and values to the buffers they may overwrite in
// place (plan_buffers.cpp). A step writes over an operand only where its lowering (`cpu`) allows;
// without one (a plan the CPU does not run), never.
void plan_buffers(Plan& plan, bool reuse, bool donate_params, const CpuPlan* cpu);
// Whether the Executable runs plans compiled with `options` (on the CPU); else another backend
// lowers them (the CUDA backend, from options.caps).
bool runs_on_cpu(const CompileOptions& options);

}  // namespace xjax
