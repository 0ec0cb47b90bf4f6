// The gather kernel. Slices are copied as contiguous runs (one memcpy per row for the common
// "take whole rows" pattern) into the layout [batch dims..., offset dims...]; when offset_dims
// are not the trailing output dims, a transpose puts them in place.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/cpu/bytes16.h"
#include "core/cpu/index_kernels.h"
#include "core/cpu/index_plan.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

// U: an unsigned type of the element's size (gather only moves bytes).
template <typename U>
void gather_slices(const Tensor& operand, const Tensor& indices, const StartPlan& sp, const BlockPlan& bp,
                   U* dst, const void* fill_bytes) {
  const U* src = static_cast<const U*>(operand.data);
  U fill;
  std::memcpy(&fill, fill_bytes, sizeof(U));
  const int64_t count = bp.count, run = bp.run;
  constexpr int64_t kBlock = 256;  // starts decoded per step, kept in L1
  parallel_for(sp.batches, std::max<int64_t>(1, 32768 / std::max<int64_t>(count, 1)), [&](int64_t b0, int64_t b1) {
    int64_t starts[kBlock];
    for (int64_t s = b0; s < b1; s += kBlock) {
      const int64_t n = std::min(kBlock, b1 - s);
      compute_starts(sp, indices, s, s + n, starts);
      if (bp.size.empty() && run == 1) {  // one element per slice
        U* o = dst + s;
        for (int64_t j = 0; j < n; ++j) o[j] = starts[j] < 0 ? fill : src[starts[j]];
        continue;
      }
      for (int64_t j = 0; j < n; ++j) {
        U* o = dst + (s + j) * count;
        if (starts[j] < 0) {
          std::fill(o, o + count, fill);
        } else if (run == 1) {
          for_each_run(bp, starts[j], [&](int64_t off) { *o++ = src[off]; });
        } else {
          for_each_run(bp, starts[j], [&](int64_t off) {
            std::memcpy(o, src + off, size_t(run) * sizeof(U));
            o += run;
          });
        }
      }
    }
  });
}

}  // namespace

void gather_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& operand = in[0];
  const Tensor& indices = in[1];
  const Tensor& result = out[0];
  if (result.size() == 0) return;
  GatherDims d = gather_dims(OpId::gather_, attrs);
  const IndexMode mode = d.mode == IndexMode::Fill ? IndexMode::Fill : IndexMode::Clip;
  StartPlan sp = make_start_plan(operand.shape, indices.shape, d.start_index_map, d.slice_sizes,
                                 d.operand_batching_dims, d.start_indices_batching_dims, mode);
  BlockPlan bp = make_block_plan(operand.shape, d.slice_sizes);
  const size_t es = itemsize(operand.dtype);
  alignas(16) unsigned char fill[16];
  fill_element(attrs, operand.dtype, fill);

  // The gathered layout is [batch dims..., offset dims...]; perm maps output dims onto it.
  const int64_t out_rank = int64_t(result.shape.size()), num_offset = int64_t(d.offset_dims.size());
  const int64_t batch_rank = out_rank - num_offset;
  Shape gathered;
  std::vector<int64_t> perm(static_cast<size_t>(out_rank));
  bool trailing = true;
  for (int64_t i = 0, nb = 0, no = 0; i < out_rank; ++i) {
    bool is_offset = no < num_offset && d.offset_dims[no] == i;
    perm[i] = is_offset ? batch_rank + no++ : nb++;
    trailing = trailing && perm[i] == i;
  }
  for (int64_t i = 0; i < out_rank; ++i)
    if (perm[i] < batch_rank) gathered.push_back(result.shape[i]);
  for (int64_t i = 0; i < out_rank; ++i)
    if (perm[i] >= batch_rank) gathered.push_back(result.shape[i]);

  std::unique_ptr<uint8_t[]> temp(trailing ? nullptr : new uint8_t[size_t(result.size()) * es]);
  void* dst = trailing ? result.data : temp.get();
  switch (es) {
    case 1: gather_slices(operand, indices, sp, bp, static_cast<uint8_t*>(dst), fill); break;
    case 2: gather_slices(operand, indices, sp, bp, static_cast<uint16_t*>(dst), fill); break;
    case 4: gather_slices(operand, indices, sp, bp, static_cast<uint32_t*>(dst), fill); break;
    case 8: gather_slices(operand, indices, sp, bp, static_cast<uint64_t*>(dst), fill); break;
    default: gather_slices(operand, indices, sp, bp, static_cast<Bytes16*>(dst), fill); break;
  }
  if (!trailing) {
    // Output dim i is gathered dim perm[i].
    permute_copy(temp.get(), gathered, perm, result.data, es);
  }
}

}  // namespace xjax
