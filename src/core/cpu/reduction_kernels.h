// The reduction family's CPU kernels, shared between its files (registered in reduction.cpp).
#pragma once
#include <vector>

#include "core/cpu/reduction_loops.h"
#include "core/ops/ops.h"

namespace xjax {

// Reduces `in` over `axes` (checked: unique, in range) into the preallocated `out`.
void reduce_axes(RedOp op, const Tensor& in, const Tensor& out, const std::vector<int64_t>& axes);

// argmax/argmin (reduction_arg.cpp) and the scans (cumulative.cpp).
void argmax_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void argmin_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void cumsum_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void cumprod_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void cummax_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void cummin_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);
void cumlogsumexp_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

}  // namespace xjax
