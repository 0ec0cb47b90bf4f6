// The strided-copy engine under every layout kernel: dst[i...] = src[sum(i_k * src_strides[k])].
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace xjax {

struct Tensor;

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

// Whether a window of shape `part` of an array of shape `whole` is one contiguous run wherever it
// starts: leading dims of size 1, then one partial dim, then whole dims (a scan's row).
bool contiguous_window(const Shape& whole, const Shape& part);
// The element offset of that window at the dynamic start indices `starts` (0-d integer tensors, one
// per dim), clamped into range as XLA does.
int64_t window_offset(const Shape& whole, const Shape& part, const Tensor* starts);

}  // namespace xjax
