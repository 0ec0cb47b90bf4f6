// Checked array sizes: the one place that turns a shape and dtype into element and byte counts
// that are known not to overflow. Every shape that enters the core goes through it (graph
// parameters, constants, the result of every shape rule, Array, buffers crossing the bindings).
#pragma once
#include <string>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/shape.h"

namespace xjax {

// The largest byte size of any array (and so its element count): 2^62. Byte offsets, strides,
// and the sum of two sizes then all fit in int64 without a check at the point of use.
constexpr int64_t kMaxArrayBytes = int64_t(1) << 62;

struct ArraySize {
  int64_t elements = 0;
  int64_t bytes = 0;
};

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_size_error(const Shape& shape, DType dtype, const char* api,
                                                                     const char* why) {
  throw ValueError(std::string("[") + api + "] " + dtype_name(dtype) + shape_str(shape) + why);
}

// The element and byte counts of an array of `shape` and `dtype`. Throws ValueError starting with
// "[api] " and naming dtype and shape when a dimension is negative or when the product of the
// nonzero dimensions times the item size exceeds kMaxArrayBytes (zero dimensions are not allowed
// to hide an overflow: the strides of the other dimensions must still fit).
inline ArraySize checked_size(const Shape& shape, DType dtype, const char* api) {
  const int64_t item = int64_t(itemsize(dtype));
  int64_t span = item;  // bytes of the nonzero dimensions
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) throw_size_error(shape, dtype, api, " has a negative dimension");
    if (d == 0) {
      empty = true;
      continue;
    }
    if (d > kMaxArrayBytes / span)
      throw_size_error(shape, dtype, api, " is too large: it needs more than 2^62 bytes");
    span *= d;
  }
  if (empty) return {0, 0};
  return {span / item, span};
}

}  // namespace xjax
