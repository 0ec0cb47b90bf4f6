// The GPU plan of a graph: what the Python CUDA executor (python/xjax/_src/backends/cuda.py) runs.
// The graph is compiled as for the CPU (the same passes and plan builder) but fused with the CUDA
// capabilities; then every step gets its GPU form: generated CUDA (fused groups, and the ops with a
// kernel in kernel.h), a library call that Python makes through CuPy (dot_general on cuBLAS, sort,
// top_k; conv_general_dilated as a generated im2col then a cuBLAS GEMM), control flow over subplans,
// or a host callback. An op with none of these is an error naming it, here, at compile time.
//
// Values are numbered as in the CPU plan; each value that lives in memory has a storage, and
// values sharing a storage (reshapes, optimization barriers) share the bytes. Storages are
// parameters, constants (their bytes are in the plan), `empty` values (allocated per run), or
// written by a step (allocated by it).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/cuda/kernel.h"
#include "core/graph.h"

namespace xjax::cuda {

struct GpuPlan;

struct GpuStep {
  enum class Kind : uint8_t {
    Fused,     // kernel: a fused group's generated CUDA
    Kernel,    // kernel: one op's generated CUDA (kernel.h)
    Library,   // `op` with `attrs` run through CuPy; conv_general_dilated's kernel is its im2col
    Cond,      // inputs: branch index, operands; subs: the branches
    While,     // inputs: the carried values; subs: (cond, body)
    Callback,  // host_callback: attrs hold callback_id
  };
  Kind kind;
  std::string op;  // the op computed (a fused step: its last node's op)
  Attrs attrs;
  std::vector<int> inputs, outputs;  // value ids (a fused or kernel step: in<i>, out<i> of its kernel)
  bool has_kernel = false;
  KernelPlan kernel;
  std::vector<std::shared_ptr<const GpuPlan>> subs;
};

struct GpuStorage {
  // Fresh: an `empty` value, allocated (uninitialised) per run; Computed: written by a step.
  enum class Kind : uint8_t { Param, Constant, Fresh, Computed };
  Kind kind;
  int index = -1;  // Param: the parameter's number; Constant: into GpuPlan::constants
};

struct GpuPlan {
  std::vector<TypeInfo> value_type;   // per value
  std::vector<int> value_storage;     // per value; -1: lives only inside a fused kernel
  std::vector<GpuStorage> storages;
  std::vector<Array> constants;
  std::vector<TypeInfo> param_types;  // per parameter
  std::vector<GpuStep> steps;
  std::vector<int> outputs;           // value ids of the graph's outputs
};

// Compiles g for the GPU (default passes, CUDA fusion). Throws NoKernelError naming an op that
// has no GPU route.
GpuPlan gpu_plan(const Graph& g);

// The ops Python runs through CuPy (cuBLAS, CuPy's sort).
bool is_library_op(OpId op);

}  // namespace xjax::cuda
