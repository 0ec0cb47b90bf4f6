// The fusion pass: partitions a graph's nodes into groups, each run as one step. The op kind
// (ops.h) and the backend's capabilities (BackendCaps, backend.h) decide what may fuse:
// Elementwise ops over one index space form a group, Broadcast ops (reshape, broadcast_in_dim)
// and static slices are folded into their consumers' loads as index maps, and a group may end in
// Reductions over a common (kept, reduced, kept) split of its space. Every other node is a group
// of its own. A fused group is described for the backends by a FusedKernelSpec (kernel_spec.h).
#pragma once
#include <vector>

#include "core/compiler/backend.h"
#include "core/graph.h"
#include "core/ops/red_op.h"

namespace xjax {

// How a consumer sees a value through a chain of views (Broadcast ops and static slices): element
// i of the value is element offset(i) of `root`. flat: offset(i) = i (reshapes only). Otherwise
// the value is indexed over `space`; its dim d reads root dim dims[d] (-1: broadcast) at
// coordinate start[dims[d]] + step[d] * (coordinate along d), and root dims no space dim reads
// are at coordinate start[...] (a slice of one index).
struct Resolved {
  ValueRef root;
  bool flat = true;
  Shape space;
  std::vector<int> dims;
  std::vector<int64_t> step;   // per dim of space
  std::vector<int64_t> start;  // per dim of root
  // Strides into the root's contiguous layout, one per dim of `space` (not flat only).
  std::vector<int64_t> strides(const Shape& root_shape) const;
  // Where element 0 is in the root's contiguous layout (not flat only).
  int64_t offset(const Shape& root_shape) const;
};
// Whether consumers may read through node `node` as an index map: Broadcast ops and slices.
bool is_view(const Graph& g, int node);
Resolved resolve(const Graph& g, ValueRef v);

// A reduction's index space as (k0, r, k1) with r reduced; false when its axes interleave more.
bool reduction_split(const Shape& shape, const std::vector<int64_t>& axes, int64_t& k0, int64_t& r, int64_t& k1);
// The reduction loops' op for a reduce_* node; false for other ops (argmax, ...).
bool reduction_op(OpId op, RedOp& out);
// Whether a fused kernel computes v itself as it reads it: an iota read through reshapes only
// (its values are then the flat indices' coordinates along its dimension).
bool generated_in_kernel(const Graph& g, const Resolved& v);
// Whether a fused kernel of the backend described by caps can compute node n: an elementwise op
// or a reduction over a (k0, r, k1) split, with one result.
bool fusible(const Graph& g, const Node& n, const BackendCaps& caps);

struct FusionGroup {
  std::vector<int> nodes;  // in topological order
  bool fused = false;      // a fused kernel; else one node run by its own rule
};

struct Fusion {
  std::vector<FusionGroup> groups;  // in execution order
  std::vector<int> group_of;        // per node; -1: a source or a view folded into its consumers
  std::vector<bool> materialized;   // per node: its results are held in buffers
};

// Whether node n is a dynamic_update_slice that a fused kernel may compute as a store into a
// window of its operand's buffer (Step::windows, plan.h): a contiguous window, over a parameter
// that nothing else reads. (The caller must hand over the parameter's buffer: a loop body.)
bool windowed_update(const Graph& g, int n);

// Groups g's nodes for the backend described by caps; with enabled = false every node that
// computes is its own group. `windowed_updates`: such updates fuse (the CPU executor places
// windows, in a graph whose parameters are donated).
Fusion fuse(const Graph& g, bool enabled = true, const BackendCaps& caps = cpu_caps(), bool windowed_updates = false);

}  // namespace xjax
