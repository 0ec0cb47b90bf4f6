// The dimension numbers of gather and scatter (XLA's, with the index vector as the last dimension
// of the indices), read from an op's attributes. Shared by the shape rules and the CPU kernels.
#pragma once
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

// How out-of-range start indices behave: clamped, or filled (gather) / dropped (scatter).
// PromiseInBounds gets XLA's native behaviour, which never touches memory out of bounds:
// gather clamps (as Clip), scatter drops (as Fill).
enum class IndexMode { Clip, Fill, PromiseInBounds };

struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims, slice_sizes;
  IndexMode mode = IndexMode::Fill;
};

struct ScatterDims {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  std::vector<int64_t> operand_batching_dims, scatter_indices_batching_dims;
  IndexMode mode = IndexMode::Fill;
};

// Read the attributes; a missing or mistyped one raises ValueError naming the op. The values
// themselves are checked by the shape rules (register_index_infer), not here.
GatherDims gather_dims(OpId op, const Attrs& attrs);
ScatterDims scatter_dims(OpId op, const Attrs& attrs);

// Where each scatter window lies in the operand: the window size along every operand dimension
// (1 for inserted and batching dimensions).
std::vector<int64_t> scatter_window_sizes(const ScatterDims& d, const Shape& operand, const Shape& updates);

}  // namespace xjax
