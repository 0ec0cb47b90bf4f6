// A graph compiled for CUDA up to its kernels: the graph passes, fusion with the CUDA
// capabilities (cuda_caps), and a fused kernel plan for every fused group. The groups that are not
// fused come back as their op, for generate_kernel (kernel.h) or the backend's own rule (matmul,
// sort, control flow). Values are numbered as the CPU plan numbers them (Plan::value_base).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/cuda/kernel.h"
#include "core/graph.h"

namespace xjax::cuda {

struct GraphGroup {
  bool fused = false;
  KernelPlan plan;          // fused: its kernels (in<i>: inputs[i], out<i>: outputs[i])
  std::string description;  // fused: the kernel spec, FusedKernelSpec::describe()
  int node = -1;            // not fused: the graph node it runs
  std::vector<int> inputs, outputs;  // value ids
};

struct GraphKernels {
  Graph graph;                          // after the passes
  std::vector<GraphGroup> groups;       // in execution order
  std::vector<int> parameters;          // per graph parameter, its value id
  std::vector<int> outputs;             // per graph output, its value id
  std::map<int, std::string> constants;  // value id -> bytes, for every constant some group reads
  std::vector<TypeInfo> value_types;    // per value id
};

// Compiles `graph` (every default pass) and generates a kernel for every fused group.
GraphKernels fused_graph_kernels(const Graph& graph);

}  // namespace xjax::cuda
