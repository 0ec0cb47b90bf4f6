// The reductions a fused kernel can fold into (reduce_sum, ...): backend-neutral, shared by the
// kernel spec, the CPU reduction loops and the CUDA generator.
#pragma once
#include <cstdint>

namespace xjax {

enum class RedOp : uint8_t { Sum, Prod, Max, Min, And, Or, Xor };

inline const char* red_op_name(RedOp op) {
  static const char* names[] = {"sum", "prod", "max", "min", "and", "or", "xor"};
  return names[int(op)];
}

}  // namespace xjax
