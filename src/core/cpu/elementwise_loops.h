// Elementwise "tile loops": one plain function per (op, input dtypes, attributes) that computes the
// op over n contiguous elements. The eager kernels split arrays over threads and call these per
// chunk; the fused-kernel engine runs several of them over L1-sized tiles.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

// inputs[i] points at n contiguous elements of operand i (in the op's operand order), out at n
// elements of the result. No operand is broadcast: a 0-d bound of clamp or a 0-d `which` of
// select_n must be expanded to n elements by the caller (per tile). `out` may be one of the
// inputs when their element sizes are equal (each element is read before it is written). Loops
// are pure and thread-safe; n may be 0.
using ElementwiseLoop = void (*)(const void* const* inputs, void* out, int64_t n);

// Loops exist for integer_pow with |y| <= kMaxLoopPow and select_n with at most kMaxSelectCases
// cases; beyond that elementwise_loop returns nullptr and the eager kernel uses a slower path.
constexpr int64_t kMaxLoopPow = 8;
constexpr int kMaxSelectCases = 8;

// The loop of `op` for operands of in_dtypes producing out_dtype, or nullptr when there is none
// (a combination the op's shape rule rejects, or one of the limits above). Attributes are read
// as the shape rule validated them (integer_pow's `y`, round's `rounding_method`); select_n's
// in_dtypes are {which, case, case, ...}.
ElementwiseLoop elementwise_loop(OpId op, const std::vector<DType>& in_dtypes, DType out_dtype, const Attrs& attrs);

// Runs an elementwise op eagerly: splits the result over the thread pool, expands 0-d operands
// of clamp/select_n per tile. Used by the registered CPU kernels.
void run_elementwise(OpId op, const std::vector<Tensor>& in, const Tensor& out, const Attrs& attrs);

}  // namespace xjax
