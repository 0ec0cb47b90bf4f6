// Faster tile loops for the fused engine's most common steps (see fused_loops.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/cpu/elementwise_loops.h"

namespace xjax {

// The loop of op over operands of in_dtypes, or nullptr when there is no specialised one (use
// elementwise_loop). Bit k of `scalars` says operand k is one value: the loop reads its element 0
// only (the rest of its tile need not hold it).
ElementwiseLoop fused_loop(OpId op, const std::vector<DType>& in_dtypes, DType out_dtype, unsigned scalars);

// select_n(cmp(a, b), c0, c1) as one loop over (a, b, c0, c1), all of dtype dt (b one value when
// scalar_b), or nullptr when there is none for cmp and dt. scale 1 or 2 (float32, float64): that
// multiplied by a one-value operand s, the loop's fifth, as s * select or select * s.
ElementwiseLoop fused_select_loop(OpId cmp, DType dt, bool scalar_b, int scale = 0);

// dst[i] = start + i in U's width (wrapping), i < n: an iota's plain count (the counters of random
// draws), compiled per instruction set.
void count_up(uint8_t* dst, uint8_t start, int64_t n);
void count_up(uint16_t* dst, uint16_t start, int64_t n);
void count_up(uint32_t* dst, uint32_t start, int64_t n);
void count_up(uint64_t* dst, uint64_t start, int64_t n);

// threefry2x32 followed by the xor of its two result words (uint32 out): what 32-bit random bits
// compute, as one loop (key operands read once when scalar_keys). In elementwise_random.cpp.
namespace ew {
ElementwiseLoop threefry_xor_loop(bool scalar_keys);
}

}  // namespace xjax
