// The CPU's kernel registry: per op, the function that computes it over whole arrays. The plan's
// kernel steps are lowered to these once (cpu/lowering.cpp); constant folding and the reference
// interpreter reach them through compiler/backend.h.
#pragma once
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

// Fills the (preallocated, correctly shaped) outputs from the inputs.
using CpuKernel = void (*)(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs);

// The op's CPU kernel, or null when it has none.
CpuKernel cpu_kernel(OpId op);

// Registration, one function per op family (each in its own file).
struct CpuKernelTable {
  void set_cpu(OpId op, CpuKernel k);
};
void register_elementwise_cpu(CpuKernelTable&);
void register_reduction_cpu(CpuKernelTable&);
void register_layout_cpu(CpuKernelTable&);
void register_index_cpu(CpuKernelTable&);
void register_contraction_cpu(CpuKernelTable&);
void register_convolution_cpu(CpuKernelTable&);
void register_window_cpu(CpuKernelTable&);
void register_sort_cpu(CpuKernelTable&);
void register_linalg_cpu(CpuKernelTable&);
void register_fft_cpu(CpuKernelTable&);
void register_collective_cpu(CpuKernelTable&);  // all_reduce over MPI (src/core/distributed)

}  // namespace xjax
