// fused_graph_kernels: the passes, fusion for CUDA, a kernel per fused group.
#include "core/cuda/fused_graph.h"

#include <algorithm>

#include "core/compiler/constant.h"
#include "core/compiler/fusion.h"
#include "core/compiler/kernel_spec.h"
#include "core/compiler/passes.h"
#include "core/cuda/fused.h"
#include "core/cuda/kernel.h"

namespace xjax::cuda {

GraphKernels fused_graph_kernels(const Graph& graph) {
  refuse_float8(graph);
  GraphKernels out;
  out.graph = run_passes(graph, default_passes());
  const Graph& g = out.graph;
  const auto& nodes = g.nodes();
  std::vector<int> value_base(nodes.size() + 1, 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    value_base[i + 1] = value_base[i] + int(nodes[i].outputs.size());
    for (const TypeInfo& t : nodes[i].outputs) out.value_types.push_back(t);
  }
  auto value = [&](ValueRef v) { return value_base[v.node] + v.index; };
  auto note_constant = [&](int v) {  // the bytes of value v when a constant node holds it
    const int node = int(std::upper_bound(value_base.begin(), value_base.end(), v) - value_base.begin()) - 1;
    if (nodes[node].op != OpId::constant_ || out.constants.count(v)) return;
    std::string bytes(size_t(numel(out.value_types[v].shape)) * itemsize(out.value_types[v].dtype), '\0');
    constant_fill(nodes[node], bytes.data());
    out.constants[v] = std::move(bytes);
  };
  Fusion fusion = fuse(g, true, cuda_caps());
  // Fusion leaves a lone node that reads its operands directly to the op's own kernel. The GPU
  // has none for elementwise ops, and its fused reductions pick their tiling from the (k0, r, k1)
  // split: every fusible node runs as a fused kernel.
  for (FusionGroup& group : fusion.groups)
    if (!group.fused && group.nodes.size() == 1 && fusible(g, nodes[group.nodes[0]], cuda_caps())) group.fused = true;
  for (size_t gi = 0; gi < fusion.groups.size(); ++gi) {
    const FusionGroup& group = fusion.groups[gi];
    GraphGroup gg;
    gg.fused = group.fused;
    if (group.fused) {
      const FusedKernelSpec spec = build_kernel_spec(g, fusion, int(gi), value_base);
      gg.plan = fused_kernel(spec);
      gg.description = spec.describe();
      gg.inputs = spec.inputs;
      gg.outputs = spec.outputs;
    } else {
      gg.node = group.nodes[0];
      const Node& n = nodes[gg.node];
      for (ValueRef v : n.inputs) gg.inputs.push_back(value(v));
      for (size_t r = 0; r < n.outputs.size(); ++r) gg.outputs.push_back(value_base[gg.node] + int(r));
    }
    for (int v : gg.inputs) note_constant(v);
    out.groups.push_back(std::move(gg));
  }
  for (int p : g.parameters()) out.parameters.push_back(value_base[p]);
  for (ValueRef v : g.outputs()) out.outputs.push_back(value(v));
  for (int v : out.outputs) note_constant(v);
  return out;
}

}  // namespace xjax::cuda
