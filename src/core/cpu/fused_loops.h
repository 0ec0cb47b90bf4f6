// Faster tile loops for the fused engine's most common steps (see fused_loops.cpp).
#pragma once
#include <vector>

#include "core/cpu/elementwise_loops.h"

namespace xjax {

// The loop of op over operands of in_dtypes, or nullptr when there is no specialised one (use
// elementwise_loop). Bit k of `scalars` says operand k is one value: the loop reads its element 0
// only (the rest of its tile need not hold it).
ElementwiseLoop fused_loop(OpId op, const std::vector<DType>& in_dtypes, DType out_dtype, unsigned scalars);

}  // namespace xjax
