// Where gather and scatter windows start in the operand, planned from the shapes and dimension
// numbers alone (any backend decodes the indices with it: the CPU kernels, the CUDA generators),
// and gather's fill value.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ops/index_dims.h"

namespace xjax {

// Turns the index vectors into flat operand offsets.
struct StartPlan {
  int64_t batches = 0;              // number of index vectors (all indices dims but the last)
  int64_t depth = 0;                // length of an index vector
  std::vector<int64_t> stride, hi;  // per component: operand stride, largest in-bounds start
  struct Batching { int64_t div, size, stride; };  // batch coordinate = (b / div) % size
  std::vector<Batching> batching;
  bool clip = false;                // clamp starts; otherwise an out-of-bounds start gives -1
  bool none_fit = false;            // some window is larger than its operand dim: all dropped
};

StartPlan make_start_plan(const Shape& operand, const Shape& indices, const std::vector<int64_t>& start_map,
                          const std::vector<int64_t>& window, const std::vector<int64_t>& operand_batching,
                          const std::vector<int64_t>& indices_batching, IndexMode mode);

// gather's fill value (attribute 'fill_value', else JAX's default) as the bits of an element of
// dtype dt, converted as NumPy would: integers wrap, floats saturate into integers, NaN gives 0.
uint64_t fill_bits(const Attrs& attrs, DType dt);
// The same as itemsize(dt) bytes at `out`, for every dtype (a complex one: the value as its real part).
void fill_element(const Attrs& attrs, DType dt, void* out);

}  // namespace xjax
