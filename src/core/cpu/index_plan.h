// The pieces shared by the gather and scatter kernels: where each window starts in the operand
// (decoded from the indices by the StartPlan, ops/index_starts.h), how a window splits into
// contiguous runs, and a transpose copy.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/ops/index_starts.h"

namespace xjax {

// An index value as int64 (uint64 ones saturate: such a start is out of bounds anyway).
template <typename I>
inline int64_t index_as_int64(I v) {
  if constexpr (std::is_same_v<I, uint64_t>)
    return v > uint64_t(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max() : int64_t(v);
  else
    return int64_t(v);
}

// Writes the flat operand offset of the windows [b0, b1), or -1 for a window that is dropped.
void compute_starts(const StartPlan& p, const Tensor& indices, int64_t b0, int64_t b1, int64_t* out);

// A window of the operand as `outer` strided steps over runs of `run` contiguous elements.
struct BlockPlan {
  int64_t run = 0;    // contiguous elements per step
  int64_t count = 0;  // elements in the window
  int64_t span = 0;   // distance from the first to one past the last element
  std::vector<int64_t> size, stride;  // the outer dims (sizes > 1), outermost first
};

BlockPlan make_block_plan(const Shape& operand, const std::vector<int64_t>& window);

// Calls f(offset) at the start of each run of the window at `base`, in row-major order.
template <typename F>
void for_each_run(const BlockPlan& p, int64_t base, F&& f) {
  const size_t nd = p.size.size();
  if (nd == 0) { f(base); return; }
  if (nd == 1) {
    for (int64_t i = 0; i < p.size[0]; ++i) f(base + i * p.stride[0]);
    return;
  }
  int64_t local[16];
  std::vector<int64_t> heap;
  int64_t* idx = local;
  if (nd > 16) { heap.assign(nd, 0); idx = heap.data(); }
  for (size_t d = 0; d < nd; ++d) idx[d] = 0;
  const int64_t inner = p.size[nd - 1], inner_stride = p.stride[nd - 1];
  int64_t off = base;
  for (;;) {
    for (int64_t i = 0; i < inner; ++i) f(off + i * inner_stride);
    size_t d = nd - 1;  // odometer over the dims outside the innermost
    for (;;) {
      if (d == 0) return;
      --d;
      off += p.stride[d];
      if (++idx[d] < p.size[d]) break;
      off -= p.stride[d] * p.size[d];
      idx[d] = 0;
    }
  }
}

// dst = src transposed so that dst dim i is src dim perm[i]; esize is the element size in bytes.
void permute_copy(const void* src, const Shape& src_shape, const std::vector<int64_t>& perm, void* dst, size_t esize);

// Copies n bytes in parallel chunks.
void parallel_memcpy(void* dst, const void* src, size_t n);

}  // namespace xjax
