// Where a dynamic_slice's (or dynamic_update_slice's) window lies in its operand, from start
// indices clamped as XLA does. Shared by the planner (a contiguous window is read in place, as a
// view), the executor (which places such views) and the CPU kernels.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/ops/ops.h"

namespace xjax {

// Reads a 0-d integer start index; values beyond int64 saturate (they are clamped anyway).
inline int64_t read_index(const Tensor& t) {
  switch (t.dtype) {
    case DType::Int8: return *t.as<int8_t>();
    case DType::Int16: return *t.as<int16_t>();
    case DType::Int32: return *t.as<int32_t>();
    case DType::Int64: return *t.as<int64_t>();
    case DType::UInt8: return *t.as<uint8_t>();
    case DType::UInt16: return *t.as<uint16_t>();
    case DType::UInt32: return *t.as<uint32_t>();
    case DType::UInt64:
      return int64_t(std::min<uint64_t>(*t.as<uint64_t>(), uint64_t(std::numeric_limits<int64_t>::max())));
    default: return 0;  // the shape rule admits only integers
  }
}

// XLA clamps dynamic starts so the window [start, start + size) lies inside [0, dim).
inline int64_t clamp_start(int64_t start, int64_t dim, int64_t size) {
  return std::clamp<int64_t>(start, 0, dim - size);
}

// Whether a window of shape `part` of an array of shape `whole` is one contiguous run wherever it
// starts: leading dims of size 1, then one partial dim, then whole dims (a scan's row).
bool contiguous_window(const Shape& whole, const Shape& part);
// The element offset of that window at the dynamic start indices `starts` (0-d integer tensors, one
// per dim), clamped into range as XLA does.
int64_t window_offset(const Shape& whole, const Shape& part, const Tensor* starts);

}  // namespace xjax
