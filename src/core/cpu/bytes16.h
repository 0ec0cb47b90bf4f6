// The 16-byte element (complex128) of the kernels that only move bytes (copies, transposes,
// gathers, selects, fills): they switch on the element size and take this type for 16.
#pragma once
#include <cstdint>

namespace xjax {

struct __attribute__((may_alias)) Bytes16 {
  uint64_t lo, hi;
};
static_assert(sizeof(Bytes16) == 16, "complex128's size");

}  // namespace xjax
