// The reference interpreter: runs a graph op by op, one element at a time, in double (floats)
// or 64-bit integers. It defines what a graph means; the fused kernels are tested against it.
// Elementwise ops (except the integer division family, the special functions and the bit
// counting ops), broadcast_in_dim, reshape and the reductions over axes have their own plain
// loops here; the other ops run their single-op CPU kernels. Control flow and callbacks recurse.
#pragma once
#include <vector>

#include "core/array.h"
#include "core/graph.h"

namespace xjax {

// Runs g on ready inputs, synchronously; returns fresh output arrays.
std::vector<Array> reference_run(const Graph& g, const std::vector<Array>& inputs);

}  // namespace xjax
