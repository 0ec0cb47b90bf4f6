// Shapes: up to any rank, 64-bit extents.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace xjax {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Row-major strides in elements.
inline std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) { st[i] = acc; acc *= s[i]; }
  return st;
}

inline std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    out += std::to_string(s[i]);
    if (s.size() == 1 || i + 1 < s.size()) out += ",";
    if (i + 1 < s.size()) out += " ";
  }
  return out + ")";
}

}  // namespace xjax
