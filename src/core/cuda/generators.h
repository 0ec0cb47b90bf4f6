// The per-family CUDA generators behind generate_kernel (kernel.cpp dispatches to them). Each gets
// the operand types, the result types (from the op's shape rule, which already checked every
// attribute) and the attributes.
#pragma once
#include <string>
#include <vector>

#include "core/cuda/source.h"

namespace xjax::cuda {

using Types = std::vector<TypeInfo>;

// A kernel's opening line: extern "C" __global__ void name(params...) {
std::string kernel_head(const std::string& name, const std::vector<std::string>& params);
// "const T* __restrict__ inI" / "T* __restrict__ outI" declarations.
std::string in_param(DType dt, int i, bool bits = false);
std::string out_param(DType dt, int i, bool bits = false);
// A plan whose source starts with the prelude (index width from the element counts).
KernelPlan start_plan(const Types& out, const std::vector<int64_t>& counts);

// layout.cpp
KernelPlan gen_transpose(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_copy(OpId op, const Types& in, const Types& out, const Attrs& attrs);  // reshape
KernelPlan gen_broadcast_in_dim(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_slice(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_pad(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_concatenate(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_rev(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_dynamic_slice(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_dynamic_update_slice(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_iota(const Types& in, const Types& out, const Attrs& attrs);
// reduce.cpp
KernelPlan gen_reduce(OpId op, const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_arg_reduce(OpId op, const Types& in, const Types& out, const Attrs& attrs);
// cumulative.cpp
KernelPlan gen_cumulative(OpId op, const Types& in, const Types& out, const Attrs& attrs);
// index.cpp
KernelPlan gen_gather(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_scatter(OpId op, const Types& in, const Types& out, const Attrs& attrs);
// window.cpp
KernelPlan gen_reduce_window(OpId op, const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_select_and_scatter_add(const Types& in, const Types& out, const Attrs& attrs);
KernelPlan gen_select_and_gather_add(const Types& in, const Types& out, const Attrs& attrs);
// im2col.cpp: not an op; the patches of conv_general_dilated's lhs for a cuBLAS GEMM.
KernelPlan gen_im2col(const Types& in, const Attrs& attrs);

}  // namespace xjax::cuda
