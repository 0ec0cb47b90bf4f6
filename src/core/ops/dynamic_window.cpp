#include "core/ops/dynamic_window.h"

namespace xjax {

bool contiguous_window(const Shape& whole, const Shape& part) {
  const size_t rank = whole.size();
  size_t first = 0;  // the first dim of the window with more than one element
  while (first < rank && part[first] == 1) ++first;
  for (size_t i = first + 1; i < rank; ++i)
    if (part[i] != whole[i]) return false;
  return true;
}

int64_t window_offset(const Shape& whole, const Shape& part, const Tensor* starts) {
  int64_t offset = 0, stride = 1;
  for (size_t i = whole.size(); i-- > 0;) {
    offset += clamp_start(read_index(starts[i]), whole[i], part[i]) * stride;
    stride *= whole[i];
  }
  return offset;
}

}  // namespace xjax
