// Shapes: up to any rank, 64-bit extents.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"

namespace xjax {

using Shape = std::vector<int64_t>;

inline std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    out += std::to_string(s[i]);
    if (s.size() == 1 || i + 1 < s.size()) out += ",";
    if (i + 1 < s.size()) out += " ";
  }
  return out + ")";
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_numel_overflow(const Shape& s) {
  throw ValueError("shape " + shape_str(s) + " has too many elements");
}

// The element count. Shapes in the core were checked by checked_size (core/size.h); an
// unchecked one that overflows int64 still raises here rather than wrapping.
inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : s) overflow |= __builtin_mul_overflow(n, d, &n);
  if (__builtin_expect(overflow, 0)) {
    for (int64_t d : s)
      if (d == 0) return 0;
    throw_numel_overflow(s);
  }
  return n;
}

// Row-major strides in elements.
inline std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) { st[i] = acc; acc *= s[i]; }
  return st;
}

}  // namespace xjax
