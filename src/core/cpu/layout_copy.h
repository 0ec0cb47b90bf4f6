// The strided-copy engine under every layout kernel: dst[i...] = src[sum(i_k * src_strides[k])].
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace xjax {

// Copies `shape` elements of `esize` bytes (1, 2, 4 or 8). Strides are in elements; src strides
// may be 0 (broadcast) or negative (rev); src and dst point at the element of index (0, ..., 0).
// Adjacent dimensions that stay contiguous are collapsed first; contiguous inner runs become
// memcpy, broadcast inner runs become fills, and transposes are copied in cache-sized tiles.
// Large copies run on the thread pool.
void strided_copy(size_t esize, const void* src, const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides, const Shape& shape);

// Contiguous copy of n elements (parallel when large).
void contiguous_copy(size_t esize, const void* src, void* dst, int64_t n);

// Sets n contiguous elements to *value.
void fill_elements(size_t esize, void* dst, const void* value, int64_t n);

}  // namespace xjax
